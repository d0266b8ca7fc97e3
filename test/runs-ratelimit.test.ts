/** The rl_check_status rate limit: one full status per run per RL_STATUS_MIN_INTERVAL_SECONDS. */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { statusWindow } from '../src/runtime/runs/registry/rateLimit.js';
import type { RunRecord } from '../src/runtime/runs/seams/record.js';
import { record, runServer, startRun, waitForRun } from './helpers/runs.js';

const cleanedUp = (r: RunRecord): boolean => Object.values(r.processes).every((p) => p.state !== 'running');

test('inside the window the answer is rate_limited with the wait and the current status', async (t) => {
  const h = await runServer(t, { lockedEnv: { total_steps: 500 }, env: { RL_STATUS_MIN_INTERVAL_SECONDS: '3600' } });
  h.install.trainerControl({ step_seconds: 1 });
  const id = await startRun(h);
  await waitForRun(h, id, 'is running', (r) => r.status === 'running');

  const first = await h.call('rl_check_status', { run_id: id });
  assert.equal(first.json.rate_limited, undefined);
  assert.equal(first.json.status, 'running');
  assert.ok(first.json.processes);

  const second = await h.call('rl_check_status', { run_id: id });
  assert.equal(second.isError, false);
  assert.equal(second.json.rate_limited, true);
  assert.equal(second.json.run_id, id);
  assert.equal(second.json.status, 'running', 'the current status is always included');
  assert.ok(second.json.next_check_in_seconds > 3500 && second.json.next_check_in_seconds <= 3600);
  assert.equal(second.json.message, `Rate limited. Next check available in ${Math.ceil(second.json.next_check_in_seconds / 60)} minutes.`);
  assert.equal(second.json.processes, undefined, 'no full check inside the window');

  // The window is in run.json: a new server on the same RL_HOME honours it.
  await h.call('rl_stop_training', { run_id: id });
  const stamped = record(h, id).last_full_check_at;
  assert.ok(stamped);
  const other = await runServer(t, { install: h.install, home: h.home, select: false, env: { RL_STATUS_MIN_INTERVAL_SECONDS: '3600' } });
  // The stop ended the run after the last full check: the first check after that is full...
  const afterEnd = await other.call('rl_check_status', { run_id: id });
  assert.equal(afterEnd.json.rate_limited, undefined);
  assert.equal(afterEnd.json.status, 'stopped');
  // ...and the next one, on yet another server, is limited again.
  const third = await runServer(t, { install: h.install, home: h.home, select: false, env: { RL_STATUS_MIN_INTERVAL_SECONDS: '3600' } });
  const limited = await third.call('rl_check_status', { run_id: id });
  assert.equal(limited.json.rate_limited, true);
  assert.equal(limited.json.status, 'stopped');
});

test('an unknown run id opens no window and leaves no trace', async (t) => {
  const h = await runServer(t, { env: { RL_STATUS_MIN_INTERVAL_SECONDS: '3600' } });
  for (let i = 0; i < 2; i++) {
    const answer = await h.call('rl_check_status', { run_id: 'deadbeef' });
    assert.equal(answer.isError, true);
    assert.deepEqual(answer.json, { error: "Run 'deadbeef' not found. rl_list_runs lists every run on this host.", active_runs: [] });
  }
  assert.equal(existsSync(join(h.home, 'runs', 'deadbeef')), false);
});

test('a run that fails inside the window is reported in full at the next check', async (t) => {
  const h = await runServer(t, { lockedEnv: { total_steps: 500 }, env: { RL_STATUS_MIN_INTERVAL_SECONDS: '3600' } });
  h.install.trainerControl({ step_seconds: 1 });
  const id = await startRun(h);
  const running = await waitForRun(h, id, 'is running', (r) => r.status === 'running');
  assert.equal((await h.call('rl_check_status', { run_id: id })).json.status, 'running');
  process.kill(running.processes.api.pid!, 'SIGKILL');
  await waitForRun(h, id, 'failed', (r) => r.status === 'failed' && cleanedUp(r));

  const next = await h.call('rl_check_status', { run_id: id });
  assert.equal(next.json.rate_limited, undefined, 'the failure is not held back');
  assert.equal(next.json.status, 'failed');
  assert.match(next.json.error, /Atropos API server ended/);
  assert.equal((await h.call('rl_check_status', { run_id: id })).json.rate_limited, true);
});

test('the wait is rounded up and never reads "0 minutes"', () => {
  const base = { status: 'running', last_full_check_at: new Date(0).toISOString() } as RunRecord;
  const at = (seconds: number) => statusWindow(base, 1800, seconds * 1000);
  assert.deepEqual(at(0), { limited: true, next_check_in_seconds: 1800, message: 'Rate limited. Next check available in 30 minutes.' });
  assert.deepEqual(at(1799.5), { limited: true, next_check_in_seconds: 1, message: 'Rate limited. Next check available in 1 second.' });
  assert.deepEqual(at(1770.2), { limited: true, next_check_in_seconds: 30, message: 'Rate limited. Next check available in 30 seconds.' });
  assert.deepEqual(at(1740), { limited: true, next_check_in_seconds: 60, message: 'Rate limited. Next check available in 1 minute.' });
  assert.deepEqual(at(1739), { limited: true, next_check_in_seconds: 61, message: 'Rate limited. Next check available in 2 minutes.' });
  assert.deepEqual(at(1800), { limited: false });
  assert.deepEqual(statusWindow(base, 0, 1), { limited: false });
  assert.deepEqual(statusWindow({ ...base, last_full_check_at: undefined }, 1800, 1), { limited: false });
  const ended = { ...base, status: 'failed', ended_at: new Date(5000).toISOString() } as RunRecord;
  assert.deepEqual(statusWindow(ended, 1800, 10_000), { limited: false }, 'ended after the last full check');
  assert.equal(statusWindow({ ...ended, last_full_check_at: new Date(6000).toISOString() }, 1800, 10_000).limited, true);
});
