/**
 * How a tinker-cookbook run starts: one process, `RL_PYTHON -m tinker_cookbook.recipes.<recipe>.train
 * key=value ...` (chz's argv), in the run's own directory, with log_path inside it and
 * behavior_if_log_dir_exists=resume always (the default `ask` blocks on stdin whenever the
 * directory exists, which a resume needs). The config.yaml beside it records what the run trains
 * with, in the same `env`/`tinker` sections an Atropos run's has, so comparisons read both alike.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../../core/errors.js';
import { RUN_FILES } from '../../../core/files/home.js';
import type { JsonValue } from '../../../core/json.js';
import { yaml } from '../../../core/onDemand.js';
import type { Settings } from '../../../core/settings.js';
import { cookbookLockedValues } from '../../config/cookbookFields.js';
import { estimateRun, type RunEstimate, type RunShape } from '../../cost/estimate.js';
import { lengthsFor } from '../../cost/lengthStore.js';
import { RL_HOME, TINKER_API_KEY } from '../../setup/hostRequirements.js';
import { BASE_MODEL } from '../../setup/modelRequirements.js';
import { COOKBOOK_RECIPE } from '../../setup/cookbookRequirements.js';
import type { Requirement } from '../../setup/requirement.js';
import { startContext } from '../../setup/requirements.js';
import type { DatasetBatches } from '../../environments/report.js';
import type { Preflight, RunPlan, RunSelection, StartRequest } from '../seams/framework.js';
import { recommendedRenderers, refuseMismatchedRenderer } from './renderer.js';
import type { RunNames } from '../seams/record.js';

/** The recipes' own defaults, for a config that leaves a field of the shape unset. */
const DEFAULTS = { group_size: 4, groups_per_batch: 100, max_tokens: 512, max_steps: 100 } as const;

/** What a JSON value is as Python source: chz reads dict, list and Any fields as Python literals. */
export function pythonLiteral(value: JsonValue): string {
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number' || typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(pythonLiteral).join(', ')}]`;
  return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${pythonLiteral(v)}`).join(', ')}}`;
}

/** One `key=value` of chz's argv: text as it is, numbers and booleans as Python spells them, containers as literals. */
export function chzArgument(name: string, value: JsonValue): string {
  // verifiers_rl json.loads vf_env_args: JSON text, not a Python literal.
  if (name === 'vf_env_args') return `${name}=${typeof value === 'string' ? value : JSON.stringify(value)}`;
  if (typeof value === 'string') return `${name}=${value}`;
  if (typeof value === 'number') return `${name}=${String(value)}`;
  return `${name}=${pythonLiteral(value)}`;
}

/** The values a run passes: the selection's set ones, then the operator's locks, then what the server sets. */
export function recipeValues(settings: Settings, selection: RunSelection, logDir: string): Record<string, JsonValue> {
  const values: Record<string, JsonValue> = {};
  for (const [name, value] of Object.entries(selection.values)) if (value !== null) values[name] = value;
  Object.assign(values, cookbookLockedValues(settings));
  if (selection.environment.vf_env_id !== undefined) values.vf_env_id = selection.environment.vf_env_id;
  return { ...values, log_path: logDir, behavior_if_log_dir_exists: 'resume' };
}

export function recipeCommand(settings: Settings, recipe: string, values: Record<string, JsonValue>): string[] {
  return [settings.python, '-m', `tinker_cookbook.recipes.${recipe}.train`, ...Object.entries(values).map(([name, value]) => chzArgument(name, value))];
}

const positive = (v: JsonValue | undefined): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined);

/** The values a run of `selection` trains with: the selection's, then the operator's locks. */
const runValues = (settings: Settings, selection: RunSelection): Record<string, JsonValue> => ({ ...selection.values, ...cookbookLockedValues(settings) });

/** The base model a run trains: the recipe's model_name (its default, an edit or the operator's lock). */
const modelOf = (values: Record<string, JsonValue>): string | undefined => (typeof values.model_name === 'string' && values.model_name !== '' ? values.model_name : undefined);

/**
 * The prompt a cookbook estimate's high bound assumes while no inference test measured the
 * environment: a stated guess, not a bound (a recipe renders its own prompts, and nothing drops
 * long ones); once the run's first batch is logged, spend counts its real tokens instead.
 */
export const UNMEASURED_PROMPT_TOKENS = 1024;

/** The steps a run trains: min(max_steps, the batches its dataset holds) where the recipe's source tells them, with what that rests on. */
export function stepsOf(values: Record<string, JsonValue>, datasets: readonly DatasetBatches[] = []): { steps: number; fact?: string; unknown?: string } {
  const maxSteps = positive(values.max_steps);
  const dataset = datasets.find((d) => values[d.field] === d.value);
  if (dataset !== undefined) {
    const steps = maxSteps === undefined ? dataset.batches : Math.min(maxSteps, dataset.batches);
    const held = `the ${dataset.batches} batches its dataset holds (${dataset.field}=${dataset.value}, from the recipe's source)`;
    return { steps, fact: `steps: ${steps}, ${maxSteps === undefined ? held : `min(max_steps ${maxSteps}, ${held})`}, as the recipe logs "Will train on ${steps} batches"` };
  }
  if (maxSteps !== undefined) return { steps: maxSteps, unknown: `steps: max_steps ${maxSteps} is an upper bound: the recipe trains min(max_steps, the batches its dataset holds), and the dataset's size is not known before the run` };
  return { steps: DEFAULTS.max_steps, unknown: `steps: max_steps is unset and the dataset's size is not known before the run (the recipe trains all of it): ${DEFAULTS.max_steps} steps are assumed` };
}

