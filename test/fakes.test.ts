/**
 * The fakes are the ground truth every other test runs against, so they are tested against the
 * real protocol themselves: the Atropos API endpoints and state rules, the trainer's log lines and
 * exit codes (quirks included), `serve` and `process` of the bundled environments, and the CLI's
 * merge order and usage errors (tinker-atropos' launch_training.py and trainer.py, atroposlib's
 * api/server.py and BaseEnv's CLI).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { gsm8kSolver } from './fakes/gsm8kAnswers.js';
import { startFakeOpenAI, type FakeOpenAI } from './fakes/openaiServer.js';
import { makeFakeInstall, type FakeInstall, type TrainerControl } from './helpers/fakeInstall.js';
import { assertInOrder, http, printed, queueBatches, run, runConfigYaml, start, startApi, trainerArgs, trainerDir, waitFor } from './helpers/fakeProcesses.js';
import { makeFakeTinker } from './helpers/fakeTinker.js';
import { FAKE_PYTHONPATH, freePort, pythonOnPath, REPO_ROOT, tempDir } from './helpers/tmp.js';

const STUB_KEY = 'sk-fake-endpoint-key-7f3a';
const TINKER_KEY = 'tml-fakes-test-secret-51c9e2';
// The trainer creates its training client and saves its checkpoints through the fake Tinker SDK.
const tinker = makeFakeTinker();
tinker.addKey(TINKER_KEY);
tinker.setModels(['Qwen/Qwen3-8B']);
const TRAINER_ENV = { TINKER_API_KEY: TINKER_KEY, FAKE_TINKER_STATE: tinker.dir };

// Top level, not in before(): tempDir() registers its clean-up with after(), which must belong to the file.
const install: FakeInstall = await makeFakeInstall();
const stub: FakeOpenAI = await startFakeOpenAI({
  apiKey: STUB_KEY,
  models: { right: { mode: 'right' }, half: { mode: 'half' }, empty: { mode: 'empty' }, fail: { mode: 'fail' } },
  solve: gsm8kSolver(),
  sglangModel: 'half',
});
after(() => stub.close());

const GSM8K = () => join(install.environmentsDir, 'gsm8k_tinker.py');

test('run-api: the real endpoints and state rules; /register-env waits until the trainer asks for its first batch', async () => {
  const { url } = await startApi(install);
  assert.deepEqual((await http('GET', `${url}/`)).json, { message: 'AtroposLib API' });
  assert.deepEqual((await http('GET', `${url}/wandb_info`)).json, { group: null, project: null });
  assert.deepEqual((await http('GET', `${url}/info`)).json, { batch_size: -1, max_token_len: -1 });
  assert.deepEqual((await http('GET', `${url}/status`)).json, { current_step: 0, queue_size: 0 });
  assert.equal((await http('GET', `${url}/batch`)).json.status, 'error');

  const envRegistration = { max_token_length: 8192, desired_name: 'gsm8k', weight: 1.0, group_size: 2 };
  assert.deepEqual((await http('POST', `${url}/register-env`, envRegistration)).json, { status: 'wait for trainer to start' });
  assert.equal((await http('POST', `${url}/register-env`, { ...envRegistration, desired_name: null })).status, 422);

  const registration = { wandb_group: 'abcd1234', wandb_project: 'proj', batch_size: 4, max_token_len: 9000, checkpoint_dir: './temp/', save_checkpoint_interval: 25, starting_step: 0, num_steps: 3 };
  const registered = await http('POST', `${url}/register`, registration);
  // A 128-bit integer: more digits than a JS number holds exactly.
  assert.match(registered.text, /^\{"uuid": \d{20,}\}$/);
  assert.deepEqual((await http('GET', `${url}/wandb_info`)).json, { group: 'abcd1234', project: 'proj' });
  assert.deepEqual((await http('GET', `${url}/info`)).json, { batch_size: 4, max_token_len: 9000 });
  // A second trainer does not re-initialise the state.
  await http('POST', `${url}/register`, { ...registration, wandb_group: 'other', batch_size: 8 });
  assert.deepEqual((await http('GET', `${url}/wandb_info`)).json, { group: 'abcd1234', project: 'proj' });

  assert.deepEqual((await http('POST', `${url}/register-env`, envRegistration)).json, { status: 'wait for trainer to start' });
  assert.deepEqual((await http('GET', `${url}/batch`)).json, { batch: null });
  assert.deepEqual((await http('POST', `${url}/register-env`, envRegistration)).json, {
    status: 'success', env_id: 0, wandb_name: 'gsm8k_0', checkpoint_dir: './temp/', starting_step: 0, checkpoint_interval: 25, num_steps: 3,
  });
  assert.equal((await http('POST', `${url}/register-env`, envRegistration)).json.wandb_name, 'gsm8k_1');

  const group = { tokens: [[1, 2, 3], [1, 2, 4]], masks: [[-100, 2, 3], [-100, 2, 4]], scores: [1, 0], env_id: 0 };
  assert.deepEqual((await http('POST', `${url}/scored_data`, group)).json, { status: 'received' });
  assert.deepEqual((await http('POST', `${url}/scored_data_list`, [group, group])).json, { status: 'received', groups_processed: 2 });
  assert.deepEqual((await http('GET', `${url}/status`)).json, { current_step: 0, queue_size: 3 });
  const envStatus = (await http('GET', `${url}/status-env`, { env_id: 0 })).json;
  assert.equal(envStatus.self_queue_size, 3);
  assert.equal(envStatus.max_group_size, 2);

  const batch = (await http('GET', `${url}/batch`)).json.batch as Array<Record<string, unknown>>;
  assert.equal(batch.length, 2, 'batch_size 4 = two groups of 2');
  assert.equal(batch[0]!.ref_logprobs, null);
  assert.deepEqual((await http('GET', `${url}/status`)).json, { current_step: 1, queue_size: 1 });
  assert.deepEqual((await http('GET', `${url}/latest_example`)).json.scores, [1, 0]);
  assert.deepEqual((await http('POST', `${url}/disconnect-env`, { env_id: 0 })).json, { status: 'success' });

  const reset = await http('GET', `${url}/reset_data`);
  assert.equal(reset.text, 'Reset successful');
  assert.deepEqual((await http('GET', `${url}/wandb_info`)).json, { group: null, project: null });
  assert.equal((await http('GET', `${url}/nope`)).status, 404);
});

test('run-api: a busy port exits 1 with uvicorn\'s error; SIGTERM shuts it down with exit 0', async () => {
  const { port, proc } = await startApi(install);
  const second = await run(install.runApi, ['--host', '127.0.0.1', '--port', String(port)], { cwd: install.root });
  assert.equal(second.code, 1);
  assert.match(second.stderr, /ERROR: {4}\[Errno 98\] .*address already in use/);
  proc.child.kill('SIGTERM');
  assert.deepEqual(await proc.exit, { code: 0, signal: null });
  assert.match(proc.err(), /Finished server process/);
});

test('trainer: registers, prints the real lines in order, exits 0 and never prints the Tinker key', async () => {
  const { url } = await startApi(install);
  const inferencePort = await freePort();
  const config = join(tempDir(), 'config.yaml');
  writeFileSync(config, runConfigYaml({ api: url, inferencePort, useWandb: true, totalSteps: 3 }));
  const trainer = start(install.python, trainerArgs(install, config, inferencePort), {
    cwd: trainerDir(),
    env: { ...TRAINER_ENV, WANDB_API_KEY: 'wandb-fake-key' },
  });
  // The trainer waits for its batches: this test is the environment that sends them.
  await waitFor('the trainer registered', () => trainer.out().includes('Registered as trainer'));
  await queueBatches(url, 3);
  const result = { code: (await trainer.exit).code, stdout: trainer.out(), stderr: trainer.err() };
  assert.equal(result.code, 0, result.stdout + result.stderr);
  const step = (k: number) => [
    `Step ${k}/3`, 'Fetching data from Atropos...', /^Got \d+ Datum objects$/, 'Running forward-backward pass...',
    'Running optimizer step...', /^Loss: \d/, 'Saving checkpoint and updating sampling client...',
    new RegExp(`^Sampling client updated: tinker://[0-9a-f-]+:train:0/sampler_weights/step_${k + 1}$`),
    /^Reward\/mean: \d\.\d{4}$/, new RegExp(`^Step ${k} complete - Loss: \\d`),
  ];
  assertInOrder(result.stdout, [
    `Loading config from: ${config}`, 'Training Configuration:', 'Base Model: Qwen/Qwen3-8B', '  Run Name: gsm8k-abcd1234-fix0',
    `Inference API URL: http://127.0.0.1:${inferencePort}`, 'Initializing Tinker-Atropos Trainer...',
    'Starting FastAPI inference server on port 8001...', 'Setting up Tinker-Atropos Trainer...',
    /^Initial sampling client created: tinker:\/\/[0-9a-f-]+:train:0\/sampler_weights\/step_0$/,
    /^Registered as trainer: \d{20,}$/, 'Wandb initialized (trainer): gsm8k-abcd1234-trainer-fix0 in group: abcd1234',
    ...step(0), ...step(1), ...step(2),
    'Training complete!', /^Final weights are available here: tinker:\/\/[0-9a-f-]+:train:0\/sampler_weights\/final$/,
    'Training completed successfully!',
  ]);
  assert.ok(!(result.stdout + result.stderr).includes(TINKER_KEY));
  assert.deepEqual((await http('GET', `${url}/wandb_info`)).json, { group: 'abcd1234', project: 'fakes-project' });
  // Every checkpoint it printed was saved through the SDK (save_weights_for_sampler), so Tinker lists them.
  const printedPaths = [...result.stdout.matchAll(/^(?:Initial sampling client created|Sampling client updated): (\S+)$/gm)].map((m) => m[1]!);
  const trainingRun = /^tinker:\/\/([^/]+)\//.exec(printedPaths[0]!)![1]!;
  const listed = (await tinker.api('checkpoints', { training_run_ids: [trainingRun] }, { key: TINKER_KEY })).json;
  assert.deepEqual(listed.checkpoints.map((c: { path: string }) => c.path), printedPaths);
  assert.equal(printedPaths.length, 4);
  assert.ok(listed.checkpoints.every((c: { kind: string; size_bytes: number }) => c.kind === 'sampler' && c.size_bytes > 0));
});

test('trainer: its inference server answers before registration; an unhandled SIGTERM kills it', async () => {
  const { url } = await startApi(install);
  const inferencePort = await freePort();
  const dir = trainerDir({ hang_before_register: true });
  writeFileSync(join(dir, 'config.yaml'), runConfigYaml({ api: url, inferencePort, useWandb: false }));
  const trainer = start(install.python, trainerArgs(install, 'config.yaml', inferencePort), { cwd: dir, env: TRAINER_ENV });
  const inference = `http://127.0.0.1:${inferencePort}`;
  assert.deepEqual(await waitFor('/health', () => http('GET', `${inference}/health`).then((r) => r.json, () => undefined)), { status: 'ok', trainer_initialized: true });
  await waitFor('the initial sampling client', () => trainer.out().includes('Initial sampling client created'));
  const chat = await http('POST', `${inference}/v1/chat/completions`, { messages: [{ role: 'user', content: 'hi' }], n: 2 });
  assert.equal(chat.status, 200);
  assert.deepEqual(chat.json.choices.map((c: any) => [c.message.content, c.finish_reason]), [['The answer is #### 42', 'stop'], ['The answer is #### 42', 'stop']]);
  assert.deepEqual((await http('GET', `${url}/wandb_info`)).json, { group: null, project: null }, 'not registered yet');
  trainer.child.kill('SIGTERM');
  assert.equal((await trainer.exit).signal, 'SIGTERM');
});

test('trainer: exit codes of the failure switches, the upstream "Error in step" quirk and exit_code', async () => {
  const { url } = await startApi(install);
  const deadApi = `http://127.0.0.1:${await freePort()}`;
  /** `batches`: the trainer gets an API of its own, and that many batches once it registered. */
  const scenario = async (control: TrainerControl | undefined, o: { api?: string; useWandb?: boolean; env?: Record<string, string>; config?: string; batches?: number } = {}) => {
    const dir = trainerDir(control);
    const api = o.batches === undefined ? (o.api ?? url) : (await startApi(install)).url;
    const inferencePort = await freePort();
    writeFileSync(join(dir, 'config.yaml'), runConfigYaml({ api, inferencePort, useWandb: o.useWandb ?? false }));
    const trainer = start(install.python, trainerArgs(install, o.config ?? 'config.yaml', inferencePort), { cwd: dir, env: o.env ?? TRAINER_ENV });
    if (o.batches !== undefined) {
      await waitFor('the trainer registered', () => trainer.out().includes('Registered as trainer'));
      await queueBatches(api, o.batches);
    }
    return { code: (await trainer.exit).code, stdout: trainer.out(), stderr: trainer.err() };
  };
  const [noKey, noConfig, apiDown, failStart, noWandb, stepError, exitCode] = await Promise.all([
    scenario(undefined, { env: {} }),
    scenario(undefined, { config: 'missing.yaml' }),
    scenario(undefined, { api: deadApi }),
    scenario({ fail_at_start: true }),
    scenario(undefined, { useWandb: true }),
    scenario({ error_in_step: 1 }, { batches: 2 }),
    scenario({ exit_code: 3 }, { batches: 3 }),
  ]);
  assert.equal(noKey.code, 1);
  assert.match(noKey.stdout, /^Error during training: TINKER_API_KEY is not set$/m);
  assert.doesNotMatch(noKey.stdout, /Registered as trainer/);
  assert.equal(noConfig.code, 1);
  assert.match(noConfig.stdout, /^Error: Config file not found: missing.yaml$/m);
  assert.equal(apiDown.code, 1);
  assertInOrder(apiDown.stdout, [/^Initial sampling client created/, 'Registering with Atropos API...', /^Error during training: .*Connection refused/]);
  assert.equal(failStart.code, 1);
  assert.match(failStart.stdout, /^Error during training: simulated failure$/m);
  assert.equal(noWandb.code, 1);
  assertInOrder(noWandb.stdout, [/^Registered as trainer/, /^Error initializing wandb: api_key not configured/, /^Error during training: /]);
  assert.equal(stepError.code, 0);
  assertInOrder(stepError.stdout, ['Step 0 complete - Loss: 0.7', 'Step 1/3', 'Error in step 1: simulated error', 'Training complete!', 'Training completed successfully!']);
  assert.doesNotMatch(stepError.stdout, /Step [12] complete/);
  assert.match(stepError.stderr, /Traceback[\s\S]*RuntimeError: simulated error/);
  assert.equal(exitCode.code, 3);
  assert.match(exitCode.stdout, /Training completed successfully!/);
});

