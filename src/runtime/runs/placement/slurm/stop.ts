/**
 * Stopping a Slurm run: each step as a local process is stopped (TERM to the step, KILL after the
 * grace: Slurm never escalates a signal sent to a step), a step the script has not started yet
 * withdrawn, then the job itself cancelled, which also ends a script still waiting to start steps.
 */
import type { ProcessRecord, RunRecord, SlurmStep } from '../../seams/record.js';
import type { StopResult } from '../../seams/placement.js';
import { cancel, stepLines } from '../../../slurm/commands.js';
import { removeUnreadEnvFiles, stepEnded, withdrawStart } from './control.js';
import { jobLook } from './watch.js';

type Env = Record<string, string>;

const POLL_MS = 200;
/** srun creates a step within a second of being started; a slow controller gets more. */
const STEP_APPEAR_MS = 10_000;
/** A step whose job ended is reported gone by its watcher within a few seconds. */
const STEP_GONE_MS = 10_000;
/** A KILLed step ends within a second or two. */
const KILL_WAIT_MS = 10_000;
/** A cancelled job ends within KillWait (30 s by default) and a little. */
const RELEASE_WAIT_MS = 40_000;

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The step's id (`<job>.<n>`) once srun created it; undefined when it ended, its job ended, or it never showed. */
async function stepId(env: Env, step: SlurmStep): Promise<string | undefined> {
  const deadline = Date.now() + STEP_APPEAR_MS;
  while (Date.now() < deadline && stepEnded(step) === undefined) {
    const line = (await stepLines(env, step.job_id))?.find((l) => l.split('|')[1] === step.name);
    if (line !== undefined) return line.split('|')[0];
    const job = await jobLook(env, step.job_id);
    if (job === 'unknown' || job?.phase === 'ended') return undefined;
    await pause(POLL_MS);
  }
  return undefined;
}

/** Waits until the script recorded the step's end (or its watcher saw the job end); true when it did. */
async function gone(step: SlurmStep, ms: number, exited?: Promise<unknown>): Promise<boolean> {
  let ended = false;
  void exited?.then(() => (ended = true));
  const deadline = Date.now() + ms;
  for (;;) {
    if (ended || stepEnded(step) !== undefined) return true;
    if (Date.now() >= deadline) return false;
    await pause(Math.min(POLL_MS, deadline - Date.now()));
  }
}

export async function stopStep(env: Env, p: ProcessRecord, graceMs: number, exited?: Promise<unknown>): Promise<StopResult> {
  const step = p.slurm_step;
  if (p.state !== 'running' || step === undefined || withdrawStart(step) || stepEnded(step) !== undefined) return 'already_gone';
  const id = await stepId(env, step);
  // Its job ended without the script recording the step (a cancel, a time limit): its watcher says so in a moment.
  if (id === undefined) return (await gone(step, STEP_GONE_MS, exited)) ? 'already_gone' : 'unkillable';
  await cancel(env, ['--signal=TERM', id]);
  if (await gone(step, graceMs, exited)) return 'terminated';
  await cancel(env, ['--signal=KILL', id]);
  return (await gone(step, KILL_WAIT_MS, exited)) ? 'killed' : 'unkillable';
}

/** Cancels the run's job and waits for it to leave the queue; a note when it could not be cancelled. */
export async function releaseJob(env: Env, run: RunRecord, dir: string): Promise<string | undefined> {
  const jobId = run.slurm_job_id;
  try {
    if (jobId === undefined) return undefined;
    const failure = await cancel(env, [jobId]);
    if (failure !== undefined) return `Slurm job ${jobId} could not be cancelled (${failure}): cancel it with scancel ${jobId}.`;
    const deadline = Date.now() + RELEASE_WAIT_MS;
    while (Date.now() < deadline) {
      const look = await jobLook(env, jobId, 0);
      if (look === 'unknown' || look?.phase === 'ended') return undefined;
      await pause(POLL_MS);
    }
    return `Slurm job ${jobId} was cancelled but had not ended ${RELEASE_WAIT_MS / 1000} s later: check it with squeue -j ${jobId}.`;
  } finally {
    removeUnreadEnvFiles(dir);
  }
}
