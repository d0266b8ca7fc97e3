/**
 * rl_test_inference as a long-running job: answering "running" and later the result, progress
 * notifications, the key kept out of argv and files, cancellation of the starting call versus a
 * waiting call, and server exit killing the test processes.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { test } from 'node:test';
import { REDACTED } from '../src/core/redact.js';
import { Runtime } from '../src/runtime/wiring/runtime.js';
import { loadSettings } from '../src/runtime/config/settings.js';
import { callTool, connectInMemory, connectStdio } from './helpers/client.js';
import { assertKeyNowhereUnder, deferred, KEY, selectGsm8k, startEndpoint } from './helpers/inference.js';
import { environOf, isAlive, waitUntil } from './helpers/runs.js';
import { tempDir, testEnv } from './helpers/tmp.js';

const endpoint = await startEndpoint({});
const h = await connectInMemory({ OPENROUTER_API_KEY: KEY });
await selectGsm8k(h);
const base = { base_url: endpoint.baseUrl, num_steps: 1, group_size: 2, timeout_seconds: 120, models: ['test/held'] };

/** Holds the model's answers until the returned function is called. */
function holdModel(): () => void {
  const gate = deferred();
  endpoint.models['test/held'] = { mode: 'right', holdUntil: gate.promise };
  return gate.resolve;
}

test('answers "running" past wait_seconds with progress, keeps the key out of argv and files, then gives the result', async () => {
  const release = holdModel();
  const notified: { progress: number; total?: number }[] = [];
  const first = await h.call('rl_test_inference', { ...base, wait_seconds: 1 }, { onprogress: (p) => notified.push(p) });
  assert.equal(first.json.status, 'running');
  assert.equal(first.json.progress.models_total, 1);
  assert.equal(first.json.progress.models_finished, 0);
  const [model] = first.json.progress.models;
  assert.equal(model.state, 'running');
  assert.match(first.json.message, new RegExp(first.json.test_id));
  assert.ok(notified.length >= 1, 'a progress notification went out');
  assert.ok(notified.every((n, i) => n.total === 1 && (i === 0 || n.progress > notified[i - 1]!.progress)));

  // The key reaches the child only through the private --config file, never its argv.
  const argv = readFileSync(`/proc/${model.pid}/cmdline`, 'utf8').split('\0');
  assert.ok(!argv.some((a) => a.includes(KEY)), 'the key is not on the command line');
  assert.deepEqual(argv.slice(argv.indexOf('process'), argv.indexOf('process') + 2), ['process', '--config']);
  const keyFile = argv[argv.indexOf('--config') + 1]!;
  assert.equal(statSync(keyFile).mode & 0o777, 0o600);
  assert.ok(!keyFile.startsWith(h.runtime.settings.home), 'the key file is not under RL_HOME');
  const environ = environOf(model.pid).split('\0');
  assert.ok(environ.includes('ATROPOS_ALLOW_DUMMY_MANAGED_SERVER=1') && environ.includes('PYTHONUNBUFFERED=1'));
  assert.ok(!environ.some((e) => e.includes(KEY)), 'nor in its environment');
  // atroposlib prints the resolved server config, api_key included: the log has it redacted.
  await waitUntil('the log shows the redacted config', () => readFileSync(model.log_file, 'utf8').includes(REDACTED));
  assertKeyNowhereUnder(h.runtime.settings.home);

  const still = await h.call('rl_test_inference', { test_id: first.json.test_id, wait_seconds: 0 });
  assert.equal(still.json.status, 'running');

  release();
  const done = await h.call('rl_test_inference', { test_id: first.json.test_id, wait_seconds: 280 });
  assert.equal(done.json.status, 'completed');
  assert.equal(done.json.models_tested[0].accuracy, 1);
  assert.equal(existsSync(keyFile), false, 'the key file is removed when the test ends');
  const again = await h.call('rl_test_inference', { test_id: first.json.test_id });
  assert.deepEqual(again.json, done.json);
  for (const answer of [first, still, done, again]) assert.ok(!answer.raw.content.some((c) => c.type === 'text' && c.text.includes(KEY)));
  assertKeyNowhereUnder(h.runtime.settings.home);
});

