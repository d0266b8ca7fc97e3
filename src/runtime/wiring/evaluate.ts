/**
 * rl_evaluate: a run's checkpoints against its base model, built from what the run left on disk
 * (record, trainer log, config.yaml) and the environment's source, then handed to the
 * evaluations service. A running run is evaluated on the checkpoints it has saved so far; the
 * evaluation talks only to Tinker's endpoint, never to the run's API or trainer.
 */
import { readFile } from 'node:fs/promises';
import { UserError } from '../../core/errors.js';
import type { JsonValue } from '../../core/json.js';
import { chooseCheckpoints, savedCheckpoints, type CheckpointRequest } from '../evaluation/checkpoints.js';
import type { EvalMethod } from '../evaluation/evalCommand.js';
import type { EvaluationOutput } from '../evaluation/evaluation.js';
import type { ModelSpec } from '../evaluation/modelRun.js';
import { serverEntriesNeeded } from '../environments/tinkerReadiness.js';
import type { WaitOptions } from '../inference/jobWait.js';
import { readRunConfigFile } from '../runs/registry/configFile.js';
import { isDamaged, type RunRecord } from '../runs/registry/record.js';
import { RunFiles } from '../runs/registry/runFiles.js';
import { frameworkOf } from '../runs/frameworks.js';
import type { Runtime } from './runtime.js';

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

export async function evaluateRun(runtime: Runtime, args: EvaluateArgs, wait: WaitOptions): Promise<EvaluationOutput> {
  const run = runToEvaluate(runtime, args.run_id);
  const trainer = await frameworkOf(run).readSummary(run);
  const { chosen, note } = chooseCheckpoints(savedCheckpoints(trainer.checkpoints), args.checkpoints ?? 'latest');
  const read = await readRunConfigFile(new RunFiles(runtime.settings.home), run.run_id);
  if ('config_error' in read) throw new UserError(`Run '${run.run_id}' cannot be evaluated: its ${read.config_error}.`, { run_id: run.run_id });
  const envConfig: Record<string, JsonValue> = read.config.env;
  // tinker-atropos trains the model named by env.tokenizer_name (its config's base_model).
  const tokenizer = envConfig.tokenizer_name;
  const baseModel = typeof tokenizer === 'string' && tokenizer !== '' ? tokenizer : String(runtime.settings.locked.openai.model_name);
  const shape = await runtime.environments.resolve(run.environment).then((e) => e.server_configs, () => 'list' as const);
  const method = await chooseMethod(args.method, run.environment_file);
  return runtime.evaluations.start(
    {
      run_id: run.run_id,
      environment: run.environment,
      method: method.method,
      method_reason: method.reason,
      method_may_fall_back: method.mayFallBack,
      models: modelSpecs(baseModel, args.baseline, chosen),
      run_at_start: { status: run.status, steps_completed: trainer.steps_completed },
      ...(note ? { note } : {}),
      envFile: run.environment_file,
      envConfig,
      serverEntries: serverEntriesNeeded(shape),
      numItems: args.num_items,
      groupSize: args.group_size,
      timeoutSeconds: args.timeout_seconds,
    },
    wait,
  );
}
