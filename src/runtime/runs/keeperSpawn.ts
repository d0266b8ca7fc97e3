/**
 * A server's side of a keeper (keeper/keeper.ts): starting one for a run whose lock the server holds, and
 * handing it the lock. A keeper is detached (its own session), so it outlives the server; its
 * environment is the server's (the keys its processes need: never on argv). It is told its run and
 * the server's settings on stdin, so one can be started ahead: once a server has started a run it
 * keeps a keeper booted and waiting (a Node start and the runs' code loaded, about a quarter of a second
 * on a busy host), and the next start hands its run to it at once. A waiting keeper whose stdin
 * closes (the server exits or dies) exits.
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

/** Keepers as detached processes, one kept waiting once a run was started. */
export class DetachedKeepers implements KeeperLauncher {
  private waiting?: ChildProcess;
  private next?: NodeJS.Timeout;
  private closed = false;

  launch(settings: Settings, runDir: string, lock: FileLock): number {
    // One that died while it waited (killed by hand) is replaced.
    const alive = this.waiting !== undefined && this.waiting.exitCode === null && this.waiting.signalCode === null && processStartTime(this.waiting.pid!) !== undefined;
    const keeper = alive ? this.waiting! : waitingKeeper(settings);
    this.waiting = undefined;
    const token = randomBytes(8).toString('hex');
    // Named in the lock before it is told its run: it takes the lock by this token.
    lock.handTo(keeper.pid!, processStartTime(keeper.pid!) ?? null, token);
    // The server's settings go with the run: the keeper reads no configuration file.
    keeper.stdin!.end(`${JSON.stringify({ runDir, token, settings })}\n`);
    clearTimeout(this.next);
    this.next = setTimeout(() => {
      if (!this.closed) this.waiting ??= waitingKeeper(settings);
    }, NEXT_KEEPER_DELAY_MS);
    this.next.unref();
    return keeper.pid!;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.next);
    this.waiting?.stdin?.end();
    this.waiting = undefined;
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
