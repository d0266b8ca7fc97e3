/**
 * rl_evaluate: a run's checkpoints against its base model, built from what the run left on disk
 * (record, trainer log, config.yaml) and the environment's source, then handed to the
 * evaluations service. A running run is evaluated on the checkpoints it has saved so far; the
 * evaluation talks only to Tinker's endpoint, never to the run's API or trainer.
 */
import { readFile } from 'node:fs/promises';
import { UserError } from '../../core/errors.js';
import type { JsonValue } from '../../core/json.js';
import { type Checkpoint, chooseCheckpoints, savedCheckpoints, type CheckpointRequest } from '../evaluation/checkpoints.js';
import type { EvaluationRequest } from '../evaluation/registry.js';
import type { TrainingSummary } from '../runs/seams/framework.js';
import type { EvalMethod } from '../evaluation/evalCommand.js';
import type { EvaluationOutput } from '../evaluation/evaluation.js';
import type { ModelSpec } from '../evaluation/modelRun.js';
import { serverEntriesNeeded } from '../environments/tinkerReadiness.js';
import type { WaitOptions } from '../jobs/wait.js';
import { readRunConfigFile, type RunConfigSections } from '../runs/registry/configFile.js';
import { type FrameworkName, isDamaged, isEnded, type RunRecord } from '../runs/seams/record.js';
import { RunFiles } from '../runs/registry/runFiles.js';
import { frameworkOf } from '../runs/choice/frameworks.js';
import type { Runtime } from './runtime.js';
import { recipePlan } from './evaluateRecipe.js';

export interface EvaluateArgs {
  run_id?: string;
  checkpoints?: CheckpointRequest;
  baseline: boolean;
  method: 'auto' | EvalMethod;
  num_items: number;
  group_size: number;
  timeout_seconds: number;
}

