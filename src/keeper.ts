/**
 * Entry point of a run's keeper: `node dist/keeper.js <run dir>` keeps that run, with the settings
 * of the environment and directory it was started in; servers start it as `node dist/keeper.js
 * --wait-for-run` with their environment and tell it on stdin its run, the token of the lock they
 * handed it and the settings they read (src/runtime/runs/keeperSpawn.ts), so a keeper reads no
 * configuration file on its run's way to its first process. It keeps the run until it has ended
 * (src/runtime/runs/keeper/keeper.ts), with a partner that replaces it if it is killed
 * (src/runtime/runs/keeper/partner.ts), then exits; no MCP here. What it prints itself (a crash) goes to the run's keeper.log.
 */
import { appendFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { RUN_FILES } from './core/files/home.js';
import { KEEPER_ENTRY } from './core/files/paths.js';
import { childProcess, nodeHttp, nodeReadline } from './core/onDemand.js';
import type { Settings } from './core/settings.js';
import { loadSettings } from './runtime/config/settings.js';
import { WAIT_FOR_RUN } from './runtime/runs/keeperSpawn.js';
import { keepRun } from './runtime/runs/keeper/keeper.js';

/** What a keeper is told: its run, and from a server the lock's token and the server's settings (keys included: a pipe, never argv). */
interface Told {
  runDir: string;
  token?: string;
  settings?: Settings;
}

/** The run to keep: from argv, or from the first line on stdin (none when stdin closes first: the server went). */
async function runToKeep(args: string[]): Promise<Told | undefined> {
  if (args.length !== 1) {
    process.stderr.write('usage: keeper.js <run directory>\n');
    process.exit(2);
  }
  if (args[0] !== WAIT_FOR_RUN) return { runDir: args[0]! };
  // While it waits, what every run's start-up uses: its processes are spawned, an Atropos run's
  // readiness is asked over HTTP. Loaded once its run arrives, they cost each of several runs
  // starting at once about 8 ms of CPU on the way to its first process.
  childProcess();
  nodeHttp();
  for await (const line of nodeReadline().createInterface({ input: process.stdin })) {
    process.stdin.destroy();
    return JSON.parse(line) as Told;
  }
  return undefined;
}

const run = await runToKeep(process.argv.slice(2));
if (run === undefined) process.exit(0);
try {
  // Read where it was started (relative paths are that directory's), then it lives in its run's
  // directory: its cwd names the run it keeps, for a look at the process table.
  const settings = run.settings ?? loadSettings();
  // What `ps` shows: the run it keeps (cut to the length of the command it was started with).
  process.title = `${KEEPER_ENTRY} keeping ${basename(run.runDir)}`;
  process.chdir(run.runDir);
  // Its partner starts the next keeper from where this one read its settings, if this one is killed.
  await keepRun(settings, run.runDir, { token: run.token, partnerFrom: settings.cwd });
  process.exit(0);
} catch (err) {
  const message = `${new Date().toISOString()} keeper of ${run.runDir} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`;
  try {
    appendFileSync(join(run.runDir, RUN_FILES.keeperLog), message);
  } catch {
    process.stderr.write(message);
  }
  process.exit(1);
}