test('trainer: ignore_sigterm survives SIGTERM; spawn_grandchild stays in the trainer\'s process group', async () => {
  const { url } = await startApi(install);
  const dir = trainerDir({ ignore_sigterm: true, spawn_grandchild: true, step_seconds: 0.2 });
  const inferencePort = await freePort();
  writeFileSync(join(dir, 'config.yaml'), runConfigYaml({ api: url, inferencePort, useWandb: false, totalSteps: 500 }));
  const trainer = start(install.python, trainerArgs(install, 'config.yaml', inferencePort), { cwd: dir, env: TRAINER_ENV, group: true });
  const grandchild = Number(await waitFor('the grandchild pid', () => /^grandchild pid: (\d+)$/m.exec(trainer.out())?.[1]));
  const pgid = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[2]);
  assert.equal(pgid(grandchild), trainer.child.pid);
  await waitFor('the trainer registered', () => trainer.out().includes('Registered as trainer'));
  await queueBatches(url, 8);
  await waitFor('step 1', () => trainer.out().includes('Step 1/500'));
  trainer.child.kill('SIGTERM');
  const stepsAtSignal = trainer.out().split('\n').filter((l) => /^Step \d+\/500$/.test(l)).length;
  await waitFor('two more steps after SIGTERM', () => trainer.out().split('\n').filter((l) => /^Step \d+\/500$/.test(l)).length >= stepsAtSignal + 2);
  process.kill(-trainer.child.pid!, 'SIGKILL');
  assert.equal((await trainer.exit).signal, 'SIGKILL');
  await waitFor('the grandchild to die with its group', () => !existsSync(`/proc/${grandchild}`) || /\) Z /.test(readFileSync(`/proc/${grandchild}/stat`, 'utf8')));
});