test('cancelling the call that started a test kills its processes; a later call says cancelled', async () => {
  holdModel();
  const known = new Set(h.runtime.inferenceTests.list().map((t) => t.id));
  const controller = new AbortController();
  const call = h.call('rl_test_inference', { ...base, wait_seconds: 280 }, { signal: controller.signal });
  let pids: number[] = [];
  await waitUntil('the test process runs', () => {
    const t = h.runtime.inferenceTests.list().find((x) => !known.has(x.id));
    pids = t?.pids() ?? [];
    return pids.length > 0;
  });
  const testId = h.runtime.inferenceTests.list()[0]!.id;
  controller.abort();
  await assert.rejects(call);
  await waitUntil('the test processes are gone', () => pids.every((pid) => !isAlive(pid)));

  const later = await h.call('rl_test_inference', { test_id: testId, wait_seconds: 280 });
  assert.equal(later.json.status, 'cancelled');
  assert.match(later.json.message, /cancelled/);
  assert.match(later.json.models_tested[0].error, /Cancelled/);
});

test('cancelling a call that only waits on test_id leaves the test running', async () => {
  const release = holdModel();
  const started = await h.call('rl_test_inference', { ...base, wait_seconds: 0 });
  assert.equal(started.json.status, 'running');
  const pid: number = started.json.progress.models[0].pid;
  const controller = new AbortController();
  const waiting = h.call('rl_test_inference', { test_id: started.json.test_id, wait_seconds: 280 }, { signal: controller.signal });
  controller.abort();
  await assert.rejects(waiting);
  assert.ok(isAlive(pid), 'the test process is still running');
  release();
  const done = await h.call('rl_test_inference', { test_id: started.json.test_id, wait_seconds: 280 });
  assert.equal(done.json.status, 'completed');
  assert.equal(done.json.summary.models_succeeded, 1);
});

test('closing the server kills the test processes; a later server answers the test as cancelled', async () => {
  holdModel();
  const home = `${tempDir('rlmcp-inference-')}/rl_training`;
  const server = await connectInMemory({ OPENROUTER_API_KEY: KEY, RL_HOME: home });
  await selectGsm8k(server);
  const started = await server.call('rl_test_inference', { ...base, wait_seconds: 0 });
  const pid: number = started.json.progress.models[0].pid;
  assert.ok(isAlive(pid));
  await server.close();
  await waitUntil('the test process is gone', () => !isAlive(pid));

  const next = new Runtime(loadSettings(testEnv({ OPENROUTER_API_KEY: KEY, RL_HOME: home })));
  try {
    const stored = await next.inferenceTests.waitFor(started.json.test_id, { waitSeconds: 0 });
    assert.equal(stored.status, 'cancelled');
    assert.match(stored.message ?? '', /server exited/);
  } finally {
    await next.close();
  }
  assertKeyNowhereUnder(home);
});

test('the built server over stdio: closing its stdin kills the test processes', async () => {
  holdModel();
  const asked = endpoint.requestsFor('test/held').length;
  const server = await connectStdio({ OPENROUTER_API_KEY: KEY });
  assert.equal((await callTool(server.client, 'rl_select_environment', { name: 'gsm8k' })).isError, false);
  const started = await callTool(server.client, 'rl_test_inference', { ...base, wait_seconds: 0 });
  assert.equal(started.json.status, 'running', JSON.stringify(started.json));
  const pid: number = started.json.progress.models[0].pid;
  // Once it waits on the endpoint it writes nothing, so a dead server's closed pipes cannot end it: only a kill can.
  await waitUntil('the model process asks the endpoint', () => endpoint.requestsFor('test/held').length > asked);
  assert.ok(isAlive(pid));
  await server.close();
  await waitUntil('the test process is gone', () => !isAlive(pid));
});
