/** Training runs that go wrong: each outcome rule (src/runtime/runs/supervision/), stage failures and deadlines. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { isAlive, leftovers, occupyWithTrickle, runServer, startRun, waitForRun, waitUntil } from './helpers/runs.js';
import { FakeWandb } from './fakes/wandbServer.js';

const allExited = (r: { processes: Record<string, { state: string }> }): boolean => Object.values(r.processes).every((p) => p.state !== 'running');

test('a trainer failing during start-up fails the run, naming the stage, with its log tail; the environment is never started', async (t) => {
  const h = await runServer(t);
  h.install.trainerControl({ fail_at_start: true });
  const id = await startRun(h);
  const r = await waitForRun(h, id, 'failed and cleaned up', (x) => x.status === 'failed' && allExited(x));
  assert.match(r.error!, /^Start-up failed at stage 'trainer'/);
  assert.match(r.error!, /exit code 1/);
  assert.equal(r.error_process, 'trainer');
  assert.equal(r.processes.trainer.exit_code, 1);
  assert.equal(r.processes.env.state, 'not_started');
  assert.equal(r.processes.env.pid, null);

  const status = await h.call('rl_check_status', { run_id: id });
  assert.equal(status.json.status, 'failed');
  assert.match(status.json.log_tail, /Error during training: simulated failure/);
  assert.equal(status.json.processes.env.state, 'not_started');
  assert.deepEqual(leftovers([h.install.root, h.home]), []);
});

test("'Error in step' fails the run even though the trainer exits 0", async (t) => {
  const h = await runServer(t, { lockedEnv: { total_steps: 5 } });
  h.install.trainerControl({ error_in_step: 1, step_seconds: 0.05 });
  const id = await startRun(h);
  const r = await waitForRun(h, id, 'ended and cleaned up', (x) => (x.status === 'failed' || x.status === 'completed') && allExited(x));
  assert.equal(r.status, 'failed', readFileSync(r.logs.trainer, 'utf8'));
  assert.equal(r.processes.trainer.exit_code, 0);
  assert.match(r.error!, /Error in step 1: simulated error/);
  assert.equal(r.error_process, 'trainer');
  const status = await h.call('rl_check_status', { run_id: id });
  assert.match(status.json.log_tail, /Training completed successfully!/, 'the tail shows the misleading ending too');
  assert.match(status.json.weights, /step_1$/, 'the weights of the last step that did complete');
});

test('the API dying mid-run fails the run and stops the trainer and the environment', async (t) => {
  const h = await runServer(t, { lockedEnv: { total_steps: 200 } });
  h.install.trainerControl({ step_seconds: 1 });
  const id = await startRun(h);
  const running = await waitForRun(h, id, 'is running', (x) => x.status === 'running');
  const { api, trainer, env } = running.processes;
  process.kill(api.pid!, 'SIGKILL');

  const r = await waitForRun(h, id, 'failed and cleaned up', (x) => x.status === 'failed' && allExited(x));
  assert.equal(r.error_process, 'api');
  assert.match(r.error!, /Atropos API server ended \(killed by SIGKILL\)/);
  assert.equal(r.processes.api.signal, 'SIGKILL');
  assert.ok(!isAlive(trainer.pid!) && !isAlive(env.pid!));
  assert.deepEqual(leftovers([h.install.root, h.home]), []);
});

test('the environment exiting 0 does not end the run: it goes on until the trainer finishes', async (t) => {
  const h = await runServer(t, { lockedEnv: { total_steps: 6 } });
  h.install.trainerControl({ step_seconds: 0.5 });
  // No control: the trainer waits for every batch, so the environment must feed it. It exits 0 on
  // its own once the batches queued and taken cover total_steps, while the trainer still has some to train on.
  const id = await startRun(h);
  const envGone = await waitForRun(h, id, 'has an exited environment', (x) => x.processes.env.state === 'exited');
  assert.equal(envGone.processes.env.exit_code, 0);
  assert.ok(envGone.status === 'starting' || envGone.status === 'running', `status ${envGone.status}`);
  const r = await waitForRun(h, id, 'ended and cleaned up', (x) => (x.status === 'completed' || x.status === 'failed') && allExited(x));
  assert.equal(r.status, 'completed', r.error);
  assert.ok(r.running_at, 'it reached running');
  assert.ok(r.notes?.some((n) => /environment exited with code 0/.test(n)));
  assert.equal(r.processes.trainer.exit_code, 0);
});

test('an environment crashing fails the run with its exit code', async (t) => {
  const h = await runServer(t, { lockedEnv: { total_steps: 200 } });
  h.install.trainerControl({ step_seconds: 1 });
  h.install.envControl({ exit_after_register: true, exit_code: 3 });
  const id = await startRun(h);
  const r = await waitForRun(h, id, 'failed and cleaned up', (x) => x.status === 'failed' && allExited(x));
  assert.equal(r.error_process, 'env');
  assert.match(r.error!, /environment ended \(exit code 3\)/);
  assert.deepEqual(leftovers([h.install.root, h.home]), []);
});

test('a stage that never becomes ready fails at its deadline, naming the stage and showing its log', async (t) => {
  const h = await runServer(t, { env: { RL_TRAINER_READY_TIMEOUT_SECONDS: '2' } });
  h.install.trainerControl({ hang_before_register: true });
  const id = await startRun(h);
  const r = await waitForRun(h, id, 'failed and cleaned up', (x) => x.status === 'failed' && allExited(x));
  assert.match(r.error!, /^Start-up stage 'trainer' timed out after 2 s/);
  assert.match(r.error!, /RL_TRAINER_READY_TIMEOUT_SECONDS/);
  // How far the trainer got before its deadline depends on the machine (a Python start-up at load 10
  // takes more than 2 s): the tail shown is the end of its log as the run left it, whatever that holds.
  const status = await h.call('rl_check_status', { run_id: id });
  const tail = status.json.log_tail as string;
  const log = readFileSync(r.logs.trainer, 'utf8').trimEnd();
  assert.equal(typeof tail, 'string');
  assert.ok(log.endsWith(tail.trimEnd()), `the tail is the end of the trainer log:\n${tail}\n---\n${log}`);
  assert.equal(tail.trim() === '', log === '', 'the tail is empty only when the log is');
  assert.equal(status.json.processes.env.state, 'not_started');
  assert.deepEqual(leftovers([h.install.root, h.home]), []);
});

test("a trainer whose inference server is not reachable on RL_INFERENCE_PORT fails the start-up with the fix", async (t) => {
  const h = await runServer(t, { lockedEnv: { total_steps: 500 } });
  h.install.trainerControl({ step_seconds: 1 });
  const id = await startRun(h);
  // Taken after the pre-flight check, before the trainer binds it: its server thread dies, it trains on (as upstream).
  const squatter = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => squatter.listen(Number(h.env.RL_INFERENCE_PORT), '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => squatter.close(() => resolve())));
  const r = await waitForRun(h, id, 'failed and cleaned up', (x) => x.status === 'failed' && allExited(x));
  assert.match(r.error!, new RegExp(`^Start-up failed at stage 'trainer'.*does not answer GET /health on port ${h.env.RL_INFERENCE_PORT}.*another process took port ${h.env.RL_INFERENCE_PORT}.*Free the port`));
  assert.equal(r.processes.env.state, 'not_started');
});

test('a trainer that dies leaves no child of its own behind: its whole group is stopped with the run', async (t) => {
  const h = await runServer(t);
  h.install.trainerControl({ fail_at_start: true, spawn_grandchild: true });
  const id = await startRun(h);
  const r = await waitForRun(h, id, 'failed and cleaned up', (x) => x.status === 'failed' && allExited(x));
  const grandchild = Number(/grandchild pid: (\d+)/.exec(readFileSync(r.logs.trainer, 'utf8'))?.[1]);
  assert.ok(grandchild > 0, 'the trainer started a grandchild');
  await waitUntil('the grandchild is stopped with its group', () => !isAlive(grandchild), 15);
  assert.deepEqual(leftovers([h.install.root, h.home]), []);
});

test('a readiness probe that never finishes answering does not hold a stage past its deadline', async (t) => {
  const h = await runServer(t, { env: { RL_TRAINER_READY_TIMEOUT_SECONDS: '3' } });
  h.install.trainerControl({ step_seconds: 1 });
  const id = await startRun(h);
  // Taken after the pre-flight check, before the trainer binds it (as in the test above): GET /health gets a body that never ends.
  await occupyWithTrickle(t, Number(h.env.RL_INFERENCE_PORT));
  const r = await waitForRun(h, id, 'failed and cleaned up', (x) => x.status === 'failed' && allExited(x), 30);
  assert.match(r.error!, /^Start-up stage 'trainer' timed out after 3 s/);
  assert.equal(r.processes.env.state, 'not_started');
  assert.deepEqual(leftovers([h.install.root, h.home]), []);
});

test("a trainer that prints 'Training complete!' but exits non-zero fails with what really happened", async (t) => {
  const h = await runServer(t);
  h.install.trainerControl({ exit_code: 3 });
  const id = await startRun(h);
  const r = await waitForRun(h, id, 'ended and cleaned up', (x) => (x.status === 'failed' || x.status === 'completed') && allExited(x));
  assert.equal(r.status, 'failed');
  assert.equal(r.processes.trainer.exit_code, 3);
  assert.doesNotMatch(r.error!, /without printing 'Training complete!'/, 'it did print it');
  assert.match(r.error!, /exit code 3/);
});

test('a W&B login the trainer fails is named as the cause, not the AttributeError it dies of', async (t) => {
  const wandb = await FakeWandb.start({ apiKey: 'the-right-wandb-key-0123456789' });
  t.after(() => wandb.close());
  const h = await runServer(t, { lockedEnv: { use_wandb: true }, env: { WANDB_API_KEY: 'a-rejected-wandb-key-0123456789', WANDB_BASE_URL: wandb.url } });
  const id = await startRun(h);
  const r = await waitForRun(h, id, 'failed and cleaned up', (x) => x.status === 'failed' && allExited(x));
  assert.equal(r.error_process, 'trainer');
  assert.match(r.error!, / Cause: Error initializing wandb: failed to upsert bucket: returned error 401 Unauthorized/);
  assert.match(readFileSync(r.logs.trainer, 'utf8'), /AttributeError: property 'use_wandb'/, 'the process died of the AttributeError upstream raises');
  const status = await h.call('rl_check_status', { run_id: id });
  assert.match(status.json.log_tail, /Error initializing wandb: failed to upsert bucket/);
  assert.ok(!JSON.stringify(status.json).includes('a-rejected-wandb-key-0123456789'), 'the key is in no answer');
});
