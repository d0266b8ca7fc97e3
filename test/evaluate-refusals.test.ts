/**
 * rl_evaluate with a Tinker key the endpoint refuses (the fake Tinker OpenAI-compatible endpoint
 * answers 401 as OpenAI does): each model's error names TINKER_API_KEY and TINKER_OAI_BASE_URL,
 * never api_key_env, an argument rl_evaluate does not have. Its own file: a run and an
 * evaluation, beside the long ones of test/evaluate.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gsm8kSolver } from './fakes/gsm8kAnswers.js';
import { startFakeTinkerOai } from './fakes/tinkerOaiServer.js';
import { writeRunDir } from './helpers/registry.js';
import { runServer, startRun, TINKER_KEY, waitForRun } from './helpers/runs.js';

const BASE = 'Qwen/Qwen3-8B';

test('a Tinker key the endpoint refuses: the evaluation names TINKER_API_KEY and TINKER_OAI_BASE_URL, not an argument it does not have', async (t) => {
  const fake = await startFakeTinkerOai({ apiKey: `${TINKER_KEY}-other`, baseModels: { [BASE]: 0.5 }, checkpoint: () => 0.5, solve: gsm8kSolver() });
  t.after(() => fake.close());
  const h = await runServer(t, { env: { TINKER_OAI_BASE_URL: fake.baseUrl } });
  const runId = await startRun(h);
  await waitForRun(h, runId, 'completed', (r) => r.status === 'completed');
  let refused = (await h.call('rl_evaluate', { run_id: runId, method: 'process', num_items: 2, group_size: 2, wait_seconds: 120 })).json;
  while (refused.status === 'running') refused = (await h.call('rl_evaluate', { eval_id: refused.eval_id, wait_seconds: 120 })).json;
  assert.ok(refused.models.length > 0);
  for (const model of refused.models) {
    assert.equal(model.error_kind, 'authentication', JSON.stringify(model));
    assert.match(model.error, /authentication failed \(HTTP 401\).*TINKER_API_KEY.*TINKER_OAI_BASE_URL/, model.error);
    assert.doesNotMatch(model.error, /api_key_env/);
  }
});

test('a run that already ended without a trained checkpoint: rl_evaluate says it ended, how, and that there is nothing to evaluate', async (t) => {
  const h = await runServer(t, { select: false });
  const failed = writeRunDir(h.home, { runId: 'fa11ed01', createdMs: Date.now() - 120_000, status: 'failed' });
  const refused = await h.call('rl_evaluate', { run_id: failed.run_id });
  assert.equal(refused.isError, true);
  assert.match(refused.json.error, new RegExp(`^The run ended \\(failed at ${failed.ended_at!.replace(/[.]/g, '\\.')}: trainer failed: simulated\\) without saving a trained checkpoint: there is nothing to evaluate`));
  assert.doesNotMatch(refused.json.error, /Wait until it is running/);
});
