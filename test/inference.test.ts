/**
 * rl_test_inference through the MCP client: refusals, the Hermes arithmetic over what the
 * bundled gsm8k environment really writes in `process` mode against the fake endpoint, fresh
 * files per test, and timeouts.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { processCommand } from '../src/runtime/inference/command.js';
import { ModelProcess } from '../src/runtime/inference/modelProcess.js';
import { scoreGroups, summarize } from '../src/runtime/inference/scoring.js';
import { REDACTED, SecretRedactor } from '../src/core/redact.js';
import { Runtime } from '../src/runtime/wiring/runtime.js';
import { loadSettings } from '../src/runtime/config/settings.js';
import { GSM8K_FILE } from './fakes/gsm8kAnswers.js';
import { connectInMemory } from './helpers/client.js';
import { assertKeyNowhereUnder, KEY, selectGsm8k, startEndpoint } from './helpers/inference.js';
import { isAlive, waitUntil } from './helpers/runs.js';
import { pythonOnPath, tempDir, testEnv } from './helpers/tmp.js';

const endpoint = await startEndpoint({
  'qwen/qwen3-8b': { mode: 'right' },
  'test/half': { mode: 'half' },
  'test/fail': { mode: 'fail' },
  'test/hang': { mode: 'hang' },
  'test/flip': { mode: 'right' },
  'test/empty': { mode: 'empty' },
});
const h = await connectInMemory({ OPENROUTER_API_KEY: KEY });
const base = { base_url: endpoint.baseUrl, num_steps: 2, group_size: 4, wait_seconds: 280, timeout_seconds: 120 };

test('refuses without a selected environment, without the key, and on bad arguments', async () => {
  const none = await h.call('rl_test_inference', base);
  assert.equal(none.isError, true);
  assert.match(none.json.error, /No environment selected/);

  await selectGsm8k(h);
  const noKey = await h.call('rl_test_inference', { ...base, api_key_env: 'RL_TEST_UNSET_API_KEY' });
  assert.equal(noKey.isError, true);
  assert.match(noKey.json.error, /RL_TEST_UNSET_API_KEY not set/);
  assert.equal(noKey.json.missing, 'RL_TEST_UNSET_API_KEY');

  // Set in the server's environment, but not an endpoint key: never sent anywhere.
  const notAKey = await h.call('rl_test_inference', { ...base, api_key_env: 'PATH' });
  assert.equal(notAKey.isError, true);
  assert.match(notAKey.json.error, /must name an endpoint key variable ending in _API_KEY/);

  const serviceKey = await h.call('rl_test_inference', { ...base, api_key_env: 'TINKER_API_KEY' });
  assert.equal(serviceKey.isError, true);
  assert.match(serviceKey.json.error, /TINKER_API_KEY/);

  for (const base_url of ['ftp://example.com/v1', 'not a url', 'https://user:pw@example.com/v1']) {
    const bad = await h.call('rl_test_inference', { ...base, base_url });
    assert.equal(bad.isError, true, base_url);
    assert.match(bad.json.error, /base_url/, base_url);
  }
  for (const args of [{ num_steps: 0 }, { num_steps: 51 }, { group_size: 65 }, { models: [] }, { models: Array(9).fill('a/b') }, { models: ['has space'] }, { wait_seconds: 281 }, { num_steps: 1.5 }]) {
    const bad = await h.call('rl_test_inference', { ...base, ...args });
    assert.equal(bad.isError, true, JSON.stringify(args));
  }
  const unknown = await h.call('rl_test_inference', { test_id: 'deadbeef' });
  assert.equal(unknown.isError, true);
  assert.match(unknown.json.error, /Inference test 'deadbeef' not found/);
  assert.equal(endpoint.requests.length, 0, 'no refused call reached the endpoint');
});

test('three models, one failing: counts, accuracy, summary, and the failure with its log', async () => {
  const { json, isError, raw } = await h.call('rl_test_inference', { ...base, models: ['qwen/qwen3-8b', 'test/half', 'test/fail'] });
  assert.equal(isError, false, JSON.stringify(json));
  assert.equal(json.status, 'completed');
  assert.match(json.test_id, /^[0-9a-f]{8}$/);
  assert.equal(json.environment, 'gsm8k');
  assert.match(json.environment_file, /gsm8k_tinker\.py$/);
  assert.deepEqual(
    { ...json.test_config, base_url: undefined, server_type: undefined },
    { num_steps: 2, group_size: 4, rollouts_per_model: 8, total_rollouts: 24, base_url: undefined, server_type: undefined },
  );

  const [right, half, fail] = json.models_tested;
  // A known id keeps its name and scale next to custom ones (Hermes dropped the custom ones).
  assert.deepEqual([right.name, right.scale, half.name, half.scale], ['Qwen3 8B', 'small', 'test/half', 'custom']);
  // The answer counts per step; every completion's score is in result_file.
  assert.deepEqual(right.steps, [1, 2].map((step) => ({ step, completions: 4, correct: 4 })));
  const stored = JSON.parse(readFileSync(json.result_file, 'utf8'));
  assert.equal(json.result_file, join(json.summary.output_directory, 'result.json'));
  assert.deepEqual(stored.models_tested[0].steps, [1, 2].map((step) => ({ step, completions: 4, correct: 4, scores: [1, 1, 1, 1] })));
  assert.deepEqual(stored.models_tested[1].steps, [1, 2].map((step) => ({ step, completions: 4, correct: 2, scores: [1, 0, 1, 0] })));
  assert.deepEqual(
    [right.steps_tested, right.total_completions, right.correct_completions, right.accuracy, right.steps_with_correct, right.step_success_rate],
    [2, 8, 8, 1, 2, 1],
  );
  assert.deepEqual(half.steps, [1, 2].map((step) => ({ step, completions: 4, correct: 2 })));
  assert.deepEqual([half.total_completions, half.correct_completions, half.accuracy, half.step_success_rate], [8, 4, 0.5, 1]);
  // The training signal: the always-right model's groups are all alike, the half-right one's all mixed.
  assert.deepEqual(right.signal, { groups: 2, mixed_share: 0, all_right_share: 1, all_wrong_share: 0, reward_range: [1, 1], invalid_rewards: 0, rewards: 8 });
  assert.deepEqual(half.signal, { groups: 2, mixed_share: 1, all_right_share: 0, all_wrong_share: 0, reward_range: [0, 1], invalid_rewards: 0, rewards: 8 });
  assert.equal(fail.signal, undefined);
  assert.equal(right.error, undefined);
  assert.equal(half.error, undefined);

  assert.equal(fail.steps_tested, 0);
  assert.equal(typeof fail.error, 'string');
  assert.ok(fail.error.length > 0);
  assert.ok(existsSync(fail.log_file), 'the failing model has its log');
  assert.match(fail.error, /Process exited with code 1: .+/);
  // As upstream: tenacity's RetryError ends stderr; the endpoint's error is the cause, earlier in the log.
  assert.match(fail.stderr_tail, /tenacity\.RetryError: RetryError\[<Future at 0x[0-9a-f]+ state=finished raised RetryError>\]$/);
  assert.match(readFileSync(fail.log_file, 'utf8'), /Traceback[\s\S]*openai\.InternalServerError: Error code: 500/);

  assert.deepEqual(json.summary, {
    steps_requested: 2,
    models_tested: 3,
    models_succeeded: 2,
    best_model: 'qwen/qwen3-8b',
    avg_accuracy: 0.75,
    environment_working: true,
    output_directory: join(h.runtime.settings.home, 'inference_tests', json.test_id),
  });
  for (const m of json.models_tested) assert.equal(dirname(m.output_file), json.summary.output_directory);
  // Every completion was asked for with the key; four choices per request.
  const asked = endpoint.requestsFor('qwen/qwen3-8b');
  assert.ok(asked.length >= 2 && asked.every((r) => r.n === 4), JSON.stringify(asked.map((r) => r.n)));
  assert.ok(!JSON.stringify(raw).includes(KEY));
  assertKeyNowhereUnder(h.runtime.settings.home);
});

test('a second test of the same environment never reads the first one\'s files', async () => {
  endpoint.models['test/flip'] = { mode: 'right' };
  const first = await h.call('rl_test_inference', { ...base, models: ['test/flip'] });
  assert.equal(first.json.models_tested[0].accuracy, 1);
  const firstFile = first.json.models_tested[0].output_file;
  const firstContent = readFileSync(firstFile, 'utf8');

  endpoint.models['test/flip'] = { mode: 'wrong' };
  const second = await h.call('rl_test_inference', { ...base, models: ['test/flip'] });
  const model = second.json.models_tested[0];
  assert.equal(model.steps_tested, 2);
  assert.equal(model.accuracy, 0, 'the second test scored its own (wrong) answers, not the first file');
  assert.notEqual(second.json.summary.output_directory, first.json.summary.output_directory);
  assert.notEqual(model.output_file, firstFile);
  assert.equal(readFileSync(firstFile, 'utf8'), firstContent, 'the first test\'s file is untouched');
  for (const dir of [first.json.summary.output_directory, second.json.summary.output_directory]) {
    assert.deepEqual(readdirSync(dir).filter((f) => /_\d+\.jsonl$/.test(f)), [], 'atroposlib never had to pick a _1 name');
  }
});

test('`environment` tests the one named, with nothing selected, and selects nothing', async () => {
  const fresh = await connectInMemory({ OPENROUTER_API_KEY: KEY });
  const unknown = await fresh.call('rl_test_inference', { ...base, environment: 'nope' });
  assert.equal(unknown.isError, true);
  assert.match(unknown.json.error, /^Unknown environment 'nope'/);
  const named = await fresh.call('rl_test_inference', { ...base, num_steps: 1, models: ['qwen/qwen3-8b'], environment: 'gsm8k' });
  assert.equal(named.isError, false, JSON.stringify(named.json));
  assert.equal(named.json.environment, 'gsm8k');
  assert.equal(named.json.models_tested[0].accuracy, 1);
  assert.match((await fresh.call('rl_get_current_config')).json.error, /No environment selected/);
});

test('a model that hangs is killed at its timeout and reported timed out; the others are unaffected', async () => {
  // The timeout is each model's, and the answering model must finish inside it: 3 s was too short
  // for its Python process on a loaded 2-core CI machine (it timed out too).
  const { json } = await h.call('rl_test_inference', { ...base, timeout_seconds: 9, models: ['test/hang', 'qwen/qwen3-8b'] });
  assert.equal(json.status, 'completed');
  const [hang, right] = json.models_tested;
  assert.equal(hang.timed_out, true);
  assert.match(hang.error, /Timed out after 9 s/);
  assert.equal(hang.steps_tested, 0);
  assert.equal(right.accuracy, 1, JSON.stringify(right));
  assert.deepEqual([json.summary.models_succeeded, json.summary.best_model, json.summary.avg_accuracy], [1, 'qwen/qwen3-8b', 1]);
  assert.match(readFileSync(hang.log_file, 'utf8'), /stopped \(timeout\)/);
  // No process of any test is left behind.
  for (const t of h.runtime.inferenceTests.list()) assert.deepEqual(t.pids().filter(isAlive), []);
});

test('a model whose answers the environment cannot use is stopped after a few failed groups, not retried until its timeout', async () => {
  const { json } = await h.call('rl_test_inference', { ...base, models: ['test/empty'] });
  const [empty] = json.models_tested;
  assert.match(empty.error, /Stopped after 5 failed groups/);
  assert.equal(empty.timed_out, undefined);
  assert.equal((readFileSync(empty.log_file, 'utf8').match(/Failed to process group, retrying/g) ?? []).length >= 5, true);
  assert.deepEqual([json.summary.models_succeeded, json.summary.environment_working, json.summary.best_model], [0, false, null]);
});

test('rates round like Hermes (Python round: an exact tie goes to the even thousandth)', () => {
  const group = (correct: number): number[] => Array.from({ length: 16 }, (_, i) => (i < correct ? 1 : 0));
  // 3 of 48 and 5 of 16 are exact ties at the third decimal, common with the default group_size 16.
  const a = scoreGroups([group(1), group(0), group(2)]);
  const b = scoreGroups([group(5)]);
  assert.deepEqual([a.accuracy, a.step_success_rate, b.accuracy, scoreGroups([group(3)]).accuracy], [0.062, 0.667, 0.312, 0.188]);
  const summary = summarize(
    [
      { model: 'a', ...a },
      { model: 'b', ...b },
      { model: 'c', steps_tested: 0, accuracy: 0, steps: [] },
    ],
    3,
    '/out',
  );
  assert.deepEqual([summary.best_model, summary.avg_accuracy, summary.models_succeeded], ['b', 0.187, 2]);
});

test('the command: negative values glued on with =, the key only in the --config file', () => {
  const settings = loadSettings(testEnv());
  settings.locked.env.max_num_workers = -1;
  const { args } = processCommand(settings, {
    envFile: '/envs/e.py',
    numSteps: 3,
    groupSize: 16,
    useWandb: false,
    outputFile: '/out/1-m.jsonl',
    baseUrl: 'https://openrouter.ai/api/v1',
    modelId: 'qwen/qwen3-8b',
    serverType: 'openai',
    keyConfigFile: '/private/openai.yaml',
  });
  assert.deepEqual(args.slice(0, 4), ['/envs/e.py', 'process', '--config', '/private/openai.yaml']);
  assert.ok(args.includes('--env.max_num_workers=-1'));
  const pairs = Object.fromEntries(args.slice(4).flatMap((a, i, all) => (a.startsWith('--') && !a.includes('=') ? [[a, all[i + 1]]] : [])));
  assert.deepEqual(pairs, {
    '--env.total_steps': '3',
    '--env.group_size': '16',
    '--env.use_wandb': 'false',
    '--env.data_path_to_save_groups': '/out/1-m.jsonl',
    '--env.tokenizer_name': 'Qwen/Qwen3-8B',
    '--env.max_token_length': '8192',
    '--env.max_batches_offpolicy': '3',
    '--openai.base_url': 'https://openrouter.ai/api/v1',
    '--openai.model_name': 'qwen/qwen3-8b',
    '--openai.server_type': 'openai',
    '--openai.health_check': 'false',
  });
});

/** A model process running a Python one-liner script in `dir`, logging to dir/model.log, redacting KEY. */
function pythonChild(dir: string, script: string, env: Record<string, string> = {}): Promise<ModelProcess> {
  return ModelProcess.start({
    file: pythonOnPath(),
    args: ['-c', script],
    env: { PATH: process.env.PATH ?? '', ...env },
    cwd: dir,
    logFile: join(dir, 'model.log'),
    timeoutMs: 30_000,
    graceMs: 1000,
    maxFailedGroups: 5,
    redactor: new SecretRedactor([KEY]),
  });
}

