/**
 * Stopping what is left of a run: env -> trainer -> API, whole process groups (an exited leader
 * may leave children behind), SIGTERM then SIGKILL after the grace. What happened goes to the
 * record as notes.
 */
import type { Logger } from '../../../core/logger.js';
import type { RunProcess } from '../../../core/files/home.js';
import { stopGroup } from './processes.js';
import { PROCESS_NAME, type TrackedRun } from './trackedRun.js';

const STOP_ORDER: readonly RunProcess[] = ['env', 'trainer', 'api'];

async function stopOne(run: TrackedRun, logger: Logger, name: RunProcess, graceMs: number): Promise<void> {
  const p = run.record.processes[name];
  // An exited leader may leave children in its group (e.g. a trainer that crashed): they go
  // too. Without its start time a long-dead leader's pid could name someone else's group.
  if (p.pid === null || (p.state !== 'running' && p.start_time === null)) return;
  const result = await stopGroup({ pid: p.pid, startTime: p.start_time }, graceMs, run.exitOf(name));
  if (result === 'unkillable') {
    logger.error({ run_id: run.runId, process: name, pid: p.pid }, 'still alive after SIGKILL');
    run.update((r) => (r.notes ??= []).push(`The ${PROCESS_NAME[name]} (process group ${p.pid}) survived SIGKILL; it is stuck in the kernel and needs the operator.`));
    return;
  }
  if (result === 'killed') {
    logger.warn({ run_id: run.runId, process: name }, `did not stop within ${graceMs} ms of SIGTERM; killed`);
    run.update((r) => (r.notes ??= []).push(`The ${PROCESS_NAME[name]} did not stop within ${graceMs / 1000} s of SIGTERM and was killed.`));
  }
  // Our own child's exit event records its exit code; an adopted one is simply gone.
  if (!run.isAdopted(name)) await run.exitOf(name);
  run.markExited(name, { exit_code: null, signal: result === 'killed' ? 'SIGKILL' : null }, false);
}

/**
 * One at a time with the full grace each, except at server exit (`together`): then all get
 * SIGTERM in that order at once and share one short grace.
 */
export async function stopProcesses(run: TrackedRun, logger: Logger, graceMs: number, together: boolean): Promise<void> {
  if (together) await Promise.all(STOP_ORDER.map((name) => stopOne(run, logger, name, graceMs)));
  else for (const name of STOP_ORDER) await stopOne(run, logger, name, graceMs);
}
