/**
 * The fakes fail where upstream fails: each behaviour the
 * real atroposlib and tinker-atropos show, run directly against the fake processes, with the log
 * lines upstream prints. The upstream-style environments are in test/fakes/environments.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { stringify } from 'yaml';
import { gsm8kSolver } from './fakes/gsm8kAnswers.js';
import { startFakeOpenAI, type FakeOpenAI } from './fakes/openaiServer.js';
import { FakeWandb } from './fakes/wandbServer.js';
import { makeFakeInstall, type FakeInstall, type TrainerControl } from './helpers/fakeInstall.js';
import { assertInOrder, http, printed, queueBatches, run, runConfigYaml, start, startApi, trainerArgs, trainerDir, upstreamTrainerArgs, waitFor, type Proc } from './helpers/fakeProcesses.js';
import { makeFakeTinker } from './helpers/fakeTinker.js';
import { freePort, TEST_ENVIRONMENTS_DIR, tempDir } from './helpers/tmp.js';

const STUB_KEY = 'sk-upstream-endpoint-key-4d2b';
const TINKER_KEY = 'tml-upstream-test-secret-9a07';
// The trainer creates its training client and saves its checkpoints through the fake Tinker SDK.
const tinker = makeFakeTinker();
tinker.addKey(TINKER_KEY);
tinker.setModels(['Qwen/Qwen3-8B']);
const TRAINER_ENV = { TINKER_API_KEY: TINKER_KEY, FAKE_TINKER_STATE: tinker.dir };
const WANDB_KEY = 'wandb-upstream-test-key-0123456789abcdef01234567';
const RETRY_ERROR_OF_RETRY_ERROR = /^tenacity\.RetryError: RetryError\[<Future at 0x[0-9a-f]+ state=finished raised RetryError>\]$/;
const DUMMY_ALLOWED = { ATROPOS_ALLOW_DUMMY_MANAGED_SERVER: '1' };

const install: FakeInstall = await makeFakeInstall();
const stub: FakeOpenAI = await startFakeOpenAI({
  apiKey: STUB_KEY,
  models: {
    right: { mode: 'right' },
    wrong: { mode: 'wrong' },
    half: { mode: 'half' },
    'half-empty': { mode: 'half-empty' },
    fail: { mode: 'fail' },
    // Named per test, so that no request of another test counts.
    'single-config': { mode: 'right' },
    'one-entry-list': { mode: 'right' },
    baseline: { mode: 'right' },
    'serve-dropped': { mode: 'right' },
    'serve-same': { mode: 'right' },
    'equal-groups': { mode: 'right' },
  },
  solve: gsm8kSolver(),
  sglangModel: 'half',
});
after(() => stub.close());

const GSM8K = join(install.environmentsDir, 'gsm8k_tinker.py');
const testEnv = (name: string): string => join(TEST_ENVIRONMENTS_DIR, `${name}.py`);
const lastLine = (text: string): string => text.trimEnd().split('\n').at(-1) ?? '';
const count = (text: string, pattern: RegExp): number => (text.match(new RegExp(pattern.source, 'gm')) ?? []).length;

/** `--openai.*` flags for the stub as an openai-type server, with no health check. */
const stubFlags = (model: string, o: { key?: string; serverType?: string } = {}): string[] => [
  '--openai.base_url', stub.baseUrl, '--openai.api_key', o.key ?? STUB_KEY, '--openai.model_name', model,
  '--openai.server_type', o.serverType ?? 'openai', '--openai.health_check', 'false',
];

/** A YAML config whose `openai` list has `entries` entries, each the stub serving `model`. */
function openaiListYaml(model: string, entries: number): string {
  const path = join(tempDir(), 'openai.yaml');
  const entry = { base_url: stub.baseUrl, api_key: STUB_KEY, model_name: model, server_type: 'openai', health_check: false };
  writeFileSync(path, stringify({ openai: Array.from({ length: entries }, () => entry) }));
  return path;
}

/**
 * A trainer with its own config dir, started on the API at `api` as upstream runs it (uvicorn's
 * access log on); `wrapped`: through python/run_trainer.py, as the server starts it.
 */
