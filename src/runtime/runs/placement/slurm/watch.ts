/**
 * Following a Slurm run: the job as Slurm sees it (squeue while the controller remembers the job,
 * about 5 minutes past its end; then sacct where accounting keeps it), and each step until it
 * ends: its exit status from the file the job's script writes (so an adopted step's exit code is
 * known too), or the job's end when Slurm ended it first (a time limit, a cancel, a node failure),
 * which then carries Slurm's reason. The run's steps share one look at the job at a time.
 */
import type { ExitInfo } from '../../seams/placement.js';
import type { SlurmStep } from '../../seams/record.js';
import { accountingLine, queueLine } from '../../../slurm/commands.js';
import { jobEnd, parseAccountingLine, parseQueueLine, stepExit, type JobView } from './jobState.js';
import { stepEnded } from './control.js';

/** A look at a job serves every watcher of its steps this long. */
const JOB_LOOK_MAX_AGE_MS = 1_500;
/** Exit files are cheap to check; the job is asked every this many checks. */
const JOB_LOOK_EVERY = 3;
/** A job completing (its steps being killed) is given this long to reach its final state. */
const SETTLE_MS = 30_000;

type Env = Record<string, string>;
/** `unknown`: Slurm no longer knows the job (and no accounting keeps it); undefined: Slurm could not be asked. */
export type JobLook = JobView | 'unknown' | undefined;

const looks = new Map<string, { at: number; look: Promise<JobLook> }>();

async function lookAtJob(env: Env, jobId: string): Promise<JobLook> {
  const line = await queueLine(env, jobId);
  if (line === undefined) return undefined;
  const accounted = line === 'unknown' || parseQueueLine(line).phase === 'ended' ? await accountingLine(env, jobId) : undefined;
  if (line === 'unknown') return accounted === undefined ? 'unknown' : parseAccountingLine(accounted);
  const view = parseQueueLine(line);
  // sacct says who cancelled a job ("CANCELLED by 0"); squeue only that it was.
  return accounted !== undefined && view.phase === 'ended' ? { ...view, state: parseAccountingLine(accounted).state } : view;
}

/** The job now, or as looked at less than `maxAgeMs` ago. */
export function jobLook(env: Env, jobId: string, maxAgeMs = JOB_LOOK_MAX_AGE_MS): Promise<JobLook> {
  const cached = looks.get(jobId);
  if (cached !== undefined && Date.now() - cached.at < maxAgeMs) return cached.look;
  const look = lookAtJob(env, jobId);
  looks.set(jobId, { at: Date.now(), look });
  return look;
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

/** The job's final state once it leaves COMPLETING, or its last look when that takes too long. */
async function settled(env: Env, jobId: string, pollMs: number): Promise<JobLook> {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const look = await jobLook(env, jobId, 0);
    if (look === undefined || look === 'unknown' || look.phase !== 'completing' || Date.now() >= deadline) return look;
    await pause(pollMs);
  }
}

/** A step that ended with `status`: Slurm's reason added when the job was ending with it. */
async function endedWith(env: Env, step: SlurmStep, status: number, pollMs: number): Promise<ExitInfo> {
  const exit = stepExit(status);
  let look = await jobLook(env, step.job_id, 0);
  if (look !== undefined && look !== 'unknown' && look.phase === 'completing') look = await settled(env, step.job_id, pollMs);
  const end = look !== undefined && look !== 'unknown' && look.phase === 'ended' ? jobEnd(step.job_id, look) : undefined;
  return { ...exit, ...(end ? { ended_by: end } : {}) };
}

/** What ends the watch of a step this check, if anything. */
async function check(env: Env, step: SlurmStep, askJob: boolean, pollMs: number): Promise<ExitInfo | undefined> {
  const ended = stepEnded(step);
  if (ended === 'withdrawn') return { exit_code: null, signal: null };
  if (ended !== undefined) return endedWith(env, step, ended, pollMs);
  if (!askJob) return undefined;
  const look = await jobLook(env, step.job_id);
  if (look === 'unknown') return { exit_code: null, signal: null };
  if (look === undefined || look.phase !== 'ended') return undefined;
  // The script may have recorded the step's status as the job ended.
  const status = stepEnded(step);
  const end = jobEnd(step.job_id, look);
  return { ...(typeof status === 'number' ? stepExit(status) : { exit_code: null, signal: null }), ...(end ? { ended_by: end } : {}) };
}

/** Follows a step until it ends; `stop()` ends the following (the promise then never settles). */
export function watchStep(env: Env, step: SlurmStep, pollMs: number): { exited: Promise<ExitInfo>; stop(): void } {
  let stopped = false;
  const exited = (async (): Promise<ExitInfo> => {
    for (let n = 0; ; n++) {
      if (stopped) return new Promise<ExitInfo>(() => undefined);
      const info = await check(env, step, n % JOB_LOOK_EVERY === 0, pollMs);
      if (info !== undefined) return info;
      await pause(pollMs);
    }
  })();
  return {
    exited,
    stop: () => {
      stopped = true;
    },
  };
}
