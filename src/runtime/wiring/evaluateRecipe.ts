/**
 * rl_evaluate of a tinker-cookbook recipe run (method `recipe`): each model sampled on Tinker over
 * the recipe's own environments (python/cookbook_eval.py), built from the run's recipe arguments as
 * its train.py builds them. Refused before anything is sampled when the recipe's environments need
 * a service this server cannot give them, or imports RL_PYTHON lacks.
 */
import { readFile } from 'node:fs/promises';
import { UserError } from '../../core/errors.js';
import type { JsonValue } from '../../core/json.js';
import { chzArgument } from '../runs/cookbook/start.js';
import { cookbookFile } from '../runs/cookbook/files.js';
import { loggedTestMetrics } from '../runs/cookbook/testMetrics.js';
import type { EvalMethod } from '../evaluation/evalCommand.js';
import type { EvaluationRequest } from '../evaluation/registry.js';
import type { RunConfigSections } from '../runs/registry/configFile.js';
import type { RunRecord } from '../runs/seams/record.js';
import type { Runtime } from './runtime.js';

/** How a recipe run is evaluated (evaluate.ts's plan, for a recipe). */
export interface RecipePlan {
  baseModel: string;
  method: { method: 'recipe'; reason: string; mayFallBack: false };
  serverEntries: 1;
  recipe: NonNullable<EvaluationRequest['recipe']>;
  note?: string;
}

/**
 * Recipes whose environments run on a service of their own (upstream's source): a run of them
 * can only be judged where that service is, which an evaluation from this server is not.
 */
const NEEDS_SERVICE: Record<string, string> = {
  code_rl: "its environments grade code in a sandbox (SandboxFusion or Modal, code_rl's sandbox_config)",
  harbor_rl: 'its environments are tasks run in Modal sandboxes (harbor_env.py)',
  search_tool: 'its environments search a Chroma vector index with Gemini embeddings (search_env.py, tools.py)',
};

const RECIPE_REASON =
  "a cookbook recipe: each model is sampled on Tinker (a sampling client of the base model, or of the checkpoint's tinker:// sampler path) by the recipe's own TinkerTokenCompleter with its max_tokens, over the same items, and scored by its environments' own rewards (env.step), as its test-set evaluator (rl/metric_util.py) does";

/** The chz argv the run was started with (its config.yaml env section), group_size set to the evaluation's. */
function recipeArgv(env: Record<string, JsonValue>, logPath: string, groupSize: number): string[] {
  const values: Record<string, JsonValue> = { ...env, group_size: groupSize, log_path: logPath, behavior_if_log_dir_exists: 'resume' };
  return Object.entries(values).map(([name, value]) => chzArgument(name, value));
}

async function baseModelOf(run: RunRecord, env: Record<string, JsonValue>): Promise<string | undefined> {
  const logged = await readFile(cookbookFile(run, 'config'), 'utf8').then((t) => (JSON.parse(t) as { model_name?: unknown }).model_name, () => undefined);
  if (typeof logged === 'string' && logged !== '') return logged;
  return typeof env.model_name === 'string' && env.model_name !== '' ? env.model_name : undefined;
}

export async function recipePlan(runtime: Runtime, run: RunRecord, config: RunConfigSections, requested: 'auto' | EvalMethod, groupSize: number): Promise<RecipePlan> {
  const recipe = String(config.cookbook?.recipe ?? run.environment);
  const refuse = (why: string, hints: Record<string, JsonValue> = {}): never => {
    throw new UserError(`Run '${run.run_id}' trains the cookbook recipe ${recipe}: ${why}. Nothing was sampled.`, { run_id: run.run_id, framework: 'cookbook', ...hints });
  };
  if (requested !== 'auto' && requested !== 'recipe') refuse(`method ${requested} is not for a recipe (use auto or recipe)`);
  if (NEEDS_SERVICE[recipe] !== undefined) refuse(`${NEEDS_SERVICE[recipe]}, which this server does not have, so it cannot build them to evaluate`);
  const environment = await runtime.environments.resolve(run.environment).catch(() => undefined);
  if (environment?.lacks !== undefined) refuse(`its environments import ${environment.lacks.modules.join(', ')}, which RL_PYTHON lacks, so they cannot be built`, { install: environment.lacks.install });
  const logPath = config.cookbook?.log_path;
  if (typeof logPath !== 'string') refuse('its config.yaml names no log_path');
  const baseModel = await baseModelOf(run, config.env);
  if (baseModel === undefined) refuse("neither its config.json nor its config.yaml names model_name, the base model to compare with");
  const logged = await loggedTestMetrics(run).catch(() => undefined);
  const note = logged
    ? `The run already logged its recipe's own test metrics at steps ${logged.steps[0]} and ${logged.steps[1]}: rl_get_results shows them as base against trained at no cost; this evaluation samples again (paid) for intervals and a verdict.`
    : undefined;
  return {
    baseModel: baseModel!,
    method: { method: 'recipe', reason: requested === 'recipe' ? 'method "recipe" was asked for' : RECIPE_REASON, mayFallBack: false },
    serverEntries: 1,
    recipe: { recipe, argv: recipeArgv(config.env, logPath as string, groupSize) },
    ...(note ? { note } : {}),
  };
}
