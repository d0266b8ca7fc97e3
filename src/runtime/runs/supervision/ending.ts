/**
 * How a run's ending is written, whichever path ends it (a user's stop, a budget, a stall, a
 * server exit, or the run ending by itself): a run that is stopped reads `stopping` while it still
 * trains and takes its final status only once its processes are gone, with what they logged until
 * then. Pure changes of the record, tested as a table; the supervisor applies them under the
 * record's write lock.
 */
import type { Verdict } from '../seams/framework.js';
import type { RunObservations, RunRecord } from '../seams/record.js';

/**
 * Whether the run still trains: its trainer lives. A run whose trainer ended (it completed, or it
 * or the API failed) ended by itself; what is left of it (an API, an environment) is cleaned up.
 */
export const stillTraining = (r: RunRecord): boolean => r.processes.trainer?.state === 'running';

/**
 * An outcome was decided: written at once with its error. A run that ended by itself takes it as
 * its status at once; one that still trains (a budget or a stall stops it) reads `stopping`, the
 * outcome kept for when its processes are gone.
 */
export function recordOutcome(r: RunRecord, verdict: Verdict, found: { error?: string; cause?: string }, at: string): void {
  if (stillTraining(r)) {
    r.status = 'stopping';
    r.phase = 'stopping';
    r.outcome = verdict.status;
  } else {
    r.status = verdict.status;
    r.phase = 'done';
    r.ended_at = at;
  }
  r.phase_started_at = at;
  if (found.error !== undefined) r.error = found.error;
  if (found.cause !== undefined) r.error_cause = found.cause;
  if (verdict.error_process !== undefined) r.error_process = verdict.error_process;
}

/** A stop begins (a user, another server, a server exit): `stopping`, unless an outcome already ended it. */
export function recordStopping(r: RunRecord, at: string): void {
  if (r.status !== 'stopping') r.phase_started_at = at;
  r.status = 'stopping';
  r.phase = 'stopping';
  r.stop_requested_at ??= at;
}

/**
 * The processes are gone: the outcome kept while they were stopped becomes the status (`stopped`
 * when none was decided), with the observations of everything they logged. An ended record (a
 * run ended before this rule, with leftovers) keeps its status.
 */
export function recordEnded(r: RunRecord, at: string, observed: RunObservations | undefined): void {
  if (observed !== undefined) r.observed = observed;
  if (r.status !== 'stopping') return;
  r.status = r.outcome ?? 'stopped';
  delete r.outcome;
  r.phase = 'done';
  r.phase_started_at = r.ended_at = at;
}