test('child output is redacted even when the key is split across writes or sits in an overlong line', async () => {
  const dir = tempDir();
  const script = [
    'import os, sys, time',
    'key = os.environ["SECRET"]',
    'sys.stdout.write("config api_key=" + key[:10]); sys.stdout.flush(); time.sleep(0.2)',
    'sys.stdout.write(key[10:] + "\\n"); sys.stdout.flush()',
    'sys.stderr.write("x" * 70000 + key + "y" * 10 + "\\n"); sys.stderr.flush()',
    'sys.stderr.write("a" * 70000 + key[:10]); sys.stderr.flush(); time.sleep(0.2)',
    'sys.stderr.write(key[10:] + "\\n")',
  ].join('\n');
  const outcome = await (await pythonChild(dir, script, { SECRET: KEY })).done;
  assert.equal(outcome.exitCode, 0);
  const log = readFileSync(join(dir, 'model.log'), 'utf8');
  assert.ok(!log.includes(KEY.slice(0, 10)), 'no part of the key is in the log');
  assert.equal(log.split(REDACTED).length - 1, 3);
  assert.ok(!outcome.stderrTail.includes(KEY));
});

test('a process that exits while something it started still holds its output ends with its exit, and takes that with it', async () => {
  const dir = tempDir();
  const script = [
    'import subprocess, sys',
    'p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])',
    'print("helper", p.pid, flush=True)',
  ].join('\n');
  const outcome = await (await pythonChild(dir, script)).done;
  assert.deepEqual([outcome.exitCode, outcome.stopReason], [0, undefined], 'judged by its own exit, not stopped at its timeout');
  const helper = Number(/helper (\d+)/.exec(readFileSync(join(dir, 'model.log'), 'utf8'))?.[1]);
  assert.ok(helper > 0);
  await waitUntil('the helper it left is gone', () => !isAlive(helper));
});

test('an interpreter that cannot start is reported per model, with the setting to fix', async (t) => {
  // Selection itself needs the interpreter, so this goes to the runtime directly.
  const runtime = new Runtime(loadSettings(testEnv({ OPENROUTER_API_KEY: KEY, RL_PYTHON: '/nonexistent/python3' })));
  t.after(() => runtime.close());
  const out = await runtime.inferenceTests.startAndWait(
    {
      environment: { name: 'gsm8k', file_path: GSM8K_FILE },
      num_steps: 1,
      group_size: 2,
      models: ['qwen/qwen3-8b'],
      base_url: endpoint.baseUrl,
      api_key_env: 'OPENROUTER_API_KEY',
      server_type: 'openai',
      timeout_seconds: 60,
      use_wandb: false,
    },
    { waitSeconds: 60 },
  );
  assert.equal(out.status, 'completed');
  assert.match(out.models_tested![0]!.error!, /Could not start \/nonexistent\/python3: .*ENOENT.*Check RL_PYTHON/);
  assert.equal(out.summary!.environment_working, false);
});
