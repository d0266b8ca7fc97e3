/**
 * A server's side of a keeper (keeper/keeper.ts): starting one for a run whose lock the server holds, and
 * handing it the lock. A keeper is detached (its own session), so it outlives the server; its
 * environment is the server's (the keys its processes need: never on argv). It is told its run and
 * the server's settings on stdin, so one can be started ahead. Once a server has started a run it
 * keeps keepers booted and waiting (a Node start and the runs' code loaded: about 100 ms of CPU, a
 * quarter of a second on a busy host, and 13 MB of memory of its own each), and the next start hands
 * its run to one at once: as many as the most starts it was asked at once (a sweep of four runs
 * started together finds four the next time), at most RL_MAX_CONCURRENT_RUNS. A waiting keeper
 * whose stdin closes (the server exits or dies) exits.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { KEEPER_ENTRY } from '../../core/files/paths.js';
import { childProcess } from '../../core/onDemand.js';
import type { Settings } from '../../core/settings.js';
import { processStartTime } from '../../core/os/processTable.js';
import type { FileLock } from '../../core/os/fileLock.js';

/** The keeper's argument that makes it read its run (`{"runDir", "token", "settings"}`, one line) from stdin. */
export const WAIT_FOR_RUN = '--wait-for-run';
/** After a keeper was handed a run, the next one starts this much later: not while the run's own processes start. */
const NEXT_KEEPER_DELAY_MS = 3_000;

/** How a server starts runs' keepers. */
export interface KeeperLauncher {
  /** Starts the keeper of the run in `runDir` and hands it `lock` (held by the caller); its pid. Throws when none can start. */
  launch(settings: Settings, runDir: string, lock: FileLock): number;
  /** The server exits: a keeper waiting for a run goes. */
  close(): void;
}

/**
 * How many keepers to keep waiting once a burst of starts is over: as many as the largest burst
 * yet (a burst: starts each less than NEXT_KEEPER_DELAY_MS after the one before), within `limit`.
 */
export function sparesWanted(largestBurst: number, burst: number, limit: number): { largest: number; spares: number } {
  const largest = Math.max(largestBurst, burst);
  return { largest, spares: Math.min(largest, limit) };
}

/** Keepers as detached processes, some kept waiting once a run was started. */
export class DetachedKeepers implements KeeperLauncher {
  private waiting: ChildProcess[] = [];
  private next?: NodeJS.Timeout;
  private closed = false;
  /** Starts since the last refill, and the most of any burst so far. */
  private burst = 0;
  private largestBurst = 0;

  launch(settings: Settings, runDir: string, lock: FileLock): number {
    // One that died while it waited (killed by hand) is replaced.
    this.waiting = this.waiting.filter((child) => child.exitCode === null && child.signalCode === null && processStartTime(child.pid!) !== undefined);
    const keeper = this.waiting.shift() ?? waitingKeeper(settings);
    this.burst++;
    const token = randomBytes(8).toString('hex');
    // Named in the lock before it is told its run: it takes the lock by this token.
    lock.handTo(keeper.pid!, processStartTime(keeper.pid!) ?? null, token);
    // The server's settings go with the run: the keeper reads no configuration file.
    keeper.stdin!.end(`${JSON.stringify({ runDir, token, settings })}\n`);
    clearTimeout(this.next);
    this.next = setTimeout(() => this.refill(settings), NEXT_KEEPER_DELAY_MS);
    this.next.unref();
    return keeper.pid!;
  }

  /** How many keepers wait now (tests). */
  get spares(): number {
    return this.waiting.length;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.next);
    for (const child of this.waiting) child.stdin?.end();
    this.waiting = [];
  }

  /** The burst is over (no start for NEXT_KEEPER_DELAY_MS): keepers booted for the next one. */
  private refill(settings: Settings): void {
    if (this.closed) return;
    const { largest, spares } = sparesWanted(this.largestBurst, this.burst, settings.maxConcurrentRuns);
    this.largestBurst = largest;
    this.burst = 0;
    try {
      while (this.waiting.length < spares) this.waiting.push(waitingKeeper(settings));
    } catch {
      // None can start now (the bundle went missing): the next start says why.
    }
  }
}

/** A keeper booted and waiting on its stdin; throws when it cannot be started. */
function waitingKeeper(settings: Settings): ChildProcess {
  if (!existsSync(KEEPER_ENTRY)) throw new Error(`the run keeper ${KEEPER_ENTRY} is missing: build the package (npm run build)`);
  const env = Object.fromEntries(Object.entries(settings.processEnv).filter((e): e is [string, string] => e[1] !== undefined));
  // What it prints itself goes to its run's keeper.log once it knows its run (src/keeper.ts).
  const child = childProcess().spawn(process.execPath, [KEEPER_ENTRY, WAIT_FOR_RUN], { cwd: settings.cwd, env, detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
  child.on('error', () => undefined);
  child.stdin!.on('error', () => undefined);
  child.unref();
  // The pipe must not hold the server open: a server that exits closes it, and the keeper waiting on it goes.
  (child.stdin as unknown as { unref?: () => void }).unref?.();
  if (child.pid === undefined) throw new Error(`the run keeper could not be started (${process.execPath} ${KEEPER_ENTRY})`);
  return child;
}
