/**
 * What the wire to the endpoint carries, where atroposlib writes placeholders: under
 * ATROPOS_ALLOW_DUMMY_MANAGED_SERVER a managed_server environment's `process` output holds tokens
 * 0..127 whatever the model said (shared by test/fakes-upstream.test.ts). The recording proxy in
 * front of the endpoint sees the real messages, texts and `usage`: the measured lengths come from
 * there, and rl_get_rollouts shows the real texts or says plainly that they are not there.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { SecretRedactor } from '../src/core/redact.js';
import { startWireProxy } from '../src/runtime/inference/wire/proxy.js';
import { readExchanges } from '../src/runtime/inference/wire/exchanges.js';
import { viaEnvironmentProxy } from '../src/runtime/inference/wire/recorder.js';
import { freePort, TEST_ENVIRONMENTS_DIR, tempDir } from './helpers/tmp.js';
import { connectInMemory } from './helpers/client.js';
import { KEY, startEndpoint } from './helpers/inference.js';

const endpoint = await startEndpoint({ 'test/half': { mode: 'half' }, 'test/right': { mode: 'right' } });
const h = await connectInMemory({ OPENROUTER_API_KEY: KEY, RL_ENVIRONMENTS_DIRS: TEST_ENVIRONMENTS_DIR });
const base = { base_url: endpoint.baseUrl, num_steps: 2, group_size: 4, wait_seconds: 280, timeout_seconds: 120 };
const PLACEHOLDER_TOKENS = [...Array(128).keys()];
const mean = (v: number[]): number => Math.round((v.reduce((a, b) => a + b, 0) / v.length) * 10) / 10;

test('a managed_server environment smoke-tested on an OpenAI endpoint: its lengths are what the endpoint counted, never atroposlib\'s placeholders', async () => {
  assert.equal((await h.call('rl_select_environment', { name: 'gsm8k' })).isError, false);
  const asked = endpoint.requestsFor('test/half').length;
  const { json } = await h.call('rl_test_inference', { ...base, models: ['test/half'] });
  const [model] = json.models_tested;
  assert.equal(model.error, undefined, JSON.stringify(model));
  // What atroposlib wrote: the placeholders, the same for every rollout.
  const groups = readFileSync(model.output_file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.ok(groups.every((g) => g.tokens.every((t: number[]) => JSON.stringify(t) === JSON.stringify(PLACEHOLDER_TOKENS))));
  // What the endpoint counted, per rollout: its prompt, and its share of the request's completion tokens.
  const requests = endpoint.requestsFor('test/half').slice(asked);
  assert.equal(requests.length, 2);
  const prompts = requests.flatMap((r) => Array(r.n).fill(r.usage!.prompt_tokens) as number[]);
  const completion = requests.reduce((n, r) => n + r.usage!.completion_tokens, 0) / 8;
  assert.equal(model.rollout_tokens.source, 'endpoint usage');
  assert.equal(model.rollout_tokens.rollouts, 8);
  assert.deepEqual([model.rollout_tokens.prompt_tokens.mean, model.rollout_tokens.completion_tokens.mean], [mean(prompts), Math.round(completion * 10) / 10]);
  assert.notDeepEqual([model.rollout_tokens.prompt_tokens.max, model.rollout_tokens.completion_tokens.max], [1, 127]);

  const estimate = (await h.call('rl_estimate_cost')).json;
  assert.match(estimate.total_usd.expected.basis, new RegExp(`from inference test ${json.test_id} .*8 rollouts of test/half, counted by endpoint usage`));
  assert.match(estimate.total_usd.expected.basis, new RegExp(`mean prompt ${mean(prompts)} and mean completion ${Math.round(completion * 10) / 10} tokens`));
});

test('rl_get_rollouts of a test whose groups carry placeholders: the prompt and completion the wire carried, or said plainly to be unavailable', async () => {
  assert.equal((await h.call('rl_select_environment', { name: 'gsm8k_tinker_upstream' })).isError, false);
  const { json } = await h.call('rl_test_inference', { ...base, models: ['test/right', 'test/half'] });
  for (const model of json.models_tested) assert.equal(model.steps_tested, 2, JSON.stringify(model));
  const read = async (model: string) => (await h.call('rl_get_rollouts', { test_id: json.test_id, model, limit: 10, filter: 'random' })).json;

  // Every completion of an always-right group scored 1: which text earned which score needs no matching.
  const right = await read('test_right');
  assert.equal(right.total, 8);
  for (const r of right.rollouts) {
    assert.match(r.prompt, /^\[system\] Think step by step.*\n\[user\] .+\?$/s);
    assert.match(r.completion, /^Let me work through this step by step\.[\s\S]*\\boxed\{\d+\}$/);
  }
  // Mixed scores, shuffled before scoring: the prompt is known, which completion earned which score is not.
  const half = await read('test_half');
  for (const r of half.rollouts) {
    assert.match(r.prompt, /\n\[user\] .+\?$/);
    assert.match(r.completion, /^\(not available: atroposlib wrote placeholder tokens for this group.*\.wire\.jsonl/);
  }
  for (const r of [...right.rollouts, ...half.rollouts]) assert.doesNotMatch(r.prompt + r.completion, /[\u0000-\u0008\u000e-\u001f]/, 'no decoded placeholder tokens');
  assert.match(half.message, /placeholder/);
});

test('the recording proxy forwards requests and streams unchanged and records messages, texts and usage, never the Authorization header', async () => {
  const dir = tempDir();
  const recordFile = join(dir, 'm.wire.jsonl');
  const proxy = await startWireProxy({ upstream: endpoint.baseUrl, recordFile, redactor: new SecretRedactor([KEY]) });
  assert.match(proxy.baseUrl, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  const messages = [{ role: 'user', content: 'A shelf holds 6 rows of 14 books. 19 books are lent out. How many books are still on the shelf?' }];
  const post = (url: string, body: Record<string, unknown>) =>
    fetch(`${url}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'test/half', messages, ...body }) });
  const direct = (await (await post(endpoint.baseUrl, { n: 2 })).json()) as Record<string, any>;
  const proxied = (await (await post(proxy.baseUrl, { n: 2 })).json()) as Record<string, any>;
  assert.deepEqual({ ...proxied, id: undefined }, { ...direct, id: undefined, created: proxied.created });
  const streamed = await post(proxy.baseUrl, { n: 2, stream: true, stream_options: { include_usage: true } });
  assert.equal(streamed.headers.get('content-type'), 'text/event-stream');
  const events = (await streamed.text()).split('\n\n').filter(Boolean);
  assert.equal(events.at(-1), 'data: [DONE]');
  const refused = await post(proxy.baseUrl.replace('/v1', '/v2'), {});
  assert.equal(refused.status, 404, 'any answer is passed on as it came');
  await proxy.close();

  const exchanges = await readExchanges(recordFile);
  assert.deepEqual(exchanges.map((e) => [e.seq, e.status, e.stream, e.choices.length]), [[0, 200, false, 2], [1, 200, true, 2], [2, 404, false, 0]]);
  assert.deepEqual(exchanges[0]!.messages, messages);
  assert.deepEqual(exchanges[0]!.choices, direct.choices.map((c: { message: { content: string } }) => c.message.content));
  assert.deepEqual(exchanges[1]!.choices, exchanges[0]!.choices, 'the streamed deltas joined per choice');
  assert.deepEqual(exchanges[0]!.usage, { prompt_tokens: direct.usage.prompt_tokens, completion_tokens: direct.usage.completion_tokens });
  assert.deepEqual(exchanges[1]!.usage, exchanges[0]!.usage);
  const recorded = readFileSync(recordFile, 'utf8');
  assert.ok(!recorded.includes(KEY) && !/authorization|bearer/i.test(recorded), recorded);
  assert.ok(endpoint.requests.slice(-4).every((r) => r.authorized), 'the key reached the endpoint');
});

test('an endpoint that cannot be reached stays unreachable through the proxy: the connection is dropped, nothing recorded', async () => {
  const recordFile = join(tempDir(), 'dead.wire.jsonl');
  const proxy = await startWireProxy({ upstream: `http://127.0.0.1:${await freePort()}/v1`, recordFile, redactor: new SecretRedactor() });
  await assert.rejects(fetch(`${proxy.baseUrl}/chat/completions`, { method: 'POST', body: '{}' }));
  await proxy.close();
  assert.deepEqual(await readExchanges(recordFile), []);
});

test('an endpoint the environment sends through an HTTP proxy is not recorded (the recording proxy would bypass it); NO_PROXY as curl reads it', () => {
  const table: [string, Record<string, string>, boolean][] = [
    ['https://openrouter.ai/api/v1', {}, false],
    ['https://openrouter.ai/api/v1', { HTTPS_PROXY: 'http://proxy:3128' }, true],
    ['https://openrouter.ai/api/v1', { https_proxy: 'http://proxy:3128', NO_PROXY: '.openrouter.ai' }, false],
    ['https://openrouter.ai/api/v1', { HTTPS_PROXY: 'http://proxy:3128', no_proxy: 'localhost,openrouter.ai:443' }, false],
    ['https://openrouter.ai/api/v1', { HTTPS_PROXY: 'http://proxy:3128', NO_PROXY: '*' }, false],
    ['https://api.example.com/v1', { HTTPS_PROXY: 'http://proxy:3128', NO_PROXY: 'example.org' }, true],
    ['http://127.0.0.1:8000/v1', { HTTPS_PROXY: 'http://proxy:3128' }, false],
    ['http://10.0.0.5:8000/v1', { HTTP_PROXY: 'http://proxy:3128' }, true],
    ['http://10.0.0.5:8000/v1', { ALL_PROXY: 'socks5://proxy:1080' }, true],
  ];
  for (const [endpoint, env, expected] of table) assert.equal(viaEnvironmentProxy(endpoint, env), expected, `${endpoint} ${JSON.stringify(env)}`);
});
