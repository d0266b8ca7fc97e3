/**
 * The two answers that join a run's own record and logs with what W&B holds for it:
 * rl_check_status (status + metrics) and rl_get_results (outcome, weights, metrics, history).
 * W&B is looked up by the run's group (= run_id); any W&B problem is a `wandb_error` beside an
 * otherwise complete answer, never a failed call. A run that does not log to W&B but records its
 * metrics itself (a cookbook run's metrics.jsonl) is answered from that record (runMetrics.ts).
 */
import { loggedTestMetrics, type LoggedTestMetrics } from '../runs/cookbook/testMetrics.js';
import { writeAtomically } from '../../core/files/atomicFile.js';
import { UserError } from '../../core/errors.js';
import { RUN_FILES, runFilePath } from '../../core/files/home.js';
import { fitRows } from '../wandb/history.js';
import type { Runtime } from './runtime.js';
import type { WandbResults, WandbStatus } from '../wandb/reader.js';
import { results, statusMetrics } from './runMetrics.js';
import type { StatusAnswer } from '../runs/answers.js';
import { isDamaged, type RunRecord, type RunStatus } from '../runs/seams/record.js';
import type { TrainingSummary } from '../runs/seams/framework.js';
import { frameworkOf } from '../runs/choice/frameworks.js';
import { runCost, type RunCost } from '../runs/watching/runCost.js';
import type { EvaluationListing } from '../evaluation/registry.js';
import { STORAGE_USD_PER_GB_MONTH } from '../tinker/checkpoints.js';

/** The JSON of the history rows an answer holds: with the rest, well under 10k tokens. */
export const MAX_ANSWER_HISTORY_CHARS = 20_000;

/** A long run saves a checkpoint per step: list the newest few, count the rest. */
const LISTED_CHECKPOINTS = 10;

export interface RunWeights {
  /** The last checkpoint the trainer actually saved: the trained weights to use. */
  latest: string | null;
  /** The newest checkpoints, oldest first. */
  checkpoints: string[];
  checkpoint_count: number;
  /** The `.../final` path the trainer prints; upstream never saves anything by that name. */
  final_reported: string | null;
}

/** What the run's checkpoints on Tinker hold and cost to keep (from their sizes), as last asked. */
export interface RunStorage {
  checkpoints: number | null;
  size_bytes: number | null;
  monthly_cost_usd: number | null;
  checked_at: string;
  note: string;
}

export interface RunOutcome {
  status: RunStatus;
  reason: string;
}

export type RunResults = {
  run_id: string;
  status: RunStatus;
  environment: string;
  wandb_project: string;
  wandb_run_name: string;
  weights: RunWeights;
  outcome: RunOutcome;
  progress?: { step: number; total_steps: number };
  cost?: RunCost;
  storage?: RunStorage;
  /** rl_evaluate's evaluations of this run, newest first. */
  evaluations?: EvaluationListing[];
  /** A cookbook recipe's own test-set metrics, first logged step against the last. */
  test_metrics?: LoggedTestMetrics;
  /** Set when `history` holds fewer rows than were sampled: the file holding them all. */
  history_file?: string;
  history_note?: string;
} & WandbResults;

function record(runtime: Runtime, runId: string): RunRecord {
  const entry = runtime.runs.get(runId);
  if (isDamaged(entry)) {
    throw new UserError(`Run '${runId}' has a damaged record (${entry.damaged}), so its results cannot be read. Its logs are still in ${runtime.settings.home}/runs/${runId}/.`, {
      run_id: runId,
      status: 'unknown',
    });
  }
  return entry;
}

function stepsTrained(trainer: TrainingSummary): number {
  // Atropos: step_0 is the untrained starting point; every later checkpoint is one trained step.
  return trainer.trained_steps ?? Math.max(0, trainer.checkpoints.length - 1);
}

export function describeOutcome(run: RunRecord, trainer: TrainingSummary): RunOutcome {
  const progress = trainer.total_steps !== undefined ? ` (${stepsTrained(trainer)}/${trainer.total_steps} steps trained)` : '';
  switch (run.status) {
    case 'completed':
      return { status: run.status, reason: `Training complete${progress}; the trained weights are ${trainer.latest ?? 'not in the trainer log'}` };
    case 'failed':
      return { status: run.status, reason: run.error ?? trainer.error_line ?? 'failed (no reason recorded)' };
    case 'stopped':
      return { status: run.status, reason: `Stopped${run.error ? ` (${run.error})` : ''}${run.ended_at ? ` at ${run.ended_at}` : ''}${progress}${trainer.latest ? `; the last checkpoint is ${trainer.latest}` : ''}` };
    default:
      return { status: run.status, reason: `Still ${run.status}${progress}: these are the results so far` };
  }
}

