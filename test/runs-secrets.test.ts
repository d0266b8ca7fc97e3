/** Secrets in training runs: never in argv, files under RL_HOME or tool output; each child gets only the keys it needs. */
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { argvOf, environOf, filesUnder, record, runServer, startRun, TINKER_KEY, waitForRun, waitUntil, WANDB_KEY } from './helpers/runs.js';

const hasVar = (environ: string, name: string, value: string): boolean => environ.split('\0').includes(`${name}=${value}`);

test('TINKER_API_KEY reaches the trainer only and W&B keys only the W&B users: never argv, files or answers', async (t) => {
  const h = await runServer(t, { lockedEnv: { total_steps: 500, use_wandb: true }, env: { WANDB_API_KEY: WANDB_KEY, OPENROUTER_API_KEY: 'sk-or-test-not-for-runs-0123456789' } });
  h.install.trainerControl({ step_seconds: 1, spawn_grandchild: true });
  const answers: string[] = [];
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const answer = await h.call(name, args);
    answers.push(JSON.stringify(answer.raw));
    return answer;
  };
  const id = (await call('rl_start_training')).json.run_id as string;
  const running = await waitForRun(h, id, 'is running', (r) => r.status === 'running');
  const { api, trainer, env } = running.processes;
  const grandchild = Number(/grandchild pid: (\d+)/.exec(readFileSync(running.logs.trainer, 'utf8'))?.[1]);

  for (const pid of [api.pid!, trainer.pid!, env.pid!, grandchild]) {
    const argv = argvOf(pid);
    assert.ok(argv !== '', `process ${pid} is running`);
    assert.ok(!argv.includes(TINKER_KEY) && !argv.includes(WANDB_KEY), `a key is in the argv of ${pid}: ${argv}`);
  }
  const apiEnv = environOf(api.pid!);
  const trainerEnv = environOf(trainer.pid!);
  const envEnv = environOf(env.pid!);
  assert.ok(hasVar(trainerEnv, 'TINKER_API_KEY', TINKER_KEY), 'the trainer needs the Tinker key');
  assert.ok(!envEnv.includes(TINKER_KEY), 'the environment process does not receive TINKER_API_KEY');
  assert.ok(!apiEnv.includes(TINKER_KEY), 'the API does not receive TINKER_API_KEY');
  assert.ok(hasVar(trainerEnv, 'WANDB_API_KEY', WANDB_KEY) && hasVar(envEnv, 'WANDB_API_KEY', WANDB_KEY), 'both W&B users get the W&B key');
  assert.ok(!apiEnv.includes(WANDB_KEY), 'the API does not use W&B');
  for (const environ of [apiEnv, trainerEnv, envEnv]) {
    assert.ok(!environ.includes('OPENROUTER_API_KEY'), 'no child gets keys it has no use for');
    assert.ok(hasVar(environ, 'PYTHONUNBUFFERED', '1'));
  }

  await call('rl_check_status', { run_id: id });
  await call('rl_list_runs');
  await call('rl_stop_training', { run_id: id });
  await call('rl_check_status', { run_id: id });
  for (const text of answers) assert.ok(!text.includes(TINKER_KEY) && !text.includes(WANDB_KEY), `a key is in an answer: ${text.slice(0, 200)}`);

  const files = filesUnder(h.home);
  assert.ok(files.some((f) => f.endsWith('config.yaml')) && files.some((f) => f.endsWith('run.json')) && files.some((f) => f.endsWith('trainer.log')));
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    assert.ok(!text.includes(TINKER_KEY) && !text.includes(WANDB_KEY), `a key is in ${file}`);
  }
});

test('a log tail returned to the client has secrets redacted', async (t) => {
  const h = await runServer(t, { env: { RL_TRAINER_READY_TIMEOUT_SECONDS: '2' } });
  h.install.trainerControl({ hang_before_register: true });
  const id = await startRun(h);
  const waiting = await waitForRun(h, id, 'is waiting for the trainer', (r) => r.phase === 'starting_trainer');
  await waitUntil('the trainer hangs before registering', () => readFileSync(waiting.logs.trainer, 'utf8').includes('Initial sampling client created'));
  // A process that prints its own key (a debug line, a traceback with the environment).
  appendFileSync(waiting.logs.trainer, `debug: TINKER_API_KEY=${TINKER_KEY}\n`);
  await waitForRun(h, id, 'failed', (r) => r.status === 'failed');
  const status = await h.call('rl_check_status', { run_id: id });
  assert.match(status.json.log_tail, /debug: TINKER_API_KEY=\[REDACTED\]/);
  assert.ok(!JSON.stringify(status.raw).includes(TINKER_KEY));
  assert.ok(!readFileSync(`${h.home}/server.log`, 'utf8').includes(TINKER_KEY), 'server.log is redacted too');
});

test("a secret in the trainer's error line stays out of the recorded error, run.json and every answer", async (t) => {
  const h = await runServer(t, { lockedEnv: { total_steps: 500 } });
  h.install.trainerControl({ step_seconds: 1 });
  const id = await startRun(h);
  const running = await waitForRun(h, id, 'is running', (r) => r.status === 'running');
  // A trainer whose error message quotes its own key (an auth failure echoing the request).
  appendFileSync(running.logs.trainer, `Error in step 2: 401 Unauthorized for api key ${TINKER_KEY}\n`);
  process.kill(running.processes.trainer.pid!, 'SIGKILL');
  const r = await waitForRun(h, id, 'failed', (x) => x.status === 'failed');
  assert.match(r.error!, /Error in step 2: 401 Unauthorized for api key \[REDACTED\]/);
  assert.ok(!readFileSync(`${h.home}/runs/${id}/run.json`, 'utf8').includes(TINKER_KEY), 'run.json holds the key');
  for (const [tool, args] of [['rl_check_status', { run_id: id }], ['rl_get_results', { run_id: id }]] as const) {
    const answer = await h.call(tool, args);
    assert.ok(!JSON.stringify(answer.raw).includes(TINKER_KEY), `${tool} answers the key: ${JSON.stringify(answer.json).slice(0, 300)}`);
  }
  await waitUntil('the run is cleaned up', () => Object.values(record(h, id).processes).every((p) => p.state === 'exited'));
});
