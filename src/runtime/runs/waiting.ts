/**
 * rl_wait_for_run: waiting, within one tool call, until a run is running, has completed one more
 * trainer step, or has ended. It wakes when run.json changes (a watch on the run directory, with a
 * short poll behind it) and reads nothing but run.json, never stamping the status rate limit: the
 * answer is the cheap view a rate-limited status gives, plus whether the condition was reached.
 */
import type { Logger } from '../../core/logger.js';
import { delay } from '../../core/wait.js';
import { ChangeWatcher, fileWatch } from '../../core/files/watch.js';
import { assessHealth, type Health, type HealthPolicy } from './watching/health.js';
import { isDamaged, isEnded, observedProgress, type RegistryEntry, type RunPhase, type RunRecord, type RunStatus } from './seams/record.js';

export const WAIT_CONDITIONS = ['running', 'step', 'ended'] as const;
export type WaitCondition = (typeof WAIT_CONDITIONS)[number];

/** Fits under the ~60 s a client waits for a tool answer. */
export const MAX_WAIT_SECONDS = 50;
export const DEFAULT_WAIT_SECONDS = 45;
/** run.json is read again at least this often, whatever the watch saw (a missed event costs no more). */
const POLL_MS = 1_000;
/** A progress notification at least this often, so a client that resets its timeout on progress keeps waiting. */
const HEARTBEAT_MS = 5_000;

export interface WaitAnswer {
  run_id: string;
  reached: boolean;
  until: WaitCondition;
  waited_seconds: number;
  status: RunStatus;
  phase?: RunPhase;
  health?: Health;
  /** Trainer steps completed out of the total, as the watchdog observed them. */
  progress?: { step: number; total_steps: number };
  /** Why run.json cannot be used (status `unknown`). */
  error?: string;
}

export interface WaitRequest {
  until: WaitCondition;
  /** 0: one look at the run, no wait. */
  timeoutSeconds: number;
  /** The steps completed when the wait began, when it began before this call (a task's wait): `step` means one more. */
  baseline?: number;
  signal?: AbortSignal;
  /** Rising `progress` (seconds waited) out of `total` (the timeout), with what the run is doing. */
  onProgress?(progress: number, total: number, message: string): Promise<void>;
}

export interface WaitSubject {
  runId: string;
  recordPath: string;
  read(): RegistryEntry | undefined;
  policy: HealthPolicy;
  logger: Logger;
}

export const stepsOf = (record: RunRecord): number => record.observed?.steps_completed ?? 0;

/** Whether the condition holds; `baseline` is the steps completed when the wait began. */
export function conditionHolds(record: RunRecord, until: WaitCondition, baseline: number): boolean {
  switch (until) {
    // Running or beyond: a run that ran and has since ended did reach it; one that failed starting did not.
    case 'running':
      return record.status === 'running' || record.running_at !== undefined;
    case 'step':
      return stepsOf(record) > baseline;
    case 'ended':
      return isEnded(record.status);
  }
}


function describe(record: RunRecord): string {
  const progress = observedProgress(record);
  return `${record.status}, ${record.phase}${progress ? `, step ${progress.step}/${progress.total_steps}` : ''}`;
}

/** Waits until the condition holds, the run ends, the timeout passes or the signal aborts. */
export async function waitForRun(subject: WaitSubject, request: WaitRequest): Promise<WaitAnswer> {
  const started = Date.now();
  const deadline = started + request.timeoutSeconds * 1000;
  const waited = (): number => Math.round((Date.now() - started) / 100) / 10;
  let wake = new AbortController();
  const watcher = new ChangeWatcher(subject.logger, { throttleMs: 100, safetyPollMs: POLL_MS });
  watcher.watch({ ...fileWatch(subject.recordPath), onChange: () => wake.abort() });
  let baseline = request.baseline;
  let told = { what: '', at: -Infinity, progress: -1 };
  try {
    for (;;) {
      const entry = subject.read();
      if (entry === undefined || isDamaged(entry)) {
        const error = entry?.damaged ?? 'the run directory is gone';
        return { run_id: subject.runId, reached: false, until: request.until, waited_seconds: waited(), status: 'unknown', error };
      }
      baseline ??= stepsOf(entry);
      const reached = conditionHolds(entry, request.until, baseline);
      if (reached || isEnded(entry.status) || Date.now() >= deadline || request.signal?.aborted) {
        const progress = observedProgress(entry);
        const health = assessHealth(entry, Date.now(), subject.policy);
        return { run_id: subject.runId, reached, until: request.until, waited_seconds: waited(), status: entry.status, phase: entry.phase, health, ...(progress ? { progress } : {}) };
      }
      told = await tell(request, told, describe(entry), waited());
      await delay(Math.min(POLL_MS, deadline - Date.now()), AbortSignal.any([wake.signal, ...(request.signal ? [request.signal] : [])]));
      if (wake.signal.aborted) wake = new AbortController();
    }
  } finally {
    watcher.close();
  }
}

/** A progress notification when what the run does changed, or as a heartbeat; progress always rises. */
async function tell(request: WaitRequest, told: { what: string; at: number; progress: number }, what: string, progress: number): Promise<typeof told> {
  const now = Date.now();
  if (request.onProgress === undefined || progress <= told.progress || (what === told.what && now - told.at < HEARTBEAT_MS)) return told;
  await request.onProgress(progress, request.timeoutSeconds, what);
  return { what, at: now, progress };
}