test('env serve: waits while the trainer has not started, then fills the queue and exits once enough is queued', async () => {
  const { url } = await startApi(install);
  await http('POST', `${url}/register`, { wandb_group: 'g', wandb_project: 'p', batch_size: 4, max_token_len: 9000, checkpoint_dir: './temp/', save_checkpoint_interval: 0, starting_step: 0, num_steps: 1 });
  const dir = tempDir();
  // One rollout at a time, so the queue holds exactly what the exit condition needs.
  writeFileSync(join(dir, 'config.yaml'), runConfigYaml({ api: url, inferencePort: 0, useWandb: false, totalSteps: 1, maxNumWorkers: 1, openai: { model_name: 'half', base_url: stub.baseUrl, api_key: STUB_KEY, health_check: false } }));
  const env = start(install.python, [GSM8K(), 'serve', '--config', join(dir, 'config.yaml')], { cwd: install.root });
  await waitFor('the wait warning', () => env.err().includes('Waiting to register the env due to status wait for trainer to start'));
  assert.equal(printed(env.out(), 'api_key'), `'${STUB_KEY}'`, 'the real CLI prints the key: whoever captures stdout must redact it');
  await http('GET', `${url}/batch`);
  // Exits when current_step + queue_size * group_size // batch_size > total_steps: 0 + 4 * 2 // 4 > 1.
  assert.deepEqual(await env.exit, { code: 0, signal: null }, env.err());
  assert.equal((await http('GET', `${url}/status`)).json.queue_size, 4);
  const example = (await http('GET', `${url}/latest_example`)).json;
  assert.equal(example.env_id, 0);
  assert.deepEqual([...example.scores].sort(), [0, 1], 'half the answers are right');
  assert.ok(example.masks[0].includes(-100) && example.inference_logprobs[0].includes(1.0), 'prompt positions masked');
  assert.ok(stub.requestsFor('half').every((r) => r.n === 2));
});

