/**
 * rl_test_inference judges the environment, not only the model, against upstream-shaped fakes: an
 * environment whose config_init returns one server config (upstream spreads it to
 * localhost:9004-9007) is given two entries and answers; groups dropped because every score was
 * equal are "no learning signal", not an endpoint error; a 401 is named as authentication; scores
 * of -1/1 count like 0/1.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { connectInMemory } from './helpers/client.js';
import { KEY, startEndpoint } from './helpers/inference.js';
import { TEST_ENVIRONMENTS_DIR } from './helpers/tmp.js';

const endpoint = await startEndpoint({
  'test/right': { mode: 'right' },
  'test/wrong': { mode: 'wrong' },
  'test/half': { mode: 'half' },
});
const h = await connectInMemory({ OPENROUTER_API_KEY: KEY, WRONG_API_KEY: 'sk-wrong-0123456789', RL_ENVIRONMENTS_DIRS: TEST_ENVIRONMENTS_DIR });
const base = { base_url: endpoint.baseUrl, num_steps: 2, group_size: 4, wait_seconds: 280, timeout_seconds: 60 };

/** Tests `name` (whose config_init returns `shape`) with the half-right model; asserts the endpoint itself was asked. */
async function testedAgainstEndpoint(name: string, shape: string): Promise<Record<string, any>> {
  const selected = await h.call('rl_select_environment', { name });
  assert.equal(selected.isError, false, JSON.stringify(selected.json));
  assert.equal(selected.json.server_configs, shape);
  const before = endpoint.requestsFor('test/half').length;
  const { json } = await h.call('rl_test_inference', { ...base, models: ['test/half'] });
  assert.equal(json.models_tested[0].error, undefined, JSON.stringify(json.models_tested[0]));
  assert.ok(endpoint.requestsFor('test/half').length > before, 'the endpoint was asked, not localhost:9004-9007');
  return json;
}

test('a single-config environment (gsm8k_server) gets two server entries and reaches the endpoint; -1/1 scores count', async () => {
  const json = await testedAgainstEndpoint('gsm8k_server', 'single');
  const [half] = json.models_tested;
  const stored = JSON.parse(readFileSync(json.result_file, 'utf8'));
  assert.deepEqual(stored.models_tested[0].steps.map((s: { scores: number[] }) => s.scores), [[1, -1, 1, -1], [1, -1, 1, -1]]);
  assert.deepEqual([half.correct_completions, half.accuracy, json.summary.environment_working], [4, 0.5, true]);
});

test('always right and always wrong: every group dropped, reported as no learning signal, the environment not working', async () => {
  await h.call('rl_select_environment', { name: 'gsm8k_server' });
  const { json } = await h.call('rl_test_inference', { ...base, models: ['test/right', 'test/wrong'] });
  for (const model of json.models_tested) {
    assert.equal(model.error_kind, 'no_learning_signal', JSON.stringify(model));
    assert.match(model.error, /no learning signal.*scores the same \(the model is always right, or always wrong/);
    assert.equal(model.timed_out, undefined, 'stopped after a few dropped groups, not at the timeout');
  }
  assert.equal(json.summary.environment_working, false);
  assert.match(json.summary.environment_problem, /No model produced a usable group/);
});

test('a key the endpoint refuses is named as authentication, with the endpoint\'s own answer', async () => {
  await h.call('rl_select_environment', { name: 'gsm8k' });
  const { json } = await h.call('rl_test_inference', { ...base, models: ['test/half'], api_key_env: 'WRONG_API_KEY' });
  const [model] = json.models_tested;
  assert.equal(model.error_kind, 'authentication', JSON.stringify(model));
  assert.match(model.error, /^Process exited with code 1: authentication failed \(HTTP 401\) at .*api_key_env\. Cause: openai\.AuthenticationError: Error code: 401/);
  assert.ok(!JSON.stringify(json).includes('sk-wrong-0123456789'), 'the key is in no answer');
});

test('the environment with varied groups but only from equal-scoring models is judged not working, and says why', async () => {
  await h.call('rl_select_environment', { name: 'gsm8k' });
  // The bundled gsm8k keeps equal-score groups (ensure_scores_are_not_same: false): usable, but no signal.
  const { json } = await h.call('rl_test_inference', { ...base, models: ['test/right'] });
  assert.equal(json.models_tested[0].accuracy, 1);
  assert.equal(json.summary.environment_working, false);
  assert.match(json.summary.environment_problem, /scored the same for all its completions \(all right or all wrong\)/);
});

test('an environment whose config_init returns a bare ServerBaseline (process would ignore --openai.*) still reaches the endpoint', async () => {
  await testedAgainstEndpoint('gsm8k_baseline', 'baseline');
});

test('an always-right model on gsm8k_tinker, which keeps equal-score groups: accuracy 1, and no learning signal said', async () => {
  for (const name of ['gsm8k_tinker_upstream', 'gsm8k']) {
    await h.call('rl_select_environment', { name });
    const { json } = await h.call('rl_test_inference', { ...base, models: ['test/right', 'test/half'] });
    const [right, half] = json.models_tested;
    assert.deepEqual([right.accuracy, right.steps_tested, right.error_kind], [1, 2, 'no_learning_signal'], name);
    assert.match(right.warning, /^No learning signal: every one of the 2 groups this model produced scored the same for all its completions \(all 1\)/);
    assert.equal(right.error, undefined, 'the model ran: it is the environment and model together that give nothing to learn');
    assert.deepEqual([half.error_kind, half.warning], [undefined, undefined], 'a half-right model: scores vary');
  }
});
