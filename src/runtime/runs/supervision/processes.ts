/**
 * Starting and stopping the run's processes. Each child leads its own process group (detached)
 * with stdout and stderr going straight into its log file, so it keeps running and logging
 * when its keeper dies; stopping signals the whole group, so grandchildren go too.
 */
import { closeSync, openSync } from 'node:fs';
import { childProcess } from '../../../core/onDemand.js';
import type { ExitInfo, StopResult } from '../seams/placement.js';
import { isSameProcess, liveGroup, processStartTime, signalGroup } from '../../../core/os/processTable.js';

export interface Launched {
  /** Undefined when the process could not be started; `exited` then carries spawn_error. */
  pid?: number;
  startTime: string | null;
  exited: Promise<ExitInfo>;
}

/**
 * Starts `command` detached with its output appended to `logPath`; synchronous up to the pid.
 * Node's own spawn: a keeper is these processes' parent and needs no more than their exit code
 * and signal, and a keeper started cold (several runs starting at once) must not load a library
 * on the run's way to its first process.
 */
export function launchDetached(command: readonly string[], opts: { cwd: string; env: Record<string, string>; logPath: string }): Launched {
  // The child writes the file itself and keeps logging if the keeper dies.
  const fd = openSync(opts.logPath, 'a');
  try {
    const child = childProcess().spawn(command[0]!, command.slice(1), { cwd: opts.cwd, env: opts.env, detached: true, stdio: ['ignore', fd, fd] });
    const exited = new Promise<ExitInfo>((resolve) => {
      child.once('exit', (code, signal) => resolve({ exit_code: code, signal }));
      // Emitted instead of 'exit' when it could not be started (ENOENT, EACCES, a missing cwd).
      child.once('error', (err) => {
        if (child.pid === undefined) resolve({ exit_code: null, signal: null, spawn_error: err.message });
      });
    });
    return { pid: child.pid, startTime: child.pid === undefined ? null : (processStartTime(child.pid) ?? null), exited };
  } finally {
    // The child holds its own copy of the descriptor.
    closeSync(fd);
  }
}

/**
 * Resolves when a process that is not our child (adopted from a keeper that died) is gone. Its
 * exit code cannot be known; polling is the only signal. `stop()` ends the polling.
 */
export function watchAdopted(pid: number, startTime: string | null, intervalMs: number): { exited: Promise<ExitInfo>; stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  const exited = new Promise<ExitInfo>((resolve) => {
    const check = (): void => {
      if (!isSameProcess(pid, startTime)) {
        clearInterval(timer);
        resolve({ exit_code: null, signal: null });
      }
    };
    timer = setInterval(check, intervalMs);
    timer.unref();
    check();
  });
  return { exited, stop: () => clearInterval(timer) };
}

const STOP_POLL_MS = 50;
/** After SIGKILL a group dies within milliseconds unless a member is stuck in the kernel. */
const KILL_WAIT_MS = 5_000;

/** Waits until the group has no live member, or the deadline; true when it is gone. */
async function groupGone(leader: { pid: number; startTime: string | null }, timeoutMs: number, leaderExit?: Promise<unknown>): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  // Our own child's exit event ends a pause at once; the poll covers grandchildren and adopted groups.
  let wake: (() => void) | undefined;
  void leaderExit?.then(() => wake?.());
  try {
    for (;;) {
      if (liveGroup(leader).length === 0) return true;
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(STOP_POLL_MS, left));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    wake = undefined;
  }
}

/**
 * SIGTERM to the whole group, then SIGKILL once `graceMs` has passed with a member alive.
 * Resolves when no member is left, or when SIGKILL did not help within a few seconds.
 */
export async function stopGroup(leader: { pid: number; startTime: string | null }, graceMs: number, leaderExit?: Promise<unknown>): Promise<StopResult> {
  if (liveGroup(leader).length === 0) return 'already_gone';
  signalGroup(leader.pid, 'SIGTERM');
  if (await groupGone(leader, graceMs, leaderExit)) return 'terminated';
  signalGroup(leader.pid, 'SIGKILL');
  return (await groupGone(leader, KILL_WAIT_MS, leaderExit)) ? 'killed' : 'unkillable';
}
