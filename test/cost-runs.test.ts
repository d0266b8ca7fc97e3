/**
 * Cost through the MCP client, with our own processes running for real: a smoke test's measured
 * lengths give rl_estimate_cost's figures; a run whose rollouts cost more than its smoke test said
 * is stopped at its budget with nothing left running; a start over the total budget is refused; a
 * client that can be asked confirms (or not) before a start over RL_CONFIRM_ABOVE_USD.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test, type TestContext } from 'node:test';
import { saveMeasuredRollouts } from '../src/runtime/cost/lengthStore.js';
import { connectInMemory } from './helpers/client.js';
import { KEY, selectGsm8k, startEndpoint } from './helpers/inference.js';
import { isAlive, leftovers, record, runServer, waitForRun, type RunServer } from './helpers/runs.js';

const TODAY = new Date().toISOString().slice(0, 10);

test('a smoke test measures tokens per rollout; rl_estimate_cost gives the hand-calculated figures from them', async () => {
  const endpoint = await startEndpoint({ 'qwen/qwen3-8b': { mode: 'half' } });
  const h = await connectInMemory({ OPENROUTER_API_KEY: KEY });
  await selectGsm8k(h);
  const before = await h.call('rl_estimate_cost');
  assert.deepEqual(Object.keys(before.json.total_usd), ['high'], 'no smoke test yet: only the bound');
  const smoke = await h.call('rl_test_inference', { base_url: endpoint.baseUrl, models: ['qwen/qwen3-8b'], num_steps: 2, group_size: 4, wait_seconds: 280 });
  assert.equal(smoke.isError, false, JSON.stringify(smoke.json));
  const model = smoke.json.models_tested[0];
  // The JSONL holds atroposlib's placeholders (an OpenAI endpoint gives no token ids): counted by
  // hand from what the endpoint answered instead, per rollout its request's prompt and its share of
  // the request's completion tokens.
  const placeholders = readFileSync(model.output_file, 'utf8').split('\n').filter(Boolean).flatMap((line) => (JSON.parse(line) as { tokens: number[][] }).tokens);
  assert.ok(placeholders.every((t) => t.length === 128 && t.every((id, i) => id === i)));
  const answered = endpoint.requestsFor('qwen/qwen3-8b');
  const prompts = answered.flatMap((r) => Array<number>(r.n).fill(r.usage!.prompt_tokens));
  const completions = [answered.reduce((n, r) => n + r.usage!.completion_tokens, 0) / prompts.length];
  const mean = (v: number[]): number => Math.round((v.reduce((a, b) => a + b, 0) / v.length) * 10) / 10;
  assert.equal(model.rollout_tokens.source, 'endpoint usage');
  assert.equal(model.rollout_tokens.rollouts, 8);
  assert.deepEqual([model.rollout_tokens.prompt_tokens.mean, model.rollout_tokens.completion_tokens.mean], [mean(prompts), mean(completions)]);

  const estimate = (await h.call('rl_estimate_cost')).json;
  // The shipped price of Qwen/Qwen3-8B; batch_size 128 and group_size 16 (gsm8k), total_steps 2500 (locked):
  // per step 8 prompts prefilled, 128 completions sampled, 128 sequences trained.
  const [P, C] = [mean(prompts), mean(completions)];
  const perStep = (8 * P * 0.195 + 128 * C * 0.6 + 128 * (P + C) * 0.44) / 1e6;
  assert.equal(estimate.estimate, true);
  assert.equal(estimate.model, 'Qwen/Qwen3-8B');
  assert.ok(Math.abs(estimate.total_usd.expected.usd - perStep * 2500) < 0.001, `${estimate.total_usd.expected.usd} vs ${perStep * 2500}`);
  assert.match(estimate.total_usd.expected.basis, new RegExp(`^estimate: 2500 steps .* from inference test ${smoke.json.test_id} .*8 rollouts of qwen/qwen3-8b, counted by endpoint usage`));
  assert.ok(estimate.total_usd.low.usd <= estimate.total_usd.expected.usd && estimate.total_usd.expected.usd < estimate.total_usd.high.usd);
  const config = (await h.call('rl_get_current_config')).json;
  assert.deepEqual(config.cost_estimate.total_usd, estimate.total_usd, 'rl_get_current_config carries the same estimate');
});

/**
 * A server whose runs cost more than their smoke test said: $1 per million sampled tokens, a smoke
 * test that saw 10-token completions (expected 50 x 128 x 10 x $1 / 1e6 = $0.064 a run), and a
 * trainer that really samples ~1100-character answers (one token per character in the fakes).
 */
