/**
 * The campaign budget over sampling on Tinker, through the MCP client with our processes running
 * for real against the fake Tinker OpenAI-compatible endpoint: an inference test and an evaluation
 * near RL_MAX_TOTAL_COST_USD are refused when their high estimate does not fit what is left, their
 * spend (the tokens the endpoint reported, priced as sampling) is in the window's total, and a test
 * whose prompts are longer than its estimate assumed is cancelled once the window's total crosses
 * the cap, its partial results kept.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test, type TestContext } from 'node:test';
import { gsm8kSolver } from './fakes/gsm8kAnswers.js';
import { startFakeTinkerOai, type FakeTinkerOai, type TinkerOaiOptions } from './fakes/tinkerOaiServer.js';
import { record, runServer, startRun, TINKER_KEY, waitForRun, type RunServer } from './helpers/runs.js';

const BASE = 'Qwen/Qwen3-8B';
const TODAY = new Date().toISOString().slice(0, 10);
/** $1 per million tokens prefilled or sampled: a figure is its tokens / 1e6. */
const PRICES = { [BASE]: { prefill: 1, sample: 1, train: 0, as_of: TODAY, source: 'test' } };

async function tinker(t: TestContext, more: Partial<TinkerOaiOptions> = {}, trainerLog: () => string = () => ''): Promise<FakeTinkerOai> {
  const fake = await startFakeTinkerOai({
    apiKey: TINKER_KEY,
    baseModels: { [BASE]: 0.5 },
    checkpoint: (path) => (trainerLog().includes(`${path}\n`) ? 0.5 : undefined),
    solve: gsm8kSolver(),
    ...more,
  });
  t.after(() => fake.close());
  return fake;
}

/** What the endpoint's answers reported, in dollars at PRICES. */
const reported = (fake: FakeTinkerOai): number => fake.requests.reduce((n, r) => n + (r.usage ? r.usage.prompt_tokens + r.usage.completion_tokens : 0), 0) / 1e6;

const server = (t: TestContext, fake: FakeTinkerOai, cap: string): Promise<RunServer> => runServer(t, { env: { TINKER_OAI_BASE_URL: fake.baseUrl, RL_MAX_TOTAL_COST_USD: cap }, config: { prices: PRICES } });

async function finished(h: RunServer, answer: { isError: boolean; json: Record<string, any> }, key: 'test_id' | 'eval_id', tool: string): Promise<Record<string, any>> {
  let a = answer;
  while (!a.isError && a.json.status === 'running') a = await h.call(tool, { [key]: a.json[key], wait_seconds: 120 });
  assert.equal(a.isError, false, JSON.stringify(a.json));
  return a.json;
}

test('an inference test on Tinker near the cap: one that fits runs and its spend is in the window, a larger one is refused with what was spent, by what, and what is left', async (t) => {
  const fake = await tinker(t);
  // A first test's high estimate: 8 rollouts of 1024 prompt + 8192 completion tokens (the locked max_token_length) = $0.073728.
  const h = await server(t, fake, '0.08');
  const first = await finished(h, await h.call('rl_test_inference', { models: [BASE], num_steps: 2, group_size: 4, wait_seconds: 120 }), 'test_id', 'rl_test_inference');
  assert.equal(first.models_tested[0].error, undefined, JSON.stringify(first.models_tested[0]));
  const spent = reported(fake);
  assert.ok(spent > 0);
  const spend = (await h.call('rl_estimate_cost')).json.spend;
  assert.ok(Math.abs(spend.by_kind.inference_test - spent) < 1e-12, `window ${spend.by_kind.inference_test} vs the endpoint's usage ${spent}`);
  assert.deepEqual(spend.by_id.map((s: { kind: string; id: string }) => [s.kind, s.id]), [['inference_test', first.test_id]]);
  assert.ok(Math.abs(spend.left_usd - (0.08 - spent)) < 1e-12);

  const asked = fake.requests.length;
  // 16 rollouts: over twice as much as the first, so more than what is left.
  const refused = await h.call('rl_test_inference', { models: [BASE], num_steps: 4, group_size: 4, wait_seconds: 120 });
  assert.equal(refused.isError, true, JSON.stringify(refused.json));
  assert.match(refused.json.error, /^Refused: an inference test of Qwen\/Qwen3-8B on Tinker: RL_MAX_TOTAL_COST_USD=\$0\.08 leaves \$[\d.]+ \(\$[\d.]+ spent in all of RL_HOME: inference tests \$[\d.]+ \([0-9a-f]+ \$[\d.]+\)\); its high estimate \$[\d.]+ does not fit what is left/);
  assert.ok(refused.json.high_estimate_usd > refused.json.left_usd && Math.abs(refused.json.left_usd - (0.08 - spent)) < 1e-12, JSON.stringify(refused.json));
  assert.equal(fake.requests.length, asked, 'nothing sampled');
});