test('env serve: fake_env.json exit_after_register ends it right after registering', async () => {
  const { url } = await startApi(install);
  await http('POST', `${url}/register`, { wandb_group: 'g', wandb_project: 'p', batch_size: 4, max_token_len: 9000, checkpoint_dir: './temp/', save_checkpoint_interval: 0, starting_step: 0, num_steps: 1 });
  await http('GET', `${url}/batch`);
  const config = join(tempDir(), 'config.yaml');
  writeFileSync(config, runConfigYaml({ api: url, inferencePort: 0, useWandb: false, openai: { base_url: stub.baseUrl } }));
  install.envControl({ exit_after_register: true, exit_code: 4 });
  try {
    const result = await run(install.python, [GSM8K(), 'serve', '--config', config], { cwd: install.root });
    assert.equal(result.code, 4, result.stderr);
  } finally {
    install.envControl(null);
  }
  assert.equal((await http('POST', `${url}/register-env`, { max_token_length: 1, desired_name: 'gsm8k', weight: 1, group_size: 2 })).json.wandb_name, 'gsm8k_1');
});

test('process: one JSON line per group with the real fields and real scores; an existing file gets _1', async () => {
  const out = join(tempDir(), 'out', 'gsm8k.jsonl');
  const args = [GSM8K(), 'process', '--env.total_steps', '3', '--env.group_size', '4', '--env.use_wandb', 'false',
    '--env.data_path_to_save_groups', out, '--openai.base_url', stub.baseUrl, '--openai.api_key', STUB_KEY,
    '--openai.model_name', 'half', '--openai.server_type', 'openai', '--openai.health_check', 'false'];
  const env = { ATROPOS_ALLOW_DUMMY_MANAGED_SERVER: '1' };
  const first = await run(install.python, args, { cwd: install.root, env });
  assert.equal(first.code, 0, first.stderr);
  const groups = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
  assert.equal(groups.length, 3);
  for (const g of groups) {
    for (const key of ['ref_logprobs', 'overrides', 'group_overrides']) assert.equal(g[key], null, key);
    assert.equal(g.tokens.length, 4);
    assert.deepEqual(g.tokens[0], [...Array(128).keys()], 'DummyManagedServer placeholder tokens');
    assert.equal(g.masks[0][0], -100);
    assert.deepEqual([...g.scores].sort(), [0, 0, 1, 1]);
    assert.equal(g.messages[0].at(-1).role, 'assistant');
    assert.equal(g.inference_logprobs[0].length, 128);
  }
  assert.ok(existsSync(out.replace(/\.jsonl$/, '.html')));
  assert.ok(stub.requestsFor('half').length >= 3);
  assert.ok(stub.requests.filter((r) => r.model === 'half').every((r) => r.authorized), 'Authorization: Bearer <api_key>');
  assert.equal(printed(first.stdout, 'api_key'), `'${STUB_KEY}'`);

  const before = readFileSync(out, 'utf8');
  const second = await run(install.python, args, { cwd: install.root, env });
  assert.equal(second.code, 0, second.stderr);
  assert.equal(readFileSync(out, 'utf8'), before);
  assert.equal(readFileSync(out.replace(/\.jsonl$/, '_1.jsonl'), 'utf8').trim().split('\n').length, 3);
});