async function underestimatedRuns(t: TestContext, budgets: Record<string, string>, stepSeconds = 2): Promise<RunServer> {
  const prices = { 'Qwen/Qwen3-8B': { prefill: 0, sample: 1, train: 0, as_of: TODAY, source: 'test' } };
  const h = await runServer(t, { lockedEnv: { total_steps: 50 }, config: { prices }, env: budgets });
  const tiny = { prompt_tokens: { mean: 10, max: 10 }, completion_tokens: { mean: 10, p25: 10, max: 10 } };
  saveMeasuredRollouts(h.home, { environment: 'gsm8k', test_id: 'feedf00d', measured_at: new Date().toISOString(), models: { 'qwen/qwen3-8b': { source: 'tokens/masks', rollouts: 16, ...tiny } } });
  h.install.trainerControl({ step_seconds: stepSeconds, chat_answer: `${'Let me think. '.repeat(80)}#### 42` });
  return h;
}

test('a run whose rollouts are longer than its smoke test said stops before the step that would pass its budget, its weights kept, nothing left running', async (t) => {
  // Steps longer than the watchdog's looks (2 s), so each step is seen before the next one ends.
  const h = await underestimatedRuns(t, { RL_MAX_RUN_COST_USD: '0.35' }, 5);
  const started = await h.call('rl_start_training');
  assert.equal(started.isError, false, JSON.stringify(started.json));
  const { expected, high } = started.json.cost_estimate.total_usd;
  assert.equal(expected.usd, 0.064);
  assert.ok(high.usd > 0.35, 'the budget lies between the expected and the high estimate');
  const id = started.json.run_id as string;

  const stopped = await waitForRun(h, id, 'stopped at its budget', (r) => r.status === 'stopped' && Object.values(r.processes).every((p) => p.state !== 'running'), 120);
  assert.match(stopped.error!, /^budget reached: estimated spend \$[\d.]+ and one more step \(\$[\d.]+\) would pass RL_MAX_RUN_COST_USD=\$0\.35, so the run stops before it/);
  const seen = stopped.observed!.batch_tokens!;
  const perStep = (128 * (seen.completion_tokens / seen.sequences)) / 1e6;
  const steps = stopped.observed!.steps_completed;
  assert.equal(steps, Math.floor(0.35 / perStep), `stopped after ${steps} steps at $${perStep} a step: the last step that fits the budget`);
  assert.deepEqual(leftovers([h.install.root, h.home]), []);

  const results = (await h.call('rl_get_results', { run_id: id })).json;
  assert.match(results.outcome.reason, /^Stopped \(budget reached/);
  assert.match(results.weights.latest, /^tinker:\/\/.*step_\d+$/);
  // A run stops before a step that would take it past RL_MAX_RUN_COST_USD, so it never ends above it
  // (it used to stop once its spend had reached the budget, ending up to a step or two over).
  assert.ok(results.cost.spent_usd <= 0.35 && results.cost.spent_usd + perStep > 0.35 && results.cost.estimate === true, JSON.stringify(results.cost));
  assert.match(results.cost.basis, /mean lengths of \d+ batches the trainer took/);
  const status = (await h.call('rl_check_status', { run_id: id })).json;
  assert.equal(status.cost.budget_usd, 0.35);
  const listed = (await h.call('rl_list_runs')).json.runs[0];
  assert.equal(listed.cost.spent_usd, status.cost.spent_usd);
  assert.match(listed.cost.basis, /^estimate/);
});

test('a budget stop reads stopping while a trainer that ignores SIGTERM lives, and the final spend counts the steps it finished meanwhile', async (t) => {
  const h = await underestimatedRuns(t, { RL_MAX_RUN_COST_USD: '0.2', RL_STOP_GRACE_SECONDS: '3' });
  h.install.trainerControl({ step_seconds: 0.4, ignore_sigterm: true, chat_answer: `${'Let me think. '.repeat(80)}#### 42` });
  const started = await h.call('rl_start_training');
  assert.equal(started.isError, false, JSON.stringify(started.json));
  const id = started.json.run_id as string;

  const decided = await waitForRun(h, id, 'the budget reached', (r) => r.error?.startsWith('budget reached') === true, 120);
  assert.equal(decided.status, 'stopping', 'the outcome is decided, but its processes still live');
  assert.equal(decided.ended_at, undefined);
  assert.ok(isAlive(decided.processes.trainer.pid!), 'the trainer ignores SIGTERM for the grace');
  assert.equal((await h.call('rl_check_status', { run_id: id })).json.health.verdict, 'stopping');

  const stopped = await waitForRun(h, id, 'stopped', (r) => r.status === 'stopped', 60);
  assert.ok(Object.values(stopped.processes).every((p) => p.state !== 'running'));
  const logged = readFileSync(stopped.logs.trainer, 'utf8').match(/^Step \d+ complete/gm)?.length ?? 0;
  assert.equal(stopped.observed!.steps_completed, logged, 'every step the trainer logged, the ones during the stop included');
  const status = (await h.call('rl_check_status', { run_id: id })).json;
  assert.match(status.cost.basis, new RegExp(`^estimate: ${logged} steps done`));
  assert.deepEqual(leftovers([h.install.root, h.home]), []);
});

test('two runs whose spend together would pass RL_MAX_TOTAL_COST_USD are both stopped with the reason, nothing left running', async (t) => {
  // Each expected at $0.064: both fit the total at start.
  const h = await underestimatedRuns(t, { RL_MAX_TOTAL_COST_USD: '0.6' }, 5);
  const ids: string[] = [];
  for (let i = 0; i < 2; i++) {
    const started = await h.call('rl_start_training');
    assert.equal(started.isError, false, JSON.stringify(started.json));
    ids.push(started.json.run_id as string);
  }
  const ended = [];
  for (const id of ids) ended.push(await waitForRun(h, id, 'stopped at the total budget', (r) => r.status === 'stopped' && Object.values(r.processes).every((p) => p.state !== 'running'), 120));
  for (const r of ended) assert.match(r.error!, /^budget reached: estimated spend of the active runs \$[\d.]+ \(this run \$[\d.]+\) (reached|and one more step of this run \(\$[\d.]+\) would pass) RL_MAX_TOTAL_COST_USD=\$0\.6, so every active run stops/);
  const spent = await Promise.all(ids.map(async (id) => (await h.call('rl_check_status', { run_id: id })).json.cost.spent_usd as number));
  const total = spent[0]! + spent[1]!;
  const seen = ended[0]!.observed!.batch_tokens!;
  const perStep = (128 * (seen.completion_tokens / seen.sequences)) / 1e6;
  // Each run stops before a step of its own that would pass the cap; both may take their step on
  // the same total, so together at most one step over it.
  assert.ok(total + perStep > 0.6 && total <= 0.6 + perStep, `together $${total} at a step of $${perStep} a run: stopped within a step of the total`);
  assert.deepEqual(leftovers([h.install.root, h.home]), []);
});

test('a start over what RL_MAX_TOTAL_COST_USD leaves is refused with the figures, and nothing is started', async (t) => {
  const h = await runServer(t, { env: { RL_MAX_TOTAL_COST_USD: '1' } });
  const refused = await h.call('rl_start_training');
  assert.equal(refused.isError, true);
  assert.match(refused.json.error, /high .*cost estimate is \$[\d.]+, but RL_MAX_TOTAL_COST_USD=\$1 leaves \$1 after the 0 active runs/);
  assert.ok(refused.json.estimate_usd > 1);
  assert.equal((await h.call('rl_list_runs')).json.total, 0);
});

/** The figure a refusal names and the argument it offers, checked against the message. */
function refusedFigure(refused: { isError: boolean; json: Record<string, any> }, answer: string): number {
  assert.equal(refused.isError, true, JSON.stringify(refused.json));
  assert.equal(refused.json.started, false);
  assert.equal(refused.json.confirmation, answer);
  const figure = refused.json.confirm_with.confirm_cost_usd as number;
  assert.equal(figure, refused.json.cost_estimate.total_usd.high.usd, 'the figure is the estimate (high bound: no inference test yet)');
  assert.match(refused.json.error, /^Not started: the cost was not confirmed \(/);
  assert.ok(refused.json.error.includes(`an estimated high-bound cost of $${figure} `), refused.json.error);
  assert.ok(refused.json.error.includes(`call rl_start_training again with the same arguments plus confirm_cost_usd: ${figure};`), refused.json.error);
  assert.doesNotMatch(refused.json.error, /user declined|user did not/, 'nobody may have been asked');
  return figure;
}

test('over RL_CONFIRM_ABOVE_USD, a client without elicitation (Hermes): refused with the estimate and the argument that confirms it; starts once called with it', async (t) => {
  const h = await runServer(t, { env: { RL_CONFIRM_ABOVE_USD: '0.01' } });
  const refused = await h.call('rl_start_training');
  const figure = refusedFigure(refused, 'unsupported');
  assert.ok(figure > 0.01);
  assert.match(refused.json.error, /this client cannot ask its user: it declared no elicitation/);
  assert.equal((await h.call('rl_list_runs')).json.total, 0, 'no run was created');

  const dry = await h.call('rl_start_training', { dry_run: true });
  assert.equal(dry.isError, false, 'a dry run spends nothing and is not refused');
  assert.match(dry.json.message, new RegExp(`the start needs the user's yes or confirm_cost_usd >= ${figure}`));

  const low = await h.call('rl_start_training', { confirm_cost_usd: figure / 2 });
  refusedFigure(low, 'too_low');
  assert.match(low.json.error, new RegExp(`confirm_cost_usd=\\$${figure / 2} is below the estimate`));
  assert.equal((await h.call('rl_list_runs')).json.total, 0);

  const started = await h.call('rl_start_training', { confirm_cost_usd: figure });
  assert.equal(started.isError, false, JSON.stringify(started.json));
  assert.equal(started.json.status, 'starting');
  await h.call('rl_stop_training', { run_id: started.json.run_id });
  assert.equal(record(h, started.json.run_id).status, 'stopped');
});

test('over RL_CONFIRM_ABOVE_USD, a client with elicitation: a yes starts; a decline (what headless Claude Code answers unasked), a cancel or a question it cannot show is refused with the figure, and confirm_cost_usd starts without asking again', async (t) => {
  const h = await runServer(t, { env: { RL_CONFIRM_ABOVE_USD: '0.01' }, capabilities: { elicitation: {} } });
  const questions: string[] = [];
  let reply: 'accept' | 'decline' | 'cancel' | 'fail' = 'decline';
  h.client.setRequestHandler('elicitation/create', (request) => {
    questions.push(request.params.message);
    if (reply === 'fail') throw new Error('this client cannot show a form here');
    return reply === 'accept' ? { action: 'accept', content: { start: true } } : { action: reply };
  });
  const declined = await h.call('rl_start_training');
  const figure = refusedFigure(declined, 'decline');
  assert.match(declined.json.error, /the client answered the question "decline", which a client with nobody to ask \(such as headless Claude Code\) also answers/);
  assert.match(questions[0]!, /^Start training gsm8k on Qwen\/Qwen3-8B\? This is an estimated high-bound cost of \$[\d.]+ .*These are estimates, not charges\.$/);
  for (const answer of ['cancel', 'fail'] as const) {
    reply = answer;
    const refused = await h.call('rl_start_training');
    refusedFigure(refused, 'cancel');
    assert.match(refused.json.error, /the question was cancelled or not answered/);
  }
  assert.equal(questions.length, 3);
  assert.equal((await h.call('rl_list_runs')).json.total, 0, 'no run was created');

  reply = 'decline';
  const confirmed = await h.call('rl_start_training', { confirm_cost_usd: figure });
  assert.equal(confirmed.isError, false, JSON.stringify(confirmed.json));
  assert.equal(questions.length, 3, 'the confirmed figure is not asked about again');
  await h.call('rl_stop_training', { run_id: confirmed.json.run_id });

  reply = 'accept';
  const accepted = await h.call('rl_start_training');
  assert.equal(accepted.isError, false, JSON.stringify(accepted.json));
  assert.equal(questions.length, 4);
  await h.call('rl_stop_training', { run_id: accepted.json.run_id });
});

test('the campaign budget counts ended runs: a first run spends over half of it, a second that fits is stopped at the cap, a third is refused with the figures; the ledger holds their spends', async (t) => {
  // A first run of three steps ($0.433), stopped before a fourth would pass its own $0.45.
  const h = await underestimatedRuns(t, { RL_MAX_RUN_COST_USD: '0.45', RL_MAX_TOTAL_COST_USD: '0.6' }, 5);
  const first = (await h.call('rl_start_training')).json.run_id as string;
  const ended = await waitForRun(h, first, 'stopped at its own budget', (r) => r.status === 'stopped' && Object.values(r.processes).every((p) => p.state !== 'running'), 120);
  const firstSpent = (await h.call('rl_check_status', { run_id: first })).json.cost.spent_usd as number;
  assert.ok(firstSpent > 0.3, `the first run spent $${firstSpent}, over half of the cap`);
  // Before this change an ended run no longer counted: the second run trained to its own budget.
  const second = await h.call('rl_start_training');
  assert.equal(second.isError, false, JSON.stringify(second.json));
  const stopped = await waitForRun(h, second.json.run_id, 'stopped at the cap', (r) => r.status === 'stopped' && Object.values(r.processes).every((p) => p.state !== 'running'), 120);
  assert.match(stopped.error!, /^budget reached: .*RL_MAX_TOTAL_COST_USD=\$0\.6/);
  const secondSpent = (await h.call('rl_check_status', { run_id: second.json.run_id })).json.cost.spent_usd as number;
  const seen = ended.observed!.batch_tokens!;
  const perStep = (128 * (seen.completion_tokens / seen.sequences)) / 1e6;
  const spend = (await h.call('rl_estimate_cost')).json.spend;
  assert.ok(Math.abs(spend.total_usd - (firstSpent + secondSpent)) < 1e-9, `ledger $${spend.total_usd} vs the runs' $${firstSpent + secondSpent}`);
  assert.ok(spend.total_usd + perStep > 0.6 && spend.total_usd <= 0.6 + perStep, `ledger $${spend.total_usd}: at most the cap and one step of the last run`);
  assert.ok(spend.left_usd < perStep && spend.left_usd === Math.max(0, 0.6 - spend.total_usd));
  const refused = await h.call('rl_start_training');
  assert.equal(refused.isError, true);
  assert.match(refused.json.error, /leaves \$[\d.]+ after the 0 active runs .* spent in all of RL_HOME: runs \$[\d.]+ \(/);
  assert.ok(refused.json.left_usd < refused.json.estimate_usd, JSON.stringify(refused.json));
  assert.deepEqual(leftovers([h.install.root, h.home]), []);
});

test('a budget window shorter than a run: its early spend leaves the window while it trains, and all of it a window after it ended', async (t) => {
  const h = await underestimatedRuns(t, { RL_MAX_TOTAL_COST_USD: '100', RL_BUDGET_WINDOW: '4s' }, 1);
  const id = (await h.call('rl_start_training')).json.run_id as string;
  await waitForRun(h, id, 'eight steps, more than the window', (r) => (r.observed?.steps_completed ?? 0) >= 8, 120);
  const spend = (await h.call('rl_estimate_cost')).json.spend;
  const runSpent = (await h.call('rl_check_status', { run_id: id })).json.cost.spent_usd as number;
  assert.equal(spend.window, 'the last 4s');
  assert.ok(spend.total_usd > 0 && spend.total_usd < runSpent, `the window holds $${spend.total_usd} of the run's $${runSpent}: its first steps left it`);
  assert.ok(Math.abs(spend.left_usd - (100 - spend.total_usd)) < 1e-9);
  await h.call('rl_stop_training', { run_id: id });
  await waitForRun(h, id, 'stopped', (r) => r.status === 'stopped');
  const ended = (await h.call('rl_check_status', { run_id: id })).json.cost.spent_usd as number;
  let after = spend;
  for (let i = 0; i < 120 && after.total_usd !== 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    after = (await h.call('rl_estimate_cost')).json.spend;
  }
  assert.deepEqual([after.total_usd, after.by_id, after.left_usd], [0, [], 100]);
  assert.ok(ended >= runSpent, 'the run itself still says what it spent');
});