export function estimateCookbook(settings: Settings, selection: RunSelection): RunEstimate {
  const values = runValues(settings, selection);
  const unknown: string[] = [];
  const value = (field: 'group_size' | 'groups_per_batch' | 'max_tokens'): number => {
    const v = positive(values[field]);
    if (v !== undefined) return v;
    unknown.push(`${field} is not set: ${DEFAULTS[field]} is assumed`);
    return DEFAULTS[field];
  };
  const groupSize = value('group_size');
  const model = modelOf(values) ?? 'unknown';
  const steps = stepsOf(values, selection.environment.dataset_batches);
  if (steps.unknown !== undefined) unknown.push(steps.unknown);
  const maxTokens = value('max_tokens');
  const shape: RunShape = { model, total_steps: steps.steps, batch_size: value('groups_per_batch') * groupSize, group_size: groupSize, max_token_length: maxTokens };
  // Each trajectory samples on its own (num_samples=1), so every sequence's prompt is prefilled.
  const bounds = {
    prefillsPerGroup: groupSize,
    unmeasuredPrompt: {
      tokens: UNMEASURED_PROMPT_TOKENS,
      basis: `prompts assumed at ${UNMEASURED_PROMPT_TOKENS} tokens (no inference test measured this environment; a cookbook run sends whole prompts, none is dropped), every completion at max_tokens ${maxTokens}, trained whole`,
    },
  };
  const estimate = estimateRun(shape, settings.cost.prices[model], lengthsFor(settings.home, selection.environment.name, model), unknown, bounds);
  return steps.fact === undefined ? estimate : { ...estimate, assumptions: [steps.fact, ...estimate.assumptions] };
}

/** Values that would leave the recipe with no rollout to train on. */
function refuseStallingConfig(values: Record<string, JsonValue>): void {
  for (const field of ['group_size', 'groups_per_batch'] as const) {
    const v = values[field];
    if (typeof v === 'number' && v <= 0) throw new UserError(`${field} is ${v}: a batch would hold no rollout. Set it with rl_edit_config('${field}', ${DEFAULTS[field]}).`, { field, value: v });
  }
}

/** The requirements a cookbook start checks, in order: the Tinker key, a recipe that can train, the base model on Tinker's live list, a writable RL_HOME. */
const START_REQUIREMENTS: readonly Requirement[] = [TINKER_API_KEY, COOKBOOK_RECIPE, BASE_MODEL, RL_HOME];

export async function preflightCookbook(request: StartRequest & { othersActive: boolean }): Promise<Preflight> {
  const { settings, selection, signal } = request;
  const values = runValues(settings, selection);
  refuseStallingConfig(values);
  const model = modelOf(values);
  const { recipe } = selection.environment;
  const ctx = { ...startContext(settings, { file: selection.environment.file_path, values, ...(model !== undefined ? { model } : {}), ...(recipe !== undefined ? { recipe } : {}) }, signal), useWandb: false };
  for (const requirement of START_REQUIREMENTS) {
    if (!requirement.atStart) continue;
    const outcome = await requirement.evaluate(ctx);
    if (!outcome.ok) throw new UserError(outcome.message, outcome.hints);
  }
  const { file_path } = selection.environment;
  if (recipe === undefined || !existsSync(file_path)) {
    throw new UserError(`The cookbook environment '${selection.environment.name}' is not installed any more (${file_path} is gone). rl_list_environments lists what RL_PYTHON has now; select again.`, { file_path });
  }
  if (model !== undefined && typeof values.renderer_name === 'string') refuseMismatchedRenderer(model, values.renderer_name, await recommendedRenderers(settings, model));
  return { executables: {} };
}

export async function planCookbook(request: StartRequest & { preflight: Preflight }): Promise<RunPlan> {
  const { settings, selection, runId, runDir } = request;
  const logDir = join(runDir, RUN_FILES.cookbookLogDir);
  const values = recipeValues(settings, selection, logDir);
  const configPath = join(runDir, RUN_FILES.config);
  const runName = `${selection.environment.name}-${runId}`;
  // metrics.jsonl is the record of a cookbook run: W&B is left off (the recipe's W&B run names no group to find it by).
  const names: RunNames = { wandb_project: selection.wandbProject, wandb_group: runId, wandb_run_name: runName, trainer_wandb_run_name: runName, wandb_run_suffix: '', wandb_name: runName, use_wandb: false };
  const { log_path: _log, behavior_if_log_dir_exists: _behavior, ...shown } = values;
  return {
    names,
    // One process that serves nothing: no port of its own.
    ports: { api: 0, inference: 0 },
    configPath,
    commands: { trainer: recipeCommand(settings, selection.environment.recipe!, values) },
    cwds: { trainer: runDir },
    shownConfig: shown,
    estimate: estimateCookbook(settings, selection),
    write: (redactor) => {
      const doc = { cookbook: { recipe: selection.environment.recipe!, ...(selection.environment.vf_env_id !== undefined ? { vf_env_id: selection.environment.vf_env_id } : {}), log_path: logDir }, env: shown, tinker: { wandb_run_name: runName } };
      const text = `# rl-training-mcp run ${runId}: the tinker-cookbook recipe's arguments (its own record is under log_path). No secrets.\n${yaml().stringify(doc)}`;
      if (redactor.redact(text) !== text) throw new UserError('The run config would contain a secret (a value equals an API key); keys reach the recipe through its environment only.');
      writeFileSync(configPath, text, { mode: 0o644 });
    },
  };
}