async function startTrainer(api: string, o: { control?: TrainerControl; totalSteps?: number; useWandb?: boolean; env?: Record<string, string>; groupSize?: number; batchSize?: number; wrapped?: boolean } = {}) {
  const dir = trainerDir(o.control);
  const inferencePort = await freePort();
  writeFileSync(join(dir, 'config.yaml'), runConfigYaml({ api, inferencePort, useWandb: o.useWandb ?? false, totalSteps: o.totalSteps ?? 1, groupSize: o.groupSize, batchSize: o.batchSize }));
  const args = (o.wrapped ? trainerArgs : upstreamTrainerArgs)(install, 'config.yaml', inferencePort);
  const proc = start(install.python, args, { cwd: dir, env: { ...TRAINER_ENV, ...o.env } });
  return { proc, inference: `http://127.0.0.1:${inferencePort}` };
}

const registered = (trainer: Proc): Promise<true> => waitFor('the trainer registered', () => trainer.out().includes('Registered as trainer'));

/**
 * Gives an environment aimed at localhost:9004-9007 `seconds` after it printed its configs, then
 * kills it. Nothing answers there: its health check finds no server and its requests wait for one
 * for ever, or, if every attempt failed before the first probe did, it ends with the connection error.
 */
async function runSpread(proc: Proc, seconds: number): Promise<void> {
  await waitFor('the config printed', () => proc.out().includes('APIServerConfig(') || proc.out().includes('ServerBaseline('));
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const stillWaiting = proc.child.exitCode === null;
  proc.child.kill('SIGKILL');
  await proc.exit;
  assert.ok(stillWaiting || /^openai\.APIConnectionError: Connection error\.$/m.test(proc.err()), proc.err());
}

test('the trainer polls GET /batch until a batch arrives, with no timeout; all-equal groups are skipped, not trained on', async () => {
  const { url, proc: api } = await startApi(install);
  const { proc: trainer } = await startTrainer(url);
  await registered(trainer);
  await waitFor('five empty GET /batch answers', () => count(api.err(), /"GET \/batch HTTP\/1\.1" 200/) >= 5);
  assert.equal(trainer.child.exitCode, null, 'still waiting');
  assert.equal(lastLine(trainer.out()), 'Fetching data from Atropos...');

  const equal = { tokens: [[1, 2], [1, 3]], masks: [[-100, 2], [-100, 3]], inference_logprobs: [[1.0, -0.5], [1.0, -0.5]], scores: [1, 1] };
  await http('POST', `${url}/scored_data`, equal);
  await http('POST', `${url}/scored_data`, { ...equal, scores: [1, 0] });
  assert.equal((await trainer.exit).code, 0, trainer.err());
  assertInOrder(trainer.out(), ['Fetching data from Atropos...', 'Skipped 1 groups with zero advantages', 'Got 2 Datum objects', 'Reward/mean: 0.7500', 'Training complete!']);
});

test('sglang: managed_server posts input_ids to {base_url}/generate and the trainer answers tokens and logprobs; openai goes through chat completions', async () => {
  const { url } = await startApi(install);
  // Its sampling client exists before it registers, so its inference server answers from then on.
  const { proc: trainer, inference } = await startTrainer(url, { control: { hang_before_register: true, chat_answer: 'It is \\boxed{7}' } });
  await waitFor('the initial sampling client', () => trainer.out().includes('Initial sampling client created'));
  // The server thread binds on its own time (upstream then sleeps 3 s): ask once it answers.
  await waitFor('the inference server', () => http('GET', `${inference}/health`).then((r) => r.status === 200 || undefined, () => undefined));

  const one = await http('POST', `${inference}/generate`, { input_ids: [72, 105], sampling_params: { max_new_tokens: 5 } });
  assert.equal(one.status, 200);
  assert.equal(one.json.text, 'It is');
  assert.deepEqual(one.json.meta_info.output_token_logprobs.map((t: [number, number, string]) => [t[1], t[2]]), [[73, 'I'], [116, 't'], [32, ' '], [105, 'i'], [115, 's']]);
  assert.ok(one.json.meta_info.output_token_logprobs.every((t: [number]) => t[0] < 0), 'real logprobs');
  const two = await http('POST', `${inference}/generate`, { input_ids: [72], sampling_params: { n: 2 } });
  assert.ok(Array.isArray(two.json) && two.json.length === 2, 'n > 1: a list');
  assert.equal((await http('POST', `${inference}/generate`, { sampling_params: {} })).json.detail, 'Generation failed: 400: input_ids is required');

  const out = tempDir();
  const processWith = (serverType: string) =>
    run(install.python, [GSM8K, 'process', '--env.total_steps', '1', '--env.group_size', '2', '--env.use_wandb', 'false',
      '--env.data_path_to_save_groups', join(out, `${serverType}.jsonl`), '--openai.base_url', `${inference}/v1`, '--openai.server_type', serverType,
      '--openai.health_check', 'false'], { cwd: install.root, env: DUMMY_ALLOWED });
  const accessLog = () => ({ generate: count(trainer.err(), /"POST \/generate HTTP/), chat: count(trainer.err(), /"POST \/v1\/chat\/completions HTTP/) });
  // The access lines of the three calls above reach the log on the server's own time: counted from once they are all there.
  await waitFor('the access lines of the three calls', () => accessLog().generate === 3 || undefined);
  const before = accessLog();
  assert.equal((await processWith('sglang')).code, 0);
  const afterSglang = accessLog();
  assert.deepEqual([afterSglang.generate - before.generate, afterSglang.chat - before.chat], [1, 0]);
  const group = JSON.parse(readFileSync(join(out, 'sglang.jsonl'), 'utf8'));
  const generated = [...'It is \\boxed{7}'].map((c) => c.codePointAt(0)!);
  const prompt = group.tokens[0].length - generated.length - 1;
  assert.deepEqual(group.tokens[0].slice(prompt, -1), generated, 'the sampled ids follow the prompt, then EOS');
  assert.ok(group.masks[0].slice(0, prompt).every((m: number) => m === -100) && group.masks[0][prompt] === generated[0]);
  assert.ok(group.inference_logprobs[0].slice(0, prompt).every((lp: number) => lp === 1.0) && group.inference_logprobs[0].slice(prompt).every((lp: number) => lp < 0));

  assert.equal((await processWith('openai')).code, 0);
  const afterOpenai = accessLog();
  assert.deepEqual([afterOpenai.generate - afterSglang.generate, afterOpenai.chat - afterSglang.chat], [0, 1]);
  assert.deepEqual(JSON.parse(readFileSync(join(out, 'openai.jsonl'), 'utf8')).tokens[0], [...Array(128).keys()], 'DummyManagedServer placeholders');
  trainer.child.kill('SIGKILL');
});