test('an inference test whose prompts are longer than its estimate assumed is cancelled once the window crosses the cap, its partial results kept and its spend counted', async (t) => {
  // 100,000-token prompts: $0.1 a request (a group of 4 is one request). Once the cap is crossed
  // the endpoint stops answering, so only the budget can end the test before its 600 s timeout.
  let fake!: FakeTinkerOai;
  fake = await tinker(t, { promptTokens: 100_000, stalled: () => reported(fake) > 0.5 });
  const h = await server(t, fake, '0.5');
  // Its high estimate, 40 rollouts of 1024 + 8192 tokens ($0.3686), fits the cap.
  const first = await h.call('rl_test_inference', { models: [BASE], num_steps: 10, group_size: 4, timeout_seconds: 600, wait_seconds: 1 });
  assert.equal(first.isError, false, JSON.stringify(first.json));
  const done = await finished(h, first, 'test_id', 'rl_test_inference');
  assert.equal(done.status, 'cancelled', JSON.stringify(done));
  const model = done.models_tested[0];
  assert.match(model.error, /budget reached: \$[\d.]+ spent in all of RL_HOME: inference tests .* reached RL_MAX_TOTAL_COST_USD=\$0\.5, so every active paid action stops \(partial results kept\)/);
  // The groups sampled before the cancel stay in the test's output file (one JSON line a group).
  const groups = readFileSync(model.output_file, 'utf8').split('\n').filter(Boolean).length;
  assert.equal(groups, fake.requests.filter((r) => r.status === 200).length, 'every group answered before the cancel is kept');
  const spend = (await h.call('rl_estimate_cost')).json.spend;
  assert.ok(spend.total_usd >= 0.5 && Math.abs(spend.total_usd - reported(fake)) < 1e-9, `window ${spend.total_usd} vs the endpoint's usage ${reported(fake)}`);
  assert.equal(spend.left_usd, 0);
});

test("an evaluation on Tinker near the cap: one that fits runs, its spend is in the window with the run's, a larger one is refused with the figures", async (t) => {
  let h!: RunServer;
  let runId = '';
  const fake = await tinker(t, {}, () => (runId ? readFileSync(record(h, runId).logs.trainer, 'utf8') : ''));
  // The run's high estimate is $3.3423.
  h = await server(t, fake, '5');
  runId = await startRun(h);
  await waitForRun(h, runId, 'completed', (r) => r.status === 'completed');
  const ok = await finished(h, await h.call('rl_evaluate', { run_id: runId, method: 'process', num_items: 3, group_size: 2, wait_seconds: 120 }), 'eval_id', 'rl_evaluate');
  assert.equal(ok.status, 'completed');
  const spend = (await h.call('rl_estimate_cost')).json.spend;
  assert.ok(spend.by_kind.run > 0, 'the run counts');
  assert.ok(Math.abs(spend.by_kind.evaluation - reported(fake)) < 1e-12, `window ${spend.by_kind.evaluation} vs the endpoint's usage ${reported(fake)}`);
  assert.ok(spend.by_id.some((s: { kind: string; id: string }) => s.kind === 'evaluation' && s.id === ok.eval_id));

  const asked = fake.requests.length;
  // 2 models x 200 items x 16 completions of 1024 + 8192 tokens at most: $58.98, over what is left of $5.
  const refused = await h.call('rl_evaluate', { run_id: runId, method: 'process', num_items: 200, group_size: 16, wait_seconds: 1 });
  assert.equal(refused.isError, true, JSON.stringify(refused.json));
  assert.match(refused.json.error, /^Refused: an evaluation of 2 model\(s\) on Tinker: RL_MAX_TOTAL_COST_USD=\$5 leaves \$[\d.]+ \(\$[\d.]+ spent in all of RL_HOME: runs \$[\d.]+ \(.*\), evaluations \$[\d.]+ \(.*\)\); its high estimate \$[\d.]+ does not fit/);
  assert.ok(Math.abs(refused.json.window_spent_usd - spend.total_usd) < 1e-12);
  assert.equal(fake.requests.length, asked, 'nothing sampled');

  // atroposlib's own evaluate() samples through the recording proxy too: counted from what the endpoint reported.
  const before = reported(fake);
  const held = await finished(h, await h.call('rl_evaluate', { run_id: runId, method: 'evaluate', num_items: 3, wait_seconds: 120 }), 'eval_id', 'rl_evaluate');
  assert.deepEqual([held.status, held.method], ['completed', 'evaluate']);
  assert.ok(reported(fake) > before, 'it sampled');
  const heldSpend = (await h.call('rl_estimate_cost')).json.spend.by_id.find((s: { kind: string; id: string }) => s.kind === 'evaluation' && s.id === held.eval_id);
  assert.ok(heldSpend !== undefined && Math.abs(heldSpend.usd - (reported(fake) - before)) < 1e-12, `ledger ${heldSpend?.usd} vs the endpoint's usage ${reported(fake) - before}`);
});

