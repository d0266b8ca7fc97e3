/**
 * How a keeper starts a run's process (src/runtime/runs/supervision/processes.ts): detached, its
 * output appended to its log, and what it ended with as its parent sees it: an exit code, a
 * signal, or why it could not be started at all.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { launchDetached } from '../src/runtime/runs/supervision/processes.js';
import { tempDir } from './helpers/tmp.js';

test('a launched process: its output appended to its log, its exit code, its signal, or why it never started', async () => {
  const dir = tempDir();
  const log = join(dir, 'p.log');
  writeFileSync(log, 'before\n');
  const env = { PATH: process.env.PATH ?? '' };

  const exits = launchDetached(['sh', '-c', 'echo out; echo err >&2; exit 3'], { cwd: dir, env, logPath: log });
  // Its start time may be gone already: it can have exited by the time it is read.
  assert.ok(exits.pid !== undefined);
  assert.deepEqual(await exits.exited, { exit_code: 3, signal: null });
  assert.equal(readFileSync(log, 'utf8'), 'before\nout\nerr\n');

  const sleeps = launchDetached(['sleep', '30'], { cwd: dir, env, logPath: log });
  assert.ok(sleeps.pid !== undefined && sleeps.startTime !== null);
  // It leads its own process group: the group is what a stop signals.
  process.kill(-sleeps.pid!, 'SIGTERM');
  assert.deepEqual(await sleeps.exited, { exit_code: null, signal: 'SIGTERM' });

  const missing = launchDetached([join(dir, 'no-such-python')], { cwd: dir, env, logPath: log });
  assert.equal(missing.pid, undefined);
  assert.equal(missing.startTime, null);
  const ended = await missing.exited;
  assert.equal(ended.exit_code, null);
  assert.match(ended.spawn_error ?? '', /ENOENT/);
});
