/** Stopping runs: during start-up, while running (order, grandchildren, SIGKILL after the grace), idempotence. */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { isAlive, leftovers, record, runServer, startRun, waitForRun, waitUntil } from './helpers/runs.js';
import { FAKE_PYTHONPATH, REPO_ROOT, tempDir } from './helpers/tmp.js';

/** A PYTHONPATH under which every Python process of the run records the SIGTERMs it gets. */
function signalRecorder(): { pythonPath: string; signals(): { pid: number; script: string }[] } {
  const dir = tempDir('rlmcp-signals-');
  copyFileSync(join(REPO_ROOT, 'test', 'fakes', 'signal-recorder', 'sitecustomize.py'), join(dir, 'sitecustomize.py'));
  const log = join(dir, 'signals.log');
  return {
    pythonPath: `${dir}:${FAKE_PYTHONPATH}`,
    signals: () =>
      (existsSync(log) ? readFileSync(log, 'utf8') : '')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => l.split(' '))
        .sort((a, b) => (BigInt(a[0]!) < BigInt(b[0]!) ? -1 : 1))
        .map(([, pid, script]) => ({ pid: Number(pid), script: script! })),
  };
}

test('a stop during start-up cancels the rest of it: nothing is spawned afterwards and nothing is left', async (t) => {
  const h = await runServer(t);
  h.install.trainerControl({ hang_before_register: true });
  const id = await startRun(h);
  const waiting = await waitForRun(h, id, 'is waiting for the trainer', (r) => r.phase === 'starting_trainer' && r.processes.trainer.pid !== null);
  assert.equal(waiting.status, 'starting');

  const stop = await h.call('rl_stop_training', { run_id: id });
  assert.equal(stop.isError, false, JSON.stringify(stop.json));
  assert.deepEqual(stop.json, { message: `Stopped training run '${id}'`, run_id: id, status: 'stopped' });

  const r = record(h, id);
  assert.equal(r.status, 'stopped');
  assert.equal(r.processes.env.state, 'not_started');
  assert.equal(r.processes.env.pid, null);
  for (const pid of [waiting.processes.api.pid!, waiting.processes.trainer.pid!]) assert.ok(!isAlive(pid), `pid ${pid} is still alive`);
  assert.deepEqual(leftovers([h.install.root, h.home]), []);
  // The start-up is over for good: whatever it was waiting on, it starts nothing later.
  await waitUntil('the keeper has let go of the stopped run and exited', () => h.runtime.runs.keeperOf(id) === undefined, 5);
  assert.equal(record(h, id).processes.env.pid, null);
  assert.deepEqual(leftovers([h.install.root, h.home]), []);
});

test('a stop while running signals env, then trainer, then API, whole groups (the grandchild too)', async (t) => {
  const recorder = signalRecorder();
  const h = await runServer(t, { lockedEnv: { total_steps: 500 }, env: { PYTHONPATH: recorder.pythonPath } });
  h.install.trainerControl({ step_seconds: 1, spawn_grandchild: true });
  const id = await startRun(h);
  const running = await waitForRun(h, id, 'is running', (r) => r.status === 'running');
  const trainerLog = readFileSync(running.logs.trainer, 'utf8');
  const grandchild = Number(/grandchild pid: (\d+)/.exec(trainerLog)?.[1]);
  assert.ok(isAlive(grandchild), 'the trainer started a grandchild');
  const { api, trainer, env } = running.processes;

  const stop = await h.call('rl_stop_training', { run_id: id });
  assert.equal(stop.json.status, 'stopped', JSON.stringify(stop.json));
  assert.equal(stop.json.message, `Stopped training run '${id}'`);

  const order = recorder.signals().filter((s) => [api.pid, trainer.pid, env.pid].includes(s.pid)).map((s) => s.script);
  assert.deepEqual(order, ['gsm8k_tinker.py', 'launch_training.py', 'run-api']);
  assert.ok(recorder.signals().some((s) => s.pid === grandchild), 'the grandchild got SIGTERM with its group');
  for (const pid of [api.pid!, trainer.pid!, env.pid!, grandchild]) assert.ok(!isAlive(pid), `pid ${pid} is still alive`);
  assert.deepEqual(leftovers([h.install.root, h.home]), []);

  const r = record(h, id);
  assert.equal(r.status, 'stopped');
  assert.ok(r.ended_at && r.stop_requested_at);
  assert.equal(r.error, undefined);

  const again = await h.call('rl_stop_training', { run_id: id });
  assert.equal(again.isError, false);
  assert.deepEqual(again.json, { message: `Run '${id}' is not running (status: stopped)`, run_id: id, status: 'stopped' });
});

