/**
 * A server's side of a keeper (keeper.ts): spawning one for a run whose lock the server holds, and
 * handing it the lock. The keeper is detached (its own session), so it outlives the server; its
 * environment is the server's (its settings, the keys its processes need: never on argv); what
 * it prints itself goes to the run's keeper.log.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { RUN_FILES } from '../../../core/files/home.js';
import { KEEPER_ENTRY } from '../../../core/files/paths.js';
import type { Settings } from '../../../core/settings.js';
import { processStartTime } from '../supervision/processTable.js';
import type { FileLock } from '../registry/fileLock.js';

/** How the token of the lock handed over reaches the keeper (its environment, read and removed at once). */
export const KEEPER_TOKEN_VARIABLE = 'RL_KEEPER_LOCK_TOKEN';

/** Starts the keeper of the run in `runDir`, handing it `lock`; its pid. */
export type KeeperLauncher = (settings: Settings, runDir: string, lock: FileLock) => number;

/**
 * Spawns the keeper of the run in `runDir` and hands it `lock` (held by this server); the
 * keeper's pid. Throws when it cannot be spawned (the lock is then still this server's).
 */
export function spawnKeeper(settings: Settings, runDir: string, lock: FileLock): number {
  if (!existsSync(KEEPER_ENTRY)) throw new Error(`the run keeper ${KEEPER_ENTRY} is missing: build the package (npm run build)`);
  const token = randomBytes(8).toString('hex');
  const env = Object.fromEntries(Object.entries(settings.processEnv).filter((e): e is [string, string] => e[1] !== undefined));
  const log = openSync(join(runDir, RUN_FILES.keeperLog), 'a');
  try {
    const child = spawn(process.execPath, [KEEPER_ENTRY, runDir], { cwd: settings.cwd, env: { ...env, [KEEPER_TOKEN_VARIABLE]: token }, detached: true, stdio: ['ignore', log, log] });
    child.on('error', () => undefined);
    child.unref();
    if (child.pid === undefined) throw new Error(`the run keeper could not be started (${process.execPath} ${KEEPER_ENTRY})`);
    lock.handTo(child.pid, processStartTime(child.pid) ?? null, token);
    return child.pid;
  } finally {
    closeSync(log);
  }
}