test('one server config is a template: spread over localhost:9004-9007 with api_key "x"; a one-entry YAML list does not help, two entries do; process ignores --openai.* for a ServerBaseline and exits 2 for two default servers', async () => {
  const spread = await run(install.python, ['-c', [
    'from atroposlib.envs.base import APIServerConfig, ServerBaseline',
    'from atroposlib.envs.server_handling.server_manager import ServerManager',
    'import json',
    `single = ServerManager(APIServerConfig(base_url="${stub.baseUrl}", api_key="secret", model_name="m", server_type="sglang"))`,
    'baseline = ServerManager(ServerBaseline(model_name="b"))',
    'print(json.dumps([[s.config.base_url, s.config.api_key, s.config.model_name, type(s).__name__] for s in single.servers + baseline.servers]))',
  ].join('\n')], { cwd: install.root });
  const ports = [9004, 9005, 9006, 9007];
  assert.deepEqual(JSON.parse(spread.stdout), [
    ...ports.map((p) => [`http://localhost:${p}/v1`, 'x', 'm', 'SGLangServer']),
    ...ports.map((p) => [`http://localhost:${p}/v1`, 'x', 'b', 'OpenAIServer']),
  ]);

  const common = ['process', '--env.total_steps', '1', '--env.group_size', '2', '--env.use_wandb', 'false', '--env.data_path_to_save_groups'];
  const out = tempDir();
  const single = start(install.python, [testEnv('gsm8k_server'), ...common, join(out, 'a.jsonl'), ...stubFlags('single-config')], { cwd: install.root, env: DUMMY_ALLOWED });
  const oneEntry = start(install.python, [testEnv('gsm8k_server'), ...common, join(out, 'b.jsonl'), '--config', openaiListYaml('one-entry-list', 1)], { cwd: install.root, env: DUMMY_ALLOWED });
  const baseline = start(install.python, [testEnv('gsm8k_baseline'), ...common, join(out, 'c.jsonl'), ...stubFlags('baseline')], { cwd: install.root, env: DUMMY_ALLOWED });
  const [twoEntries, twoDefaults] = await Promise.all([
    run(install.python, [testEnv('gsm8k_server'), ...common, join(out, 'd.jsonl'), '--config', openaiListYaml('half', 2)], { cwd: install.root, env: DUMMY_ALLOWED }),
    run(install.python, [testEnv('gsm8k_two_servers'), 'process', '--openai.model_name', 'x'], { cwd: install.root }),
    runSpread(single, 2),
    runSpread(oneEntry, 2),
    runSpread(baseline, 2),
  ]);
  assert.equal(printed(single.out(), 'base_url'), `'${stub.baseUrl}'`, 'the merged config names the endpoint...');
  assert.equal(printed(oneEntry.out(), 'base_url'), `'${stub.baseUrl}'`);
  for (const model of ['single-config', 'one-entry-list', 'baseline']) assert.equal(stub.requests.filter((r) => r.model === model).length, 0, `...but ${model} is never asked`);
  assert.match(baseline.out(), /^ServerBaseline\(/m);
  assert.equal(printed(baseline.out(), 'base_url'), undefined, 'the --openai.* flags are not in it');

  assert.equal(twoEntries.code, 0, twoEntries.stderr);
  assert.ok(stub.requestsFor('half').length > 0);
  assert.equal(readFileSync(join(out, 'd.jsonl'), 'utf8').trim().split('\n').length, 1);
  assert.equal(twoDefaults.code, 2);
  assert.match(twoDefaults.stderr, /CLI overrides for OpenAI settings \(--openai\.\*\) are not supported when multiple servers are defined/);
});

test('groups whose scores are all equal are dropped: an always-right or always-wrong model is retried forever; scores are -1/1', async () => {
  const out = tempDir();
  const args = (model: string) => [testEnv('gsm8k_server'), 'process', '--env.total_steps', '2', '--env.group_size', '4', '--env.use_wandb', 'false',
    '--env.data_path_to_save_groups', join(out, `${model}.jsonl`), '--config', openaiListYaml(model, 2)];
  const right = start(install.python, args('right'), { cwd: install.root, env: DUMMY_ALLOWED });
  const wrong = start(install.python, args('wrong'), { cwd: install.root, env: DUMMY_ALLOWED });
  const half = await run(install.python, args('half'), { cwd: install.root, env: DUMMY_ALLOWED });
  for (const proc of [right, wrong]) {
    await waitFor('three retries', () => count(proc.err(), /^Failed to process group, retrying\.\.\.$/) >= 3);
    assert.equal(proc.child.exitCode, null, 'still running');
    assert.doesNotMatch(proc.out(), /Successfully processed group/);
    proc.child.kill('SIGKILL');
    await proc.exit;
  }
  assert.equal(half.code, 0, half.stderr);
  assert.doesNotMatch(half.stderr, /Failed to process group/);
  const groups = readFileSync(join(out, 'half.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(groups.map((g) => [...g.scores].sort()), [[-1, -1, 1, 1], [-1, -1, 1, 1]]);
});

test('endpoint errors end in tenacity.RetryError, with the real cause (401, 404 model, 500) earlier in the traceback', async () => {
  const dir = tempDir();
  const processWith = (model: string, o: { key?: string; serverType?: string } = {}) =>
    run(install.python, [GSM8K, 'process', '--env.total_steps', '1', '--env.group_size', '2', '--env.use_wandb', 'false',
      '--env.data_path_to_save_groups', join(dir, `${model}-${o.serverType ?? 'openai'}.jsonl`), ...stubFlags(model, o)], { cwd: install.root, env: DUMMY_ALLOWED });
  const [badKey, noModel, failing, badKeyGenerate] = await Promise.all([
    processWith('right', { key: 'sk-wrong' }),
    processWith('no/such-model'),
    processWith('fail'),
    processWith('half', { key: 'sk-wrong', serverType: 'sglang' }),
  ]);
  const causes: [typeof badKey, RegExp][] = [
    [badKey, /^openai\.AuthenticationError: Error code: 401 - \{'error': \{'message': 'No auth credentials found', 'code': 401\}\}$/],
    [noModel, /^openai\.NotFoundError: Error code: 404 - \{'error': \{'message': 'no\/such-model is not a valid model ID', 'code': 404\}\}$/],
    [failing, /^openai\.InternalServerError: Error code: 500 - \{'error': \{'message': 'Internal server error', 'type': 'server_error', 'code': 500\}\}$/],
  ];
  for (const [result, cause] of causes) {
    assert.equal(result.code, 1);
    assertInOrder(result.stderr, [cause, 'The above exception was the direct cause of the following exception:', /^tenacity\.RetryError: .* raised \w+Error>\]$/,
      'The above exception was the direct cause of the following exception:', RETRY_ERROR_OF_RETRY_ERROR]);
    assert.match(lastLine(result.stderr), RETRY_ERROR_OF_RETRY_ERROR);
  }
  // The sglang token path has one tenacity layer, and aiohttp's error as the cause.
  assert.equal(badKeyGenerate.code, 1);
  assertInOrder(badKeyGenerate.stderr, [/^aiohttp\.client_exceptions\.ClientResponseError: 401, message='Unauthorized', url='http:\/\/127\.0\.0\.1:\d+\/generate'$/]);
  assert.match(lastLine(badKeyGenerate.stderr), /^tenacity\.RetryError: RetryError\[<Future at 0x[0-9a-f]+ state=finished raised ClientResponseError>\]$/);
});

test('W&B refusing the key or out of reach: "Error initializing wandb", then the trainer dies on the read-only use_wandb (exit 1)', async () => {
  const wandb = await FakeWandb.start({ apiKey: WANDB_KEY });
  after(() => wandb.close());
  const { url } = await startApi(install);
  const attempt = (env: Record<string, string>) => startTrainer(url, { useWandb: true, env }).then(({ proc }) => proc);
  const [refused, unreachable, accepted] = await Promise.all([
    attempt({ WANDB_API_KEY: 'wandb-wrong-key', WANDB_BASE_URL: wandb.url }),
    attempt({ WANDB_API_KEY: WANDB_KEY, WANDB_BASE_URL: `http://127.0.0.1:${await freePort()}`, WANDB_INIT_TIMEOUT: '1' }),
    attempt({ WANDB_API_KEY: WANDB_KEY, WANDB_BASE_URL: wandb.url }),
  ]);
  await registered(accepted);
  await queueBatches(url, 1);
  const noSetter = "property 'use_wandb' of 'TinkerAtroposConfig' object has no setter";
  for (const [proc, why] of [
    [refused, 'failed to upsert bucket: returned error 401 Unauthorized: {"errors":[{"message":"user is not logged in"}]}'],
    [unreachable, 'Run initialization has timed out after 1.0 sec. Please try increasing the timeout with the `init_timeout` setting: `wandb.init(settings=wandb.Settings(init_timeout=120))`.'],
  ] as const) {
    assert.equal((await proc.exit).code, 1);
    assertInOrder(proc.out(), [/^Registered as trainer/, `Error initializing wandb: ${why}`, `Error during training: ${noSetter}`]);
    assertInOrder(proc.err(), ['During handling of the above exception, another exception occurred:', `AttributeError: ${noSetter}`]);
  }
  assert.equal((await accepted.exit).code, 0, accepted.out());
  assert.match(accepted.out(), /^Wandb initialized \(trainer\): /m);
});

test('an environment without managed_server sends no inference_logprobs: the trainer fails step 0 after setup and a first batch', async () => {
  const { url } = await startApi(install);
  const { proc: trainer } = await startTrainer(url, { totalSteps: 2, groupSize: 2, batchSize: 2 });
  await registered(trainer);
  const config = join(tempDir(), 'config.yaml');
  writeFileSync(config, runConfigYaml({ api: url, inferencePort: 0, useWandb: false, totalSteps: 2, groupSize: 2, batchSize: 2,
    openai: { model_name: 'half', base_url: stub.baseUrl, api_key: STUB_KEY, server_type: 'openai', health_check: false } }));
  const env = start(install.python, [testEnv('gsm8k_unmanaged'), 'serve', '--config', config], { cwd: install.root });
  assert.equal((await trainer.exit).code, 0, 'the upstream quirk: "Error in step" still exits 0');
  env.child.kill('SIGKILL');
  assertInOrder(trainer.out(), [/^Registered as trainer/, 'Step 0/2', 'Fetching data from Atropos...', "Error in step 0: 'NoneType' object is not subscriptable",
    'Training complete!', 'Training completed successfully!']);
  assert.match(trainer.err(), /Traceback[\s\S]*TypeError: 'NoneType' object is not subscriptable/);
  assert.doesNotMatch(trainer.out(), /Step 0 complete/);
});

test('health_check (on by default) sends a 1-token request every second for the whole run; health_check: false sends none', async () => {
  const serve = async (healthCheck?: boolean) => {
    const { url } = await startApi(install);
    const { proc: trainer, inference } = await startTrainer(url, { control: { step_seconds: 0.5 }, totalSteps: 100 });
    await registered(trainer);
    const config = join(tempDir(), 'config.yaml');
    const port = Number(new URL(inference).port);
    writeFileSync(config, runConfigYaml({ api: url, inferencePort: port, useWandb: false, totalSteps: 100, ...(healthCheck === undefined ? {} : { openai: { health_check: healthCheck } }) }));
    const env = start(install.python, [GSM8K, 'serve', '--config', config], { cwd: install.root });
    await waitFor('the first rollout', () => count(trainer.err(), /"POST \/generate HTTP/) > 0);
    await new Promise((r) => setTimeout(r, 3500));
    const probes = count(trainer.err(), /"POST \/v1\/completions HTTP\/1\.1" 200/);
    for (const proc of [env, trainer]) proc.child.kill('SIGKILL');
    return probes;
  };
  const [byDefault, off] = await Promise.all([serve(), serve(false)]);
  assert.ok(byDefault >= 3 && byDefault <= 6, `one probe a second, got ${byDefault}`);
  assert.equal(off, 0);
});

test('process: W&B forced on unless told otherwise, data/<name>.jsonl by default then _1, and a group of the wrong size is processed but not written', async () => {
  const cwd = tempDir();
  const processWith = (model: string, extra: string[] = ['--env.use_wandb', 'false']) =>
    run(install.python, [GSM8K, 'process', '--env.total_steps', '1', '--env.group_size', '4', ...stubFlags(model), ...extra], { cwd, env: DUMMY_ALLOWED });
  const first = await processWith('half');
  assert.equal(first.code, 0, first.stderr);
  const second = await processWith('half');
  assert.equal(second.code, 0, second.stderr);
  assert.equal(readFileSync(join(cwd, 'data', 'gsm8k.jsonl'), 'utf8').trim().split('\n').length, 1);
  assert.equal(readFileSync(join(cwd, 'data', 'gsm8k_1.jsonl'), 'utf8').trim().split('\n').length, 1);

  const [wandbOn, wrongSize] = await Promise.all([
    processWith('half', []),
    processWith('half-empty', ['--env.use_wandb', 'false', '--env.data_path_to_save_groups', join(cwd, 'short.jsonl')]),
  ]);
  assert.equal(wandbOn.code, 1);
  assert.match(lastLine(wandbOn.stderr), /^wandb\.errors\.UsageError: api_key not configured \(no-tty\)/);
  assert.equal(wrongSize.code, 0, wrongSize.stderr);
  assert.match(wrongSize.stderr, /^Group structure invalid, or token count mismatch \(expected 4\), or 'tokens' key missing\. Skipping group: /m);
  assert.match(wrongSize.stdout, /^Successfully processed group 1\/1$/m);
  assert.equal(readFileSync(join(cwd, 'short.jsonl'), 'utf8'), '', 'nothing written');
});

test('an environment has only its own folder on sys.path: importing tinker_atropos needs the editable install, else it dies after the trainer registered', async () => {
  const bare = await makeFakeInstall({ editableInstall: false });
  const { url } = await startApi(bare);
  const dir = trainerDir();
  const inferencePort = await freePort();
  writeFileSync(join(dir, 'config.yaml'), runConfigYaml({ api: url, inferencePort, useWandb: false, openai: { model_name: 'half', base_url: stub.baseUrl, api_key: STUB_KEY } }));
  // launch_training.py itself imports tinker_atropos.config: its own folder is the checkout.
  const trainer = start(bare.python, trainerArgs(bare, 'config.yaml', inferencePort), { cwd: dir, env: TRAINER_ENV });
  await registered(trainer);
  const env = await run(bare.python, [testEnv('gsm8k_checkout'), 'serve', '--config', join(dir, 'config.yaml')], { cwd: bare.root });
  trainer.child.kill('SIGKILL');
  assert.equal(env.code, 1);
  assert.equal(lastLine(env.stderr), "ModuleNotFoundError: No module named 'tinker_atropos'");

  const installed = await run(install.python, [testEnv('gsm8k_checkout'), 'process', '--env.total_steps', '1', '--env.group_size', '2', '--env.use_wandb', 'false',
    '--env.data_path_to_save_groups', join(tempDir(), 'out.jsonl'), ...stubFlags('half')], { cwd: install.root });
  assert.equal(installed.code, 0, installed.stderr);
  assert.equal(printed(installed.stdout, 'tokenizer_name'), "'meta-llama/Llama-3.1-8B-Instruct'", 'read from tinker_atropos.config');
});

test('GET /latest_example: the most recent scored group, the empty example before any', async () => {
  const { url } = await startApi(install);
  assert.deepEqual((await http('GET', `${url}/latest_example`)).json.scores, []);
  await http('POST', `${url}/scored_data`, { tokens: [[1]], masks: [[1]], scores: [-1] });
  await http('POST', `${url}/scored_data`, { tokens: [[2]], masks: [[2]], scores: [1] });
  const latest = (await http('GET', `${url}/latest_example`)).json;
  assert.deepEqual([latest.tokens, latest.scores], [[[2]], [1]]);
});

/** A `serve` config on the API at `api`: `entries` openai entries, each the stub serving `model`. */
function serveYaml(api: string, model: string, entries: number, env: Record<string, unknown> = {}): string {
  const path = join(tempDir(), 'serve.yaml');
  const entry = { base_url: stub.baseUrl, api_key: STUB_KEY, model_name: model, server_type: 'openai', health_check: false };
  const envConfig = { group_size: 2, batch_size: 4, total_steps: 20, tokenizer_name: 'Qwen/Qwen3-8B', use_wandb: false, wandb_name: 'gsm8k', rollout_server_url: api, ...env };
  writeFileSync(path, stringify({ env: envConfig, openai: Array.from({ length: entries }, () => entry), slurm: false, testing: false }));
  return path;
}

const PLACEHOLDER_TOKENS = [...Array(128).keys()];

test('process against an OpenAI endpoint writes placeholders: tokens 0..127, masks [-100, 1..127], logprobs -0.5, and those tokens decoded as the only text of an environment that keeps no messages', async () => {
  const out = join(tempDir(), 'groups.jsonl');
  const result = await run(install.python, [testEnv('gsm8k_tinker_upstream'), 'process', '--env.total_steps', '1', '--env.group_size', '4', '--env.use_wandb', 'false',
    '--env.data_path_to_save_groups', out, ...stubFlags('half')], { cwd: install.root, env: DUMMY_ALLOWED });
  assert.equal(result.code, 0, result.stderr);
  const text = readFileSync(out, 'utf8');
  const group = JSON.parse(text);
  assert.deepEqual(group.tokens, Array(4).fill(PLACEHOLDER_TOKENS));
  assert.deepEqual(group.masks, Array(4).fill([-100, ...PLACEHOLDER_TOKENS.slice(1)]));
  assert.deepEqual(group.inference_logprobs, Array(4).fill(Array(128).fill(-0.5)));
  assert.deepEqual(group.messages, Array(4).fill([{ role: 'user', content: String.fromCodePoint(...PLACEHOLDER_TOKENS) }]), 'include_messages, forced by process, decodes the placeholders');
  assert.deepEqual([...group.scores].sort(), [0, 0, 1, 1], 'the scores come from the real text');
  assert.ok(stub.requestsFor('half').length > 0);
  assert.doesNotMatch(text, /boxed|step by step/, 'the model\'s text is nowhere in the file');
});

test('serve configures no logging: no INFO line, warnings bare (no level prefix), and a group score() drops is not logged at all', async () => {
  const { url } = await startApi(install);
  const { proc: trainer } = await startTrainer(url, { totalSteps: 20 });
  await registered(trainer);
  // gsm8k_server returns None for equal scores; the bundled gsm8k keeps them, so atroposlib drops them when asked to.
  const dropped = start(install.python, [testEnv('gsm8k_server'), 'serve', '--config', serveYaml(url, 'serve-dropped', 2)], { cwd: install.root, env: DUMMY_ALLOWED });
  const same = start(install.python, [GSM8K, 'serve', '--config', serveYaml(url, 'serve-same', 1, { ensure_scores_are_not_same: true })], { cwd: install.root, env: DUMMY_ALLOWED });
  await waitFor('three groups of each', () => stub.requestsFor('serve-dropped').length >= 3 && stub.requestsFor('serve-same').length >= 3);
  await waitFor('the bare warning', () => count(same.err(), /^Scores are the same in a group, skipping\.\.\.$/) >= 3);
  for (const proc of [dropped, same]) proc.child.kill('SIGKILL');
  await Promise.all([dropped.exit, same.exit]);
  for (const proc of [dropped, same]) {
    const log = proc.out() + proc.err();
    assert.doesNotMatch(log, /\bINFO\b|^(?:DEBUG|WARNING|ERROR):/m, 'no logging configured: no INFO line, no level prefix');
    assert.doesNotMatch(log, /Failed to process group|No trajectories collected/, '"Failed to process group" is process only; score() returning None is said at DEBUG');
  }
  assert.doesNotMatch(dropped.err(), /Scores are the same/);
  assert.equal((await http('GET', `${url}/status`)).json.queue_size, 0, 'nothing reached the API');
  trainer.child.kill('SIGKILL');
});

test('gsm8k_tinker sends groups of equal scores (ensure_scores_are_not_same false): the trainer skips them, "Got 0 Datum objects", Loss 0.0', async () => {
  const { url } = await startApi(install);
  const { proc: trainer } = await startTrainer(url, { totalSteps: 1, groupSize: 2, batchSize: 4 });
  await registered(trainer);
  const env = start(install.python, [testEnv('gsm8k_tinker_upstream'), 'serve', '--config', serveYaml(url, 'equal-groups', 1)], { cwd: install.root, env: DUMMY_ALLOWED });
  assert.equal((await trainer.exit).code, 0, trainer.out());
  env.child.kill('SIGKILL');
  assert.deepEqual((await http('GET', `${url}/latest_example`)).json.scores, [1, 1], 'an always-right model: a group of equal scores, sent');
  assertInOrder(trainer.out(), ['Step 0/1', 'Fetching data from Atropos...', 'Skipped 2 groups with zero advantages', 'Got 0 Datum objects', 'Loss: 0.0', 'Reward/mean: 1.0000', 'Step 0 complete - Loss: 0.0', 'Training complete!']);
});

test('the API hands out whole groups summing exactly to batch_size: groups of 8 never fill a batch of 12, groups of 4 do', async () => {
  const batchOf = async (groupSize: number): Promise<unknown> => {
    const { url } = await startApi(install);
    await http('POST', `${url}/register`, { wandb_group: 'g', wandb_project: 'p', batch_size: 12, max_token_len: 2048, checkpoint_dir: tempDir(), save_checkpoint_interval: 0, starting_step: 0, num_steps: 10 });
    const group = { tokens: Array(groupSize).fill([1, 2]), masks: Array(groupSize).fill([-100, 2]), scores: Array.from({ length: groupSize }, (_, i) => i % 2) };
    for (let i = 0; i < 24 / groupSize; i++) await http('POST', `${url}/scored_data`, group);
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push((await http('GET', `${url}/batch`)).json.batch);
    return answers.map((batch) => (Array.isArray(batch) ? batch.map((g: { tokens: unknown[] }) => g.tokens.length) : batch));
  };
  assert.deepEqual(await batchOf(8), [null, null, null], '24 sequences queued, and no batch of 12 ever comes');
  assert.deepEqual(await batchOf(4), [[4, 4, 4], [4, 4, 4], null]);
});

test('the Tinker SDK refuses a key without the tml- (or eyJ) prefix when the trainer makes its client, after start-up', async () => {
  const { url } = await startApi(install);
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.e30.sig';
  tinker.addKey(jwt); // well-formed and known to the service: only the prefix is on trial here
  const [refused, token] = await Promise.all([
    startTrainer(url, { env: { TINKER_API_KEY: 'sk-not-a-tinker-key-0123' } }),
    startTrainer(url, { env: { TINKER_API_KEY: jwt }, control: { hang_before_register: true } }),
  ]);
  assert.equal((await refused.proc.exit).code, 1);
  assertInOrder(refused.proc.out(), ['Starting Tinker-Atropos Training', /^Creating ServiceClient for /, "Error during training: The api_key must start with the 'tml-' prefix"]);
  await waitFor('the token accepted', () => token.proc.out().includes('Initial sampling client created'));
  token.proc.child.kill('SIGKILL');
});

test('uvicorn logs one access line per request unless access_log is off: run through python/run_trainer.py, the trainer log holds no POST /generate', async () => {
  const { url } = await startApi(install);
  const control = { hang_before_register: true };
  const [upstream, wrapped] = await Promise.all([startTrainer(url, { control }), startTrainer(url, { control, wrapped: true })]);
  for (const { proc, inference } of [upstream, wrapped]) {
    await waitFor('the initial sampling client', () => proc.out().includes('Initial sampling client created'));
    await waitFor('the inference server', () => http('GET', `${inference}/health`).then((r) => r.status === 200 || undefined, () => undefined));
    for (let i = 0; i < 3; i++) assert.equal((await http('POST', `${inference}/generate`, { input_ids: [72, 105], sampling_params: { max_new_tokens: 4 } })).status, 200);
  }
  assert.equal(count(upstream.proc.err(), /"POST \/generate HTTP\/1\.1" 200/), 3, 'upstream: one line per sampling call');
  const wrappedLog = wrapped.proc.out() + wrapped.proc.err();
  assert.equal(count(wrappedLog, /POST \/generate/), 0, wrappedLog);
  assert.match(wrapped.proc.err(), /Uvicorn running on http:\/\/127\.0\.0\.1:\d+/, 'the server itself still says where it listens');
  for (const { proc } of [upstream, wrapped]) proc.child.kill('SIGKILL');
});
