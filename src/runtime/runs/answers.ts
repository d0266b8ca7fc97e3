/** What the run tools answer about a run: the shapes RunManager returns and the tools put on the wire. */
import type { RunRecord, RunStatus } from './seams/record.js';
import type { JsonValue } from '../../core/json.js';
import type { RunView } from './view.js';
import { type Health } from './watching/health.js';
import type { RunEstimate } from '../cost/estimate.js';
import type { RunCost } from './watching/runCost.js';

export interface RateLimitedStatus {
  rate_limited: true;
  run_id: string;
  message: string;
  next_check_in_seconds: number;
  status: RunStatus;
  phase?: string;
  /** Judged from run.json alone: a stall is never hidden by the rate limit. */
  health: Health;
  /** Trainer steps completed out of the total, as the watchdog last saw them. */
  progress?: { step: number; total_steps: number };
  /** Spend so far, estimated from run.json alone. */
  cost?: RunCost;
}

export interface DamagedStatus {
  run_id: string;
  status: 'unknown';
  error: string;
}

export type StatusAnswer = RunView | RateLimitedStatus | DamagedStatus;

/** A status answer; `record` (what the full view was built from) only with the full view. */
export type StatusReport = { answer: RateLimitedStatus | DamagedStatus; record?: undefined } | { answer: RunView; record: RunRecord };

export interface StopAnswer {
  message: string;
  run_id: string;
  status: RunStatus;
}

/** rl_stop_training's answer once the stop was asked for and waited on: `status` is the run's now. */
export function stopAnswer(runId: string, status: RunStatus, graceSeconds: number): StopAnswer {
  if (status === 'stopped') return { message: `Stopped training run '${runId}'`, run_id: runId, status };
  if (status === 'stopping' || status === 'starting' || status === 'running') {
    return {
      message: `Stopping training run '${runId}': processes that ignore SIGTERM are killed after ${graceSeconds} s each. Check with rl_check_status('${runId}').`,
      run_id: runId,
      status,
    };
  }
  return { message: `Run '${runId}' ended (status: ${status}) before the stop took effect`, run_id: runId, status };
}

export interface StartedRun {
  record: RunRecord;
  /** The config values the run trains with (its framework's: an Atropos run's env section). */
  config: Record<string, JsonValue>;
  /** What the run will cost, as estimated at its start. */
  estimate: RunEstimate;
  /** A Slurm run's job script, as submitted (or, for a dry run, as it would be). */
  script?: string;
}
