/**
 * A Slurm run's job before its first step: submitted once (a job an earlier server submitted but
 * did not live to record is found by its name first), then waited for while it is queued, its
 * queue reason recorded for the run's health, until it runs on a node, whose address the server's
 * readiness probes then use (a node's name need not resolve: its NodeAddr is asked).
 */
import type { Verdict } from '../../seams/framework.js';
import type { AllocationContext } from '../../seams/placement.js';
import { cancel, jobsNamed, nodeAddress, submitJob } from '../../../slurm/commands.js';
import { jobEnd, queuedReason } from './jobState.js';
import { jobName } from './script.js';
import { jobLook } from './watch.js';

/** A queued job is looked at this often: its reason changes, and it may start at any time. */
const QUEUE_POLL_MS = 1_000;

type Env = Record<string, string>;

/** The run's job id: recorded, found by name, or submitted now (and recorded at once); a verdict when Slurm refused it. */
async function jobOf(env: Env, ctx: AllocationContext, scriptPath: string): Promise<string | Verdict> {
  const run = ctx.record();
  if (run.slurm_job_id !== undefined) return run.slurm_job_id;
  let jobId = (await jobsNamed(env, jobName(run.run_id)))?.[0];
  if (jobId === undefined) {
    const submitted = await submitJob(env, scriptPath);
    if ('error' in submitted) return { status: 'failed', error: `Slurm did not accept the run's job (sbatch ${scriptPath}): ${submitted.error}` };
    jobId = submitted.jobId;
  }
  ctx.note({ slurm_job_id: jobId });
  ctx.logger.info({ run_id: run.run_id, slurm_job_id: jobId }, 'slurm job submitted');
  return jobId;
}

export async function allocateJob(env: Env, ctx: AllocationContext, scriptPath: string): Promise<'ready' | 'interrupted' | Verdict> {
  const submittedBefore = ctx.record().slurm_job_id !== undefined;
  const jobId = await jobOf(env, ctx, scriptPath);
  if (typeof jobId !== 'string') return jobId;
  // A stop that came while sbatch ran found no job to cancel: this one is not wanted.
  if (!ctx.starting()) {
    if (!submittedBefore) await cancel(env, [jobId]);
    return 'interrupted';
  }
  for (;;) {
    const look = await jobLook(env, jobId, 0);
    if (!ctx.starting()) return 'interrupted';
    if (look === 'unknown') return { status: 'failed', error: `Slurm no longer knows job ${jobId} (it ended long ago, and no accounting keeps it): its processes never started.` };
    if (look === undefined) {
      ctx.queued(`Slurm cannot be asked about job ${jobId} now (the controller does not answer); asking again.`);
    } else if (look.phase === 'queued') {
      ctx.queued(queuedReason(jobId, look));
    } else if (look.phase === 'running') {
      const node = (look.nodes ?? '').split(',')[0]!;
      ctx.note({ host: (await nodeAddress(env, node)) ?? node });
      ctx.queued(undefined);
      return 'ready';
    } else {
      const end = jobEnd(jobId, look);
      return { status: end?.status ?? 'failed', error: end?.reason ?? `Slurm job ${jobId} ended (${look.state}) before the run's processes started.` };
    }
    await ctx.sleep(QUEUE_POLL_MS);
  }
}