test('process: exit 1 without the dummy-server flag, on a failing endpoint or with W&B forced on; empty answers retry forever', async () => {
  const dir = tempDir();
  const base = (model: string, extra: string[] = ['--env.use_wandb', 'false']) => [GSM8K(), 'process', '--env.total_steps', '2', '--env.group_size', '2',
    '--openai.base_url', stub.baseUrl, '--openai.api_key', STUB_KEY, '--openai.model_name', model, '--openai.server_type', 'openai',
    '--openai.health_check', 'false', '--env.data_path_to_save_groups', join(dir, `${model}-${extra.length}.jsonl`), ...extra];
  const allowed = { ATROPOS_ALLOW_DUMMY_MANAGED_SERVER: '1' };
  const looping = start(install.python, base('empty'), { cwd: install.root, env: allowed });
  const [noFlag, failing, wandbForced] = await Promise.all([
    run(install.python, base('right'), { cwd: install.root }),
    run(install.python, base('fail'), { cwd: install.root, env: allowed }),
    run(install.python, base('right', []), { cwd: install.root, env: allowed }),
  ]);
  assert.equal(noFlag.code, 1);
  assert.match(noFlag.stderr, /NotImplementedError: OpenAI endpoints do not support token IDs[\s\S]*ATROPOS_ALLOW_DUMMY_MANAGED_SERVER=1/);
  assert.equal(failing.code, 1);
  assert.match(failing.stderr, /Error code: 500/);
  assert.equal(wandbForced.code, 1);
  assert.match(wandbForced.stderr, /UsageError: api_key not configured \(no-tty\)/);
  await waitFor('two retries', () => (looping.err().match(/Failed to process group, retrying\.\.\./g) ?? []).length >= 2);
  assert.equal(looping.child.exitCode, null, 'still running');
  looping.child.kill('SIGKILL');
  await looping.exit;
});