/** An environment that logs a held-out evaluation calls atroposlib's evaluate_log from its evaluate(). */
const HELD_OUT_EVAL = /\.evaluate_log\s*\(/;

function runToEvaluate(runtime: Runtime, runId: string | undefined): RunRecord {
  const id = runId ?? runtime.runs.list().find((e) => !isDamaged(e))?.run_id;
  if (id === undefined) throw new UserError('There is no run to evaluate: start one with rl_start_training, or name one with run_id.');
  const entry = runtime.runs.get(id);
  if (isDamaged(entry)) throw new UserError(`Run '${id}' has a damaged record (${entry.damaged}): its checkpoints cannot be read.`, { run_id: id });
  return entry;
}

export interface MethodChoice {
  method: EvalMethod;
  reason: string;
  /** `evaluate` chosen from the source may still write no metrics: then `process` is used. */
  mayFallBack: boolean;
}

/** The method an evaluation uses: the one asked for, else what the environment's source shows. */
export function methodFor(requested: EvaluateArgs['method'], source: string): MethodChoice {
  if (requested !== 'auto') return { method: requested, reason: `method "${requested}" was asked for`, mayFallBack: false };
  if (HELD_OUT_EVAL.test(source)) {
    return { method: 'evaluate', reason: "the environment defines a held-out evaluation (its evaluate() logs with evaluate_log): atroposlib's evaluate subcommand runs it for each model", mayFallBack: true };
  }
  return { method: 'process', reason: 'the environment defines no held-out evaluation (no evaluate_log in its source): scored process rollouts of its training items are compared', mayFallBack: true };
}

async function chooseMethod(requested: EvaluateArgs['method'], envFile: string): Promise<MethodChoice> {
  return methodFor(requested, requested === 'auto' ? await readFile(envFile, 'utf8').catch(() => '') : '');
}

function modelSpecs(baseModel: string, baseline: boolean, checkpoints: { step: number; path: string }[]): ModelSpec[] {
  const specs: ModelSpec[] = baseline ? [{ label: 'base', model: baseModel, role: 'baseline', stem: '0-base' }] : [];
  return [...specs, ...checkpoints.map((c, i): ModelSpec => ({ label: `step_${c.step}`, model: c.path, role: 'checkpoint', step: c.step, stem: `${i + 1}-step_${c.step}` }))];
}

/** How a run of each framework is evaluated: its base model, the method, and what the method needs. */
export interface EvaluationPlan {
  baseModel: string;
  method: MethodChoice;
  serverEntries: 1 | 2;
  verifiers?: EvaluationRequest['verifiers'];
  recipe?: EvaluationRequest['recipe'];
  /** What the caller should know before anything is spent. */
  note?: string;
}

export type Planner = (runtime: Runtime, run: RunRecord, config: RunConfigSections, requested: EvaluateArgs['method'], groupSize: number) => Promise<EvaluationPlan>;

const atroposPlan: Planner = async (runtime, run, config, requested) => {
  if (requested === 'vf_eval' || requested === 'recipe') throw new UserError(`Run '${run.run_id}' is an Atropos run: method ${requested} is for cookbook runs; use auto, evaluate or process.`, { run_id: run.run_id });
  // tinker-atropos trains the model named by env.tokenizer_name (its config's base_model).
  const tokenizer = config.env.tokenizer_name;
  const baseModel = typeof tokenizer === 'string' && tokenizer !== '' ? tokenizer : String(runtime.settings.locked.openai.model_name);
  const shape = await runtime.environments.resolve(run.environment).then((e) => e.server_configs, () => 'list' as const);
  return { baseModel, method: await chooseMethod(requested, run.environment_file), serverEntries: serverEntriesNeeded(shape) };
};

/** verifiers' own eval, not the cookbook's verifiers_rl.evaluate: see VF_EVAL_REASON. */
const VF_EVAL_REASON =
  "a cookbook run of a verifiers environment: verifiers' own eval (python -m verifiers.scripts.eval, vf-eval) samples each model through Tinker's " +
  'OpenAI-compatible endpoint and saves every rollout\'s reward (results.jsonl), so all models are scored on the same examples with intervals; the ' +
  "cookbook's verifiers_rl.evaluate samples through the SDK and saves no per-example scores";

const cookbookPlan: Planner = async (runtime, run, config, requested, groupSize) => {
  const vfEnvId = config.cookbook?.vf_env_id;
  if (typeof vfEnvId !== 'string') return recipePlan(runtime, run, config, requested, groupSize);
  if (requested !== 'auto' && requested !== 'vf_eval') throw new UserError(`Run '${run.run_id}' is a cookbook run of a verifiers environment: use method auto or vf_eval (${requested} is not for it).`, { run_id: run.run_id });
  const envArgs = config.env.vf_env_args;
  const maxTokens = config.env.max_tokens;
  return {
    baseModel: String(config.env.model_name),
    method: { method: 'vf_eval', reason: requested === 'vf_eval' ? 'method "vf_eval" was asked for' : VF_EVAL_REASON, mayFallBack: false },
    serverEntries: 1,
    verifiers: {
      vf_env_id: vfEnvId,
      ...(envArgs !== null && typeof envArgs === 'object' && !Array.isArray(envArgs) ? { env_args: envArgs } : {}),
      ...(typeof maxTokens === 'number' ? { max_tokens: maxTokens } : {}),
    },
  };
};

const PLANNERS: Record<FrameworkName, Planner> = { atropos: atroposPlan, cookbook: cookbookPlan };

/** Checkpoints by the step they stand for: from the summary when it says, else from Atropos's `step_N` paths. */
function checkpointsOf(trainer: TrainingSummary): Checkpoint[] {
  if (trainer.saved === undefined) return savedCheckpoints(trainer.checkpoints);
  return [...new Map(trainer.saved.map((c) => [c.step, c])).values()].sort((a, b) => a.step - b.step);
}

export async function evaluateRun(runtime: Runtime, args: EvaluateArgs, wait: WaitOptions): Promise<EvaluationOutput> {
  const run = runToEvaluate(runtime, args.run_id);
  const trainer = await frameworkOf(run).readSummary(run);
  const state = { status: run.status, ended: isEnded(run.status), ...(run.ended_at ? { ended_at: run.ended_at } : {}), ...(run.error ? { error: run.error } : {}) };
  const { chosen, note } = chooseCheckpoints(checkpointsOf(trainer), args.checkpoints ?? 'latest', state);
  const read = await readRunConfigFile(new RunFiles(runtime.settings.home), run.run_id);
  if ('config_error' in read) throw new UserError(`Run '${run.run_id}' cannot be evaluated: its ${read.config_error}.`, { run_id: run.run_id });
  const plan = await PLANNERS[run.framework](runtime, run, read.config, args.method, args.group_size);
  const notes = [note, plan.note].filter((n) => n !== undefined).join(' ');
  const envConfig: Record<string, JsonValue> = read.config.env;
  return runtime.evaluations.start(
    {
      run_id: run.run_id,
      environment: run.environment,
      method: plan.method.method,
      method_reason: plan.method.reason,
      method_may_fall_back: plan.method.mayFallBack,
      models: modelSpecs(plan.baseModel, args.baseline, chosen),
      pricedAs: plan.baseModel,
      run_at_start: { status: run.status, steps_completed: trainer.steps_completed },
      ...(notes ? { note: notes } : {}),
      envFile: run.environment_file,
      envConfig,
      serverEntries: plan.serverEntries,
      numItems: args.num_items,
      groupSize: args.group_size,
      timeoutSeconds: args.timeout_seconds,
      ...(plan.verifiers ? { verifiers: plan.verifiers } : {}),
      ...(plan.recipe ? { recipe: plan.recipe } : {}),
    },
    wait,
  );
}