function weights(trainer: TrainingSummary): RunWeights {
  return {
    latest: trainer.latest,
    checkpoints: trainer.checkpoints.slice(-LISTED_CHECKPOINTS),
    checkpoint_count: trainer.checkpoints.length,
    final_reported: trainer.final_reported,
  };
}

function costOf(run: RunRecord): { cost?: RunCost } {
  const cost = runCost(run);
  return cost ? { cost } : {};
}

function storageOf(run: RunRecord): { storage?: RunStorage } {
  const usage = run.tinker;
  if (usage === undefined) return {};
  const { storage } = usage;
  const note = storage
    ? `What the run's checkpoints on Tinker hold, and cost to keep per month at $${STORAGE_USD_PER_GB_MONTH}/GB-month (from their sizes); rl_checkpoints lists them and sets a TTL on or deletes the intermediate ones.`
    : `Not known: ${usage.storage_error ?? 'the run has saved no Tinker checkpoint yet'}.`;
  return { storage: { checkpoints: storage?.checkpoints ?? null, size_bytes: storage?.size_bytes ?? null, monthly_cost_usd: storage?.monthly_cost_usd ?? null, checked_at: usage.checked_at, note } };
}

/**
 * rl_check_status: the run's status answer, with W&B metrics and what Tinker billed (asked when due)
 * on a full answer; a rate-limited one asks nothing.
 */
export async function statusWithMetrics(runtime: Runtime, runId: string, signal?: AbortSignal): Promise<StatusAnswer & Partial<WandbStatus>> {
  const { answer, record: run } = await runtime.runs.status(runId);
  if (run === undefined) return answer;
  const [fresh, wandb] = await Promise.all([runtime.runs.usage.current(run), statusMetrics(runtime.wandb, run, signal)]);
  return { ...answer, ...costOf(fresh), ...wandb };
}

/** rl_get_results: outcome, weights and W&B metrics for a run, finished or not. */
export async function runResults(runtime: Runtime, runId: string, samples: number, signal?: AbortSignal): Promise<RunResults> {
  const read = record(runtime, runId);
  const trainer = await frameworkOf(read).readSummary(read);
  const [run, evaluations, wandb, testMetrics] = await Promise.all([
    runtime.runs.usage.current(read, trainer),
    runtime.evaluations.ofRun(read.run_id),
    results(runtime.wandb, read, samples, signal),
    read.framework === 'cookbook' ? loggedTestMetrics(read).catch(() => undefined) : undefined,
  ]);
  return {
    run_id: run.run_id,
    status: run.status,
    environment: run.environment,
    wandb_project: run.wandb_project,
    wandb_run_name: run.wandb_run_name,
    ...boundedHistory(runtime, run.run_id, wandb),
    weights: weights(trainer),
    outcome: describeOutcome(run, trainer),
    ...(trainer.total_steps !== undefined ? { progress: { step: trainer.steps_completed, total_steps: trainer.total_steps } } : {}),
    ...costOf(run),
    ...storageOf(run),
    ...(evaluations.length ? { evaluations } : {}),
    ...(testMetrics ? { test_metrics: testMetrics } : {}),
  };
}

/**
 * The history as an answer holds it: every sampled row while they fit, else evenly spaced rows
 * that do, with all of them written to the run's wandb-history.json.
 */
function boundedHistory(runtime: Runtime, runId: string, wandb: WandbResults): WandbResults & Pick<RunResults, 'history_file' | 'history_note'> {
  const rows = wandb.history;
  if (rows === undefined) return wandb;
  const shown = fitRows(rows, MAX_ANSWER_HISTORY_CHARS);
  if (shown.length === rows.length) return wandb;
  const path = runFilePath(runtime.settings.home, runId, RUN_FILES.history);
  try {
    writeAtomically(path, runtime.redactor.redact(JSON.stringify({ run_id: runId, sampled_at: new Date().toISOString(), history: rows })));
  } catch (err) {
    runtime.logger.warn({ err, run_id: runId }, 'could not write the sampled W&B history');
    return { ...wandb, history: shown, history_note: `history holds ${shown.length} of ${rows.length} sampled rows, evenly spaced; the rest could not be saved (see server.log).` };
  }
  return { ...wandb, history: shown, history_file: path, history_note: `history holds ${shown.length} of ${rows.length} sampled rows, evenly spaced (first and last kept); all ${rows.length} are in history_file.` };
}
