/**
 * rl_resume_training, or a run's keeper on a transient cause (keeper/recovery.ts): a run that
 * ended `failed` or `stopped` started again, same run id and
 * directory, from the last state its framework saved (framework.ts `resumePoint`: a cookbook run
 * from checkpoints.jsonl's last state, with its optimizer; an Atropos run never). The run's one
 * change of status out of an ended one, `failed`/`stopped` -> `starting`, happens only here:
 * decided by `resumeRefusal` (a pure rule of the record), made under the start lock (the
 * concurrency limit counts it again) and the supervisor lock (no other server may be finishing
 * it), and recorded in `resumes`. Its history stays: `observed` (steps, rewards, logged tokens)
 * and `cost` carry on, so spend keeps counting from where it was.
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../core/errors.js';
import { RUN_FILES, startLockPath } from '../../core/files/home.js';
import type { Logger } from '../../core/logger.js';
import type { Settings } from '../../core/settings.js';
import { FileLock } from '../../core/os/fileLock.js';
import { THIS_HOST } from '../../core/os/host.js';
import type { ResumePoint } from './seams/framework.js';
import { frameworkOf } from './choice/frameworks.js';
import { activeOf } from './creation.js';
import { refuseAtLimit } from './placement/host.js';
import { placementOf } from './choice/placements.js';
import { emptyProcess, isActive, isDamaged, processOf, runProcesses, type RunRecord } from './seams/record.js';
import type { RunStore } from './registry/store.js';
import { budgetStop } from './watching/runCost.js';

const START_LOCK_TIMEOUT_MS = 5_000;

/** The ended statuses a run may be started again from. */
export const RESUMABLE_STATUSES = ['failed', 'stopped'] as const;

/** Why the run cannot be started again, from its record alone; undefined when it can. */
export function resumeRefusal(record: Pick<RunRecord, 'run_id' | 'status'>): string | undefined {
  if (isActive(record.status)) return `Run '${record.run_id}' is ${record.status}: only a run that ended failed or stopped can be resumed. Stop it first (rl_stop_training) if it is stuck.`;
  if (record.status === 'completed') return `Run '${record.run_id}' completed: it has nothing left to train. Start a new run to train further.`;
  return undefined;
}

/** The record of the run started again at `at` from `point`: start-up from its first stage, its processes fresh, how it had ended (and the cause its keeper resumed it from) kept in `resumes`. */
export function resumedRecord(record: RunRecord, point: ResumePoint, at: string, automatic?: { cause: string }): RunRecord {
  const { ended_at: _ended, error: _error, error_cause: _cause, error_process: _process, stop_requested_at: _stop, ...rest } = record;
  const order = runProcesses(record);
  const after = { status: record.status as 'failed' | 'stopped', ...(record.error !== undefined ? { error: record.error } : {}), ...(record.ended_at !== undefined ? { ended_at: record.ended_at } : {}) };
  return {
    ...rest,
    status: 'starting',
    phase: `starting_${order[0]!}`,
    phase_started_at: at,
    // Its processes start afresh here, kept by a keeper of this host.
    origin: THIS_HOST,
    processes: Object.fromEntries(order.map((name) => [name, emptyProcess(processOf(record, name).command, processOf(record, name).cwd)])),
    resumes: [...(record.resumes ?? []), { at, from_step: point.from_step, state_path: point.state_path, after, ...(automatic ? { automatic } : {}) }],
  };
}

export interface ResumeContext {
  settings: Settings;
  logger: Logger;
  store: RunStore;
  /** The active runs of the host, read fresh. */
  activeRuns(): RunRecord[];
  /** Supervises the run (its lock held) through start-up. */
  supervise(record: RunRecord, lock: FileLock): void;
}

/** A resume by the run's keeper, which holds the run's lock already: the transient cause it resumes from. */
export interface AutomaticResume {
  lock: FileLock;
  cause: string;
}

export interface ResumedRun {
  record: RunRecord;
  point: ResumePoint;
}

function refusal(message: string, runId: string): UserError {
  return new UserError(message, { run_id: runId, resumable: false });
}

/** Starts the ended run again; every refusal before anything is written. */
export async function resumeRun(ctx: ResumeContext, runId: string, automatic?: AutomaticResume): Promise<ResumedRun> {
  const entry = ctx.store.read(runId);
  if (entry === undefined) throw new UserError(`Run '${runId}' not found. rl_list_runs lists every run on this host.`, { run_id: runId });
  if (isDamaged(entry)) throw refusal(`Run '${runId}' has a damaged record (${entry.damaged}): it cannot be resumed.`, runId);
  const why = resumeRefusal(entry);
  if (why !== undefined) throw refusal(why, runId);
  const placed = placementOf(entry, ctx.settings);
  if (placed.resumeRefusal !== undefined) throw refusal(`Run '${runId}': ${placed.resumeRefusal}.`, runId);
  const point = await frameworkOf(entry).resumePoint(entry);
  const overBudget = budgetStop(entry);
  if (overBudget !== undefined) throw refusal(`Run '${runId}' cannot be resumed: ${overBudget}.`, runId);

  const startLock = new FileLock(startLockPath(ctx.settings.home));
  startLock.acquireBlocking(START_LOCK_TIMEOUT_MS);
  try {
    refuseAtLimit(activeOf(ctx.activeRuns(), placed), placed.limit(ctx.settings));
    const lock = automatic?.lock ?? ctx.store.supervisorLock(runId);
    // A lease expired on another host is taken only for a Slurm run: a local run's leftovers there may live on.
    if (!lock.tryAcquire(entry.placement === 'slurm')) throw refusal(`Run '${runId}' is being finished by its keeper (it holds the run's lock; it may be about to resume it by itself): try again in a moment.`, runId);
    let record: RunRecord | undefined;
    try {
      // Read again under both locks: another server may have resumed it meanwhile.
      record = ctx.store.update(runId, (r) => {
        const now = resumeRefusal(r);
        if (now !== undefined) throw refusal(now, runId);
        Object.assign(r, resumedRecord(r, point, new Date().toISOString(), automatic && { cause: automatic.cause }));
        for (const key of ['ended_at', 'error', 'error_cause', 'error_process', 'stop_requested_at'] as const) delete r[key];
      });
    } catch (err) {
      if (automatic === undefined) lock.release();
      throw err;
    }
    const stopRequest = join(ctx.store.dir(runId), RUN_FILES.stopRequest);
    if (existsSync(stopRequest)) rmSync(stopRequest, { force: true });
    ctx.logger.info({ run_id: runId, from_step: point.from_step, state_path: point.state_path }, 'run resuming');
    ctx.supervise(record, lock);
    return { record, point };
  } finally {
    startLock.release();
  }
}
