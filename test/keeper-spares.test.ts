/**
 * The keepers a server keeps booted and waiting (src/runtime/runs/keeperSpawn.ts): one after a
 * start, as many as the most starts it was asked at once after a burst, each a real
 * `node dist/keeper.js --wait-for-run` child, and none left once the server closes.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runsRoot } from '../src/core/files/home.js';
import { FileLock } from '../src/core/os/fileLock.js';
import { loadSettings } from '../src/runtime/config/settings.js';
import { DetachedKeepers, sparesWanted } from '../src/runtime/runs/keeperSpawn.js';
import { argvOf, isAlive, procInfo, waitUntil } from './helpers/runs.js';
import { tempDir } from './helpers/tmp.js';

/** Keepers this process started that wait for a run. */
const waitingKeepers = (): number[] =>
  readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => procInfo(pid)?.ppid === process.pid && isAlive(pid) && argvOf(pid).includes('--wait-for-run'));

test('spares: the largest burst of starts so far, within RL_MAX_CONCURRENT_RUNS (table)', () => {
  const rows: Array<[largest: number, burst: number, limit: number, want: { largest: number; spares: number }]> = [
    [0, 1, 4, { largest: 1, spares: 1 }],
    [1, 4, 4, { largest: 4, spares: 4 }],
    [4, 1, 4, { largest: 4, spares: 4 }],
    [4, 6, 4, { largest: 6, spares: 4 }],
    [2, 2, 1, { largest: 2, spares: 1 }],
  ];
  for (const [largest, burst, limit, want] of rows) assert.deepEqual(sparesWanted(largest, burst, limit), want, `${largest}, ${burst}, ${limit}`);
});

test('after two starts at once a server keeps two keepers waiting; closed, it leaves none', async (t) => {
  const home = join(tempDir(), 'home');
  const settings = loadSettings({ PATH: process.env.PATH, HOME: process.env.HOME, RL_HOME: home, LOG_LEVEL: 'warn' });
  const keepers = new DetachedKeepers();
  t.after(() => keepers.close());
  // Two runs handed over at once. Their directories hold no run.json: each keeper finds nothing to keep and exits.
  for (const id of ['a1b2c3d4', 'a1b2c3d5']) {
    const dir = join(runsRoot(home), id);
    mkdirSync(dir, { recursive: true });
    const lock = new FileLock(join(dir, 'supervisor.lock'));
    assert.ok(lock.tryAcquire());
    keepers.launch(settings, dir, lock);
  }
  assert.equal(keepers.spares, 0, 'both started cold');
  // Three seconds after the last start, the burst is over: two keepers boot and wait.
  await waitUntil('two keepers waiting', () => keepers.spares === 2 && waitingKeepers().length === 2, 20);
  const waiting = waitingKeepers();
  keepers.close();
  await waitUntil('the waiting keepers gone with their server', () => waiting.every((pid) => !isAlive(pid)), 20);
});
