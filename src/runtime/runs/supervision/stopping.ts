/**
 * Stopping what is left of a run: its framework's processes in its stop order (an Atropos run:
 * env -> trainer -> API), through its placement (locally: whole process groups, since an exited
 * leader may leave children behind; on Slurm: job steps), SIGTERM then SIGKILL after the grace,
 * then what held them (a Slurm job). What happened goes to the record as notes.
 */
import type { Logger } from '../../../core/logger.js';
import type { RunProcess } from '../../../core/files/home.js';
import type { RunFramework } from '../seams/framework.js';
import type { Placement } from '../seams/placement.js';
import { processOf } from '../seams/record.js';
import type { TrackedRun } from './trackedRun.js';

export interface StopContext {
  logger: Logger;
  framework: RunFramework;
  placement: Placement;
}

async function stopOne(run: TrackedRun, ctx: StopContext, name: RunProcess, graceMs: number): Promise<void> {
  const p = processOf(run.record, name);
  const result = await ctx.placement.stop(p, graceMs, run.exitOf(name));
  // Nothing was started, or it ended and its group is gone: nothing to record.
  if (result === 'already_gone' && p.state !== 'running') return;
  const { logger } = ctx;
  const label = ctx.framework.processName(name);
  if (result === 'unkillable') {
    logger.error({ run_id: run.runId, process: name, pid: p.pid }, 'still alive after SIGKILL');
    run.update((r) => (r.notes ??= []).push(`The ${label} (${ctx.placement.describe(p)}) survived SIGKILL; it is stuck in the kernel and needs the operator.`));
    return;
  }
  if (result === 'killed') {
    logger.warn({ run_id: run.runId, process: name }, `did not stop within ${graceMs} ms of SIGTERM; killed`);
    run.update((r) => (r.notes ??= []).push(`The ${label} did not stop within ${graceMs / 1000} s of SIGTERM and was killed.`));
  }
  // Our own child's exit event records its exit code; an adopted one is simply gone.
  if (!run.isAdopted(name)) await run.exitOf(name);
  run.markExited(name, { exit_code: null, signal: result === 'killed' ? 'SIGKILL' : null }, false);
}

/**
 * One at a time with the full grace each, except at server exit (`together`): then all get
 * SIGTERM in that order at once and share one short grace.
 */
export async function stopProcesses(run: TrackedRun, ctx: StopContext, graceMs: number, together: boolean): Promise<void> {
  const order = ctx.framework.stopOrder;
  if (together) await Promise.all(order.map((name) => stopOne(run, ctx, name, graceMs)));
  else for (const name of order) await stopOne(run, ctx, name, graceMs);
  // Then what held them (a Slurm job): a script still waiting to start a step ends with it.
  const note = await ctx.placement.release(run.record);
  if (note !== undefined) {
    ctx.logger.warn({ run_id: run.runId }, note);
    run.update((r) => (r.notes ??= []).push(note));
  }
}