test('four runs stopped in the same second and two evaluations at once: the ledger holds the sum of their own spends', async (t) => {
  let h!: RunServer;
  const ids: string[] = [];
  const fake = await tinker(t, {}, () => ids.map((id) => readFileSync(record(h, id).logs.trainer, 'utf8')).join(''));
  h = await runServer(t, { env: { TINKER_OAI_BASE_URL: fake.baseUrl, RL_MAX_CONCURRENT_RUNS: '4' }, config: { prices: PRICES }, lockedEnv: { total_steps: 500 } });
  h.install.trainerControl({ step_seconds: 0.5 });
  for (let i = 0; i < 4; i++) ids.push(await startRun(h));
  for (const id of ids) await waitForRun(h, id, 'a checkpoint saved', (r) => (r.observed?.steps_completed ?? 0) >= 1);
  // Two evaluations sampling at once, each through its own recording proxy, while the runs train.
  const started = await Promise.all([0, 1].map(() => h.call('rl_evaluate', { run_id: ids[0], method: 'process', num_items: 3, group_size: 2, wait_seconds: 0 })));
  for (const s of started) assert.equal(s.isError, false, JSON.stringify(s.json));
  // Every run's keeper writes its last figure to its own ledger file as the run ends, all at once.
  const stops = await Promise.all(ids.map((run_id) => h.call('rl_stop_training', { run_id })));
  for (const s of stops) assert.equal(s.isError, false, JSON.stringify(s.json));
  for (const id of ids) await waitForRun(h, id, 'stopped', (r) => r.status === 'stopped');
  const evals = await Promise.all(started.map((s) => finished(h, s, 'eval_id', 'rl_evaluate')));
  for (const e of evals) assert.equal(e.status, 'completed', JSON.stringify(e));

  const runs = await Promise.all(ids.map(async (run_id) => (await h.call('rl_check_status', { run_id })).json.cost));
  const runSpends = runs.map((c) => Math.max(c.spent_usd, c.billed?.usd ?? 0));
  assert.ok(runSpends.every((usd) => usd > 0), JSON.stringify(runs));
  const spend = (await h.call('rl_estimate_cost')).json.spend;
  const expected = runSpends.reduce((a, b) => a + b, 0) + reported(fake);
  assert.ok(Math.abs(spend.total_usd - expected) < 1e-9, `ledger $${spend.total_usd} vs the runs' and the endpoint's $${expected}`);
  assert.equal(spend.by_id.filter((s: { kind: string }) => s.kind === 'run').length, 4);
  assert.deepEqual(spend.by_id.filter((s: { kind: string }) => s.kind === 'evaluation').map((s: { id: string }) => s.id).sort(), evals.map((e) => e.eval_id).sort());
  assert.ok(Math.abs(spend.by_kind.evaluation - reported(fake)) < 1e-12);
});