test('a process that ignores SIGTERM is killed after the grace, and the API is signalled only after it is gone', async (t) => {
  const recorder = signalRecorder();
  const h = await runServer(t, { lockedEnv: { total_steps: 500 }, env: { PYTHONPATH: recorder.pythonPath, RL_STOP_GRACE_SECONDS: '1' } });
  h.install.trainerControl({ step_seconds: 1, ignore_sigterm: true });
  const id = await startRun(h);
  const running = await waitForRun(h, id, 'is running', (r) => r.status === 'running');

  const stop = await h.call('rl_stop_training', { run_id: id });
  assert.equal(stop.json.status, 'stopped', JSON.stringify(stop.json));
  const r = record(h, id);
  assert.equal(r.processes.trainer.signal, 'SIGKILL');
  assert.ok(r.notes?.some((n) => /trainer did not stop within 1 s of SIGTERM and was killed/.test(n)));
  const { api, trainer, env } = running.processes;
  const order = recorder.signals().filter((s) => [api.pid, trainer.pid, env.pid].includes(s.pid)).map((s) => s.script);
  assert.deepEqual(order, ['gsm8k_tinker.py', 'launch_training.py', 'run-api']);
  assert.ok(Date.parse(r.processes.api.ended_at!) >= Date.parse(r.processes.trainer.ended_at!));
  assert.deepEqual(leftovers([h.install.root, h.home]), []);
});

test('stopping never blocks other calls, and unknown or malformed run ids are answered clearly', async (t) => {
  const h = await runServer(t, { lockedEnv: { total_steps: 500 }, env: { RL_STOP_GRACE_SECONDS: '3' } });
  h.install.trainerControl({ step_seconds: 1, ignore_sigterm: true });
  const id = await startRun(h);
  await waitForRun(h, id, 'is running', (r) => r.status === 'running');

  const stopping = h.call('rl_stop_training', { run_id: id });
  await waitForRun(h, id, 'is stopping', (r) => r.status === 'stopping');
  // While the stop waits out the grace, other calls are answered.
  const during = await h.call('rl_check_status', { run_id: id });
  assert.equal(during.json.status, 'stopping');
  assert.equal(during.json.phase, 'stopping');
  assert.equal((await h.call('rl_list_runs')).json.runs[0].status, 'stopping');
  assert.equal((await stopping).json.status, 'stopped');

  const unknown = await h.call('rl_stop_training', { run_id: '0badc0de' });
  assert.equal(unknown.isError, true);
  assert.deepEqual(unknown.json, { error: "Run '0badc0de' not found. rl_list_runs lists every run on this host.", active_runs: [] });
  const unknownStatus = await h.call('rl_check_status', { run_id: '0badc0de' });
  assert.deepEqual(unknownStatus.json, { error: "Run '0badc0de' not found. rl_list_runs lists every run on this host.", active_runs: [] });
  for (const bad of ['../../etc', 'ABCDEF12', '1234567', 'x'.repeat(5000)]) {
    const answer = await h.call('rl_stop_training', { run_id: bad });
    assert.equal(answer.isError, true);
    assert.match(JSON.stringify(answer.json), /8 lowercase hex/);
  }
  await waitUntil('the run is cleaned up', () => leftovers([h.install.root, h.home]).length === 0);
});
