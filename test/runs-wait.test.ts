/**
 * rl_wait_for_run with the fake install: it returns once the run is running, once the trainer made
 * one more step, early when the run ends first, at its timeout otherwise; it reports rising
 * progress while it waits, ends when the call is cancelled, and leaves the status rate limit alone.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { Progress } from '@modelcontextprotocol/client';
import type { RunRecord } from '../src/runtime/runs/seams/record.js';
import { record, runServer, startRun, waitForRun } from './helpers/runs.js';

/** The wait answers once the outcome is recorded; the test ends once the processes are stopped too. */
const cleanedUp = (r: RunRecord): boolean => Object.values(r.processes).every((p) => p.state !== 'running');

/** A run that is running and takes 5 s a step: nothing it waits for happens soon. */
async function slowRun(t: TestContext) {
  const h = await runServer(t, { lockedEnv: { total_steps: 500 } });
  h.install.trainerControl({ step_seconds: 5 });
  const id = await startRun(h);
  await waitForRun(h, id, 'is running', (r) => r.status === 'running');
  return { h, id };
}

test('until running returns when the run is running; until step when the trainer made one more step', async (t) => {
  const h = await runServer(t, { lockedEnv: { total_steps: 500 } });
  h.install.trainerControl({ step_seconds: 0.5 });
  const id = await startRun(h);
  const running = await h.call('rl_wait_for_run', { run_id: id, until: 'running' });
  assert.equal(running.isError, false, JSON.stringify(running.json));
  assert.equal(running.json.reached, true);
  assert.equal(running.json.until, 'running');
  assert.equal(running.json.status, 'running');
  assert.ok(['waiting_for_data', 'training'].includes(running.json.phase), running.json.phase);
  assert.ok(running.json.health.verdict);
  assert.ok(running.json.waited_seconds < 45);

  const stepped = await h.call('rl_wait_for_run', { run_id: id, until: 'step' });
  assert.equal(stepped.json.reached, true, JSON.stringify(stepped.json));
  assert.ok(stepped.json.health.last_step >= 1);
  assert.deepEqual(stepped.json.progress, { step: stepped.json.health.last_step, total_steps: 500 });
  // One more than when this call began, not merely more than zero.
  const next = await h.call('rl_wait_for_run', { run_id: id, until: 'step' });
  assert.equal(next.json.reached, true);
  assert.ok(next.json.progress.step > stepped.json.progress.step);
});

test('a run that fails ends the wait early, whatever it waits for', async (t) => {
  const h = await runServer(t);
  h.install.trainerControl({ fail_at_start: true });
  const id = await startRun(h);
  const started = Date.now();
  const answer = await h.call('rl_wait_for_run', { run_id: id, until: 'running', timeout_seconds: 50 });
  assert.ok(Date.now() - started < 30_000);
  assert.deepEqual([answer.json.reached, answer.json.status, answer.json.phase], [false, 'failed', 'done']);
  assert.equal(answer.json.health.verdict, 'failed');
  const ended = await h.call('rl_wait_for_run', { run_id: id, until: 'ended', timeout_seconds: 50 });
  assert.deepEqual([ended.json.reached, ended.json.status], [true, 'failed']);
  assert.ok(ended.json.waited_seconds < 1);
  await waitForRun(h, id, 'is cleaned up', cleanedUp);
});

test('the wait times out with reached false within its bound; an unknown run is refused', async (t) => {
  const { h, id } = await slowRun(t);
  const started = Date.now();
  const answer = await h.call('rl_wait_for_run', { run_id: id, until: 'ended', timeout_seconds: 2 });
  const elapsed = Date.now() - started;
  assert.deepEqual([answer.json.reached, answer.json.status, answer.json.until], [false, 'running', 'ended']);
  assert.ok(answer.json.waited_seconds >= 2 && answer.json.waited_seconds < 3, String(answer.json.waited_seconds));
  assert.ok(elapsed >= 2000 && elapsed < 3500, `${elapsed} ms`);
  const unknown = await h.call('rl_wait_for_run', { run_id: '0badc0de', until: 'ended' });
  assert.equal(unknown.isError, true);
  assert.match(unknown.json.error, /Run '0badc0de' not found/);
  const tooLong = await h.call('rl_wait_for_run', { run_id: id, until: 'ended', timeout_seconds: 51 });
  assert.equal(tooLong.isError, true);
});

test('progress notifications rise while it waits; the status rate limit window is left alone', async (t) => {
  const h = await runServer(t, { lockedEnv: { total_steps: 3 }, env: { RL_STATUS_MIN_INTERVAL_SECONDS: '3600' } });
  h.install.trainerControl({ step_seconds: 1 });
  const id = await startRun(h);
  const notes: Progress[] = [];
  const answer = await h.call('rl_wait_for_run', { run_id: id, until: 'ended' }, { onprogress: (p) => notes.push(p) });
  assert.deepEqual([answer.json.reached, answer.json.status], [true, 'completed'], JSON.stringify(answer.json));
  assert.ok(notes.length >= 2, JSON.stringify(notes));
  for (let i = 1; i < notes.length; i++) assert.ok(notes[i]!.progress > notes[i - 1]!.progress, JSON.stringify(notes));
  assert.ok(notes.every((n) => n.total === 45 && typeof n.message === 'string'));
  assert.ok(notes.some((n) => /^starting, starting_/.test(n.message!)), JSON.stringify(notes));

  assert.equal(record(h, id).last_full_check_at, undefined, 'waiting stamps no status check');
  const full = await h.call('rl_check_status', { run_id: id });
  assert.equal(full.json.rate_limited, undefined);
  assert.equal(full.json.status, 'completed');
  assert.ok(full.json.processes);
  await waitForRun(h, id, 'is cleaned up', cleanedUp);
});

test('cancelling the call ends the wait at once', async (t) => {
  const { h, id } = await slowRun(t);

  // Through the client: the call is abandoned, and the server ends its wait.
  const cancel = new AbortController();
  const call = h.call('rl_wait_for_run', { run_id: id, until: 'ended' }, { signal: cancel.signal });
  setTimeout(() => cancel.abort(), 300);
  const started = Date.now();
  await assert.rejects(call);
  assert.ok(Date.now() - started < 1000);

  // What the tool's handler does with the call's signal: the wait ends within a poll, not at its timeout.
  const signal = new AbortController();
  setTimeout(() => signal.abort(), 300);
  const before = Date.now();
  const answer = await h.runtime.runs.waitFor(id, { until: 'ended', timeoutSeconds: 50, signal: signal.signal });
  assert.ok(Date.now() - before < 800, `${Date.now() - before} ms`);
  assert.deepEqual([answer.reached, answer.status], [false, 'running']);
});