test('CLI: CLI > YAML > config_init > class defaults, the raw-pass quirks, and exit 2 on usage errors', async () => {
  const dir = tempDir();
  const countdown = join(install.environmentsDir, 'countdown_tinker.py');
  writeFileSync(join(dir, 'c.yaml'), [
    'env:', '  group_size: 3', '  max_operands: 3', '  total_steps: 1', '  no_such_field: 1',
    'openai:', `  - base_url: ${stub.baseUrl}`, '    model_name: right', `    api_key: ${STUB_KEY}`, '    health_check: false', '    weight: 1.0', '',
  ].join('\n'));
  const common = ['--config', join(dir, 'c.yaml'), '--env.use_wandb', 'false'];
  const merged = await run(install.python, [countdown, 'process', ...common, '--env.group_size', '2', '--env.max_num_workers', '-1',
    '--env.seed', 'None', '--env.data_path_to_save_groups', join(dir, 'a.jsonl')], { cwd: install.root });
  assert.equal(merged.code, 0, merged.stderr);
  const expected: Record<string, string> = {
    group_size: '2', // CLI over YAML
    max_operands: '3', // YAML over config_init (5)
    difficulty: "<Difficulty.HARD: 'hard'>", // config_init over the class default (medium)
    batch_size: '64', // config_init
    format_reward: '0.1', // class default
    seed: 'None', // "None" from the CLI over config_init's 1234
    max_num_workers: '1', // "-1" is not consumed as a value: the flag becomes True
    include_messages: 'True', // forced in process mode
    model_name: "'right'", // YAML openai list of one
    server_type: "'sglang'", // config_init
  };
  for (const [field, value] of Object.entries(expected)) assert.equal(printed(merged.stdout, field), value, field);
  assert.equal(readFileSync(join(dir, 'a.jsonl'), 'utf8').trim().split('\n').length, 1);

  const negative = await run(install.python, [countdown, 'process', ...common, '--env.max_num_workers=-1', '--env.data_path_to_save_groups', join(dir, 'b.jsonl')], { cwd: install.root });
  assert.equal(printed(negative.stdout, 'max_num_workers'), '-1');

  for (const [args, message] of [
    [['--env.not_a_field', '1'], /error: unrecognized arguments: --env.not_a_field 1/],
    [['--openai.weight', '1'], /error: unrecognized arguments: --openai.weight 1/],
    [['--env.use_wandb', '--env.total_steps', '1'], /error: argument --env.use_wandb: expected one argument/],
  ] as const) {
    const usage = await run(install.python, [countdown, 'process', ...args], { cwd: install.root });
    assert.equal(usage.code, 2, usage.stderr);
    assert.match(usage.stderr, message);
    assert.equal(usage.stdout, '');
  }
});

test('the bundled examples run from the package without any install (word_sort finds its base class)', async () => {
  const dir = tempDir();
  mkdirSync(join(dir, 'data'));
  const wordSort = join(REPO_ROOT, 'examples', 'tinker_atropos', 'environments', 'word_sort_tinker.py');
  const result = await run(pythonOnPath(), [wordSort, 'process', '--env.total_steps', '2', '--env.use_wandb', 'false', '--openai.base_url', stub.baseUrl,
    '--openai.api_key', STUB_KEY, '--openai.model_name', 'right', '--openai.health_check', 'false'], { cwd: dir, env: { PYTHONPATH: FAKE_PYTHONPATH } });
  assert.equal(result.code, 0, result.stderr);
  const groups = readFileSync(join(dir, 'data', 'word_sort.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(groups.length, 2);
  assert.equal(groups[0].tokens.length, 8, 'group_size from config_init');
});
