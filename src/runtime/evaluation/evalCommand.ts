/**
 * The command of one model of an evaluation: `<env file> evaluate` (the environment's own
 * held-out evaluation) or `<env file> process` (scored rollouts of its training items), with a
 * private 0600 `--config` holding the run's env section and the `openai:` entries, key included.
 *
 * `evaluate` dumps its resolved config, api_key included, to `evaluate_config.yaml` in
 * data_dir_to_save_evals, so that directory lives beside the key file, outside RL_HOME; only
 * `metrics.json` and `samples.jsonl` are copied into the evaluation's directory, redacted.
 */
import { dirname, join } from 'node:path';
import { PYTHON_HELPERS_DIR } from '../../core/files/paths.js';
import type { JsonValue } from '../../core/json.js';
import type { Settings } from '../../core/settings.js';
import { endpointEntry, flag, type KeyConfig } from '../inference/command.js';

/**
 * atroposlib's `evaluate` and `process` subcommands; verifiers' own eval (vfEval.ts) for a verifiers
 * environment; `recipe`: a cookbook recipe's own environments (python/cookbook_eval.py).
 */
export const EVAL_METHODS = ['evaluate', 'process', 'vf_eval', 'recipe'] as const;
export type EvalMethod = (typeof EVAL_METHODS)[number];

export interface EvalCommandOptions {
  method: EvalMethod;
  envFile: string;
  /** The run's env section (its config.yaml): the environment is judged as it was trained. */
  envConfig: Record<string, JsonValue>;
  baseUrl: string;
  modelId: string;
  /** `openai:` entries the environment needs (2 when its config_init does not return a list). */
  serverEntries: 1 | 2;
  /** A name unique within the evaluation, for the private files. */
  stem: string;
  /** process: items (groups) and completions per item; the groups' JSONL. */
  numItems: number;
  groupSize: number;
  groupsFile: string;
}

export interface EvalCommand {
  file: string;
  args: string[];
  /** evaluate: where the environment writes metrics.json and samples.jsonl (private). */
  evalDir?: string;
}

/** The env fields a command sets itself; the run's values for them do not apply to an evaluation. */
const OWN_FIELDS = new Set(['use_wandb', 'total_steps', 'group_size', 'data_path_to_save_groups', 'data_dir_to_save_evals', 'include_messages', 'ensure_scores_are_not_same']);

export async function evalCommand(settings: Settings, keyConfig: KeyConfig, opts: EvalCommandOptions): Promise<EvalCommand> {
  const privateDir = dirname(keyConfig.path);
  const entry = endpointEntry({ baseUrl: opts.baseUrl, modelId: opts.modelId, serverType: 'openai' });
  const env = Object.fromEntries(Object.entries(opts.envConfig).filter(([k]) => !OWN_FIELDS.has(k)));
  const configFile = await keyConfig.configFile(`${opts.stem}.eval`, { env, openai: Array.from({ length: opts.serverEntries }, () => ({ ...entry })) });
  const args = [opts.envFile, opts.method, '--config', configFile, ...flag('env.use_wandb', false)];
  if (opts.method === 'evaluate') {
    const evalDir = join(privateDir, `${opts.stem}.evals`);
    args.push(...flag('env.data_dir_to_save_evals', evalDir));
    return { file: settings.python, args, evalDir };
  }
  // Messages are what a reader of the rollouts needs; equal-score groups are kept (every item counts).
  args.push(...flag('env.total_steps', opts.numItems), ...flag('env.group_size', opts.groupSize));
  args.push(...flag('env.include_messages', true), ...flag('env.ensure_scores_are_not_same', false), ...flag('env.data_path_to_save_groups', opts.groupsFile));
  return { file: settings.python, args };
}

/** A cookbook recipe run (method `recipe`): the recipe and its run's chz argv. */
export interface RecipeEval {
  recipe: string;
  argv: string[];
}

/** The files one model of a `recipe` evaluation writes, relative to the evaluation's directory. */
export const recipeFiles = (stem: string) => ({ groups: `${stem}.groups.jsonl`, wire: `${stem}.wire.jsonl`, summary: `${stem}.summary.json` });

/** python/cookbook_eval.py for one model: its Config from the recipe's argv, its items, its envs' rewards. */
export function recipeEvalCommand(settings: Settings, dir: string, o: RecipeEval & { model: string; stem: string; numItems: number }): EvalCommand {
  const files = recipeFiles(o.stem);
  const args = [join(PYTHON_HELPERS_DIR, 'cookbook_eval.py'), '--recipe', o.recipe, '--model', o.model, '--num-items', String(o.numItems)];
  args.push('--groups', join(dir, files.groups), '--wire', join(dir, files.wire), '--summary', join(dir, files.summary), '--', ...o.argv);
  return { file: settings.python, args };
}
