/**
 * How a start-up stage's failure reads, for every framework: a deadline missed, or a verdict
 * reached while the stage started, each naming the stage and what it waited for.
 */
import type { RunProcess } from '../../../core/files/home.js';
import type { Verdict } from '../seams/framework.js';

export function stageTimedOut(stage: RunProcess, goal: string, timeoutS: number): Verdict {
  return {
    status: 'failed',
    error: `Start-up stage '${stage}' timed out after ${timeoutS} s (${goal}). The ${stage} log tail shows where it got to; the deadline is set by RL_${stage.toUpperCase()}_READY_TIMEOUT_SECONDS.`,
    error_process: stage,
  };
}

/** A failure during start-up names the stage it happened in. */
export function atStage(stage: RunProcess, goal: string, verdict: Verdict): Verdict {
  return verdict.status === 'failed' ? { ...verdict, error: `Start-up failed at stage '${stage}' (${goal}): ${verdict.error}` } : verdict;
}
