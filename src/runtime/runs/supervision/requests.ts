/**
 * What a server asks of a run's keeper, as a file in the run's directory: `stop.request`. A file,
 * not a socket: it is there for whichever keeper keeps the run when it looks (a keeper that died
 * and its replacement included), needs no listener kept alive, and any number of servers may
 * write it. The keeper watches the directory, so a request is seen at once, and looks every
 * second anyway.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeAtomically } from '../../../core/files/atomicFile.js';
import { RUN_FILES } from '../../../core/files/home.js';

/** `user`: rl_stop_training; `server_exit`: a server exiting with RL_STOP_RUNS_ON_EXIT=1 (the stop is quick, noted as such). */
export type StopReason = 'user' | 'server_exit';

/** In one rename: a keeper woken by the directory's change must never read half a request (an empty one reads as a user's stop). */
export function requestStop(runDir: string, reason: StopReason): void {
  writeAtomically(join(runDir, RUN_FILES.stopRequest), JSON.stringify({ pid: process.pid, at: new Date().toISOString(), reason }));
}

/** The stop asked for, if any; a request of an older server (no reason) is a user's. */
export function stopRequested(runDir: string): StopReason | undefined {
  let text: string;
  try {
    text = readFileSync(join(runDir, RUN_FILES.stopRequest), 'utf8');
  } catch {
    return undefined;
  }
  try {
    return (JSON.parse(text) as { reason?: unknown }).reason === 'server_exit' ? 'server_exit' : 'user';
  } catch {
    return 'user';
  }
}
