/**
 * rl_evaluate of tinker-cookbook recipe runs through the recipe's own environments: a math_rl run
 * (arithmetic: no test set, fresh items of its generator) and a gsm8k run (a test set, whose test/
 * metrics the trainer logs every eval_every batches) trained on the fake cookbook over the fake
 * Tinker SDK, whose sampler answers sums better the more optimizer steps its weights had; a recipe
 * that needs a sandbox is refused before anything is sampled.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { stringify } from 'yaml';
import { makeFakeInstall } from './helpers/fakeInstall.js';
import { makeFakeTinker } from './helpers/fakeTinker.js';
import { writeVerifiersRun } from './helpers/registry.js';
import { killLeftovers, newHome, runServer, waitForRun, type RunServer } from './helpers/runs.js';

const KEY = `tml-cookbook-evaluate-${process.pid}-3d8e1b7a2c`;
const tinker = makeFakeTinker();
tinker.addKey(KEY);
tinker.setModels(['Qwen/Qwen3.5-9B']);
tinker.setService({ answer_skill: { untrained: 0.15, trained: 0.95, half_life_steps: 1 } });
const install = await makeFakeInstall({ cookbook: true, tinkerState: tinker.dir });
const home = newHome();
after(() => killLeftovers([install.root, home]));
const price = { prefill: 0.2, sample: 0.6, train: 0.45, as_of: new Date().toISOString().slice(0, 10), source: 'test' };
const ENDED = ['completed', 'failed', 'stopped'];

async function server(t: Parameters<typeof runServer>[0], steps = 6): Promise<RunServer> {
  // The operator's lock is the runs' max_steps.
  return runServer(t, { install, home, select: false, lockedEnv: { total_steps: steps }, config: { prices: { 'Qwen/Qwen3.5-9B': price } }, env: { TINKER_API_KEY: KEY } });
}

async function train(h: RunServer, values: Record<string, unknown>): Promise<string> {
  await h.call('rl_select_environment', { name: 'math_rl' });
  const started = await h.call('rl_start_training', { config: values });
  assert.equal(started.isError, false, JSON.stringify(started.json));
  const runId = started.json.run_id as string;
  const done = await waitForRun(h, runId, 'completes', (r) => ENDED.includes(r.status), 120);
  assert.equal(done.status, 'completed', done.error);
  return runId;
}

async function evaluate(h: RunServer, args: Record<string, unknown>): Promise<any> {
  const answer = await h.call('rl_evaluate', { wait_seconds: 200, ...args });
  assert.equal(answer.isError, false, JSON.stringify(answer.json));
  assert.equal(answer.json.status, 'completed', JSON.stringify(answer.json));
  return answer.json;
}

/** The "x + y" pairs of math_rl's arithmetic training batches 0..n-1, from the fake recipe itself. */
function trainingPairs(batchSize: number, batches: number): Set<string> {
  const code = `import json, random\nprint(json.dumps([[random.Random(i).randint(0, 100) for _ in range(${2 * batchSize})] for i in range(${batches})]))`;
  const draws = JSON.parse(execFileSync(install.python, ['-c', code], { encoding: 'utf8' })) as number[][];
  return new Set(draws.flatMap((d) => Array.from({ length: batchSize }, (_, j) => `${d[2 * j]} + ${d[2 * j + 1]}`)));
}

test('a completed math_rl run: base and trained checkpoint scored on the same fresh items by the recipe\'s own environment, a verdict with an interval, worst and best rollouts, the sampled tokens recorded', async (t) => {
  install.cookbookControl({ step_seconds: 0.02 });
  const h = await server(t);
  const runId = await train(h, { groups_per_batch: 4, group_size: 2, save_every: 3 });
  const samplersBefore = tinker.calls('create_sampling_client').length;
  const answer = await evaluate(h, { run_id: runId, num_items: 20, group_size: 1 });
  assert.equal(answer.method, 'recipe');
  assert.match(answer.method_reason, /recipe's own TinkerTokenCompleter with its max_tokens.*env\.step/);
  assert.match(answer.method_reason, /Items: fresh draws of the recipe's generator: batches 100-\d+, past the 100 it trains on/);
  assert.deepEqual(answer.models.map((m: any) => [m.label, m.model, m.items]), [['base', 'Qwen/Qwen3.5-9B', 20], ['step_6', answer.models[1].model, 20]]);
  assert.match(answer.models[1].model, /^tinker:\/\/.*\/sampler_weights\/final$/);
  assert.equal(answer.same_items, true);
  assert.equal(answer.verdict.verdict, 'better', answer.message);
  assert.equal(answer.models[1].vs_baseline.method, 'paired_t');
  assert.ok(answer.models[1].vs_baseline.ci[0] > 0, JSON.stringify(answer.models[1].vs_baseline));
  assert.ok(answer.models[0].score < answer.models[1].score);
  assert.equal(typeof answer.models[0].env_metrics.correct, 'number', JSON.stringify(answer.models[0].env_metrics));
  // Each model had its own sampling client on Tinker: the base model by name, the checkpoint by its sampler path.
  const samplers = tinker.calls('create_sampling_client').slice(samplersBefore).map((c) => c.args);
  assert.deepEqual(samplers, [{ model_path: null, base_model: 'Qwen/Qwen3.5-9B' }, { model_path: answer.models[1].model, base_model: null }]);
  // The tokens sampled, per model, as the spend figures need them: in result.json and request by request in <stem>.wire.jsonl.
  const stored = JSON.parse(readFileSync(join(home, 'evaluations', answer.eval_id, 'result.json'), 'utf8'));
  for (const [i, m] of stored.models.entries()) {
    assert.equal(m.usage.requests, 20, JSON.stringify(m.usage));
    assert.ok(m.usage.prompt_tokens > 20 * 40 && m.usage.completion_tokens >= 20 && m.usage.completion_tokens <= 20 * 5, JSON.stringify(m.usage));
    const wire = readFileSync(join(home, 'evaluations', answer.eval_id, `${i}-${m.label}.wire.jsonl`), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(wire.reduce((n: number, w: any) => n + w.usage.completion_tokens, 0), m.usage.completion_tokens);
  }
  // In the spend ledger as sampling of the run's base model, priced from those tokens (the checkpoint as its base model).
  const sampled = stored.models.reduce((usd: number, m: any) => usd + (m.usage.prompt_tokens * price.prefill + m.usage.completion_tokens * price.sample) / 1e6, 0);
  const spend = (await h.call('rl_estimate_cost', {})).json.spend;
  const entry = spend.by_id.find((s: any) => s.kind === 'evaluation' && s.id === answer.eval_id);
  assert.ok(entry !== undefined, JSON.stringify(spend));
  assert.ok(Math.abs(entry.usd - sampled) < 1e-9, `ledger ${entry.usd} vs sampled ${sampled}`);
  // The items are not ones the run trained on: none of the 100 training batches' sums.
  const trained = trainingPairs(4, 100);
  const groups = readFileSync(join(home, 'evaluations', answer.eval_id, '0-base.groups.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const asked = groups.map((g: any) => [...g.messages[0][0].content.matchAll(/What is (\d+ \+ \d+)\?/g)].at(-1)![1]);
  assert.equal(new Set(asked).size, 20);
  assert.deepEqual(asked.filter((p: string) => trained.has(p)), []);

  const worst = await h.call('rl_get_rollouts', { eval_id: answer.eval_id, filter: 'worst', limit: 3 });
  assert.equal(worst.isError, false, JSON.stringify(worst.json));
  assert.ok(worst.json.rollouts.every((r: any) => r.score <= 0), JSON.stringify(worst.json.rollouts));
  assert.match(worst.json.rollouts[0].prompt, /What is \d+ \+ \d+\?/);
  const best = await h.call('rl_get_rollouts', { eval_id: answer.eval_id, filter: 'best', limit: 3 });
  assert.deepEqual(best.json.rollouts.map((r: any) => r.score), [1, 1, 1]);
  assert.match(best.json.rollouts[0].completion, /^\d+$/);
});

test('a recipe with a test set (gsm8k) is evaluated on it; its logged test/ metrics at step 0 and at the end show in rl_get_results and rl_evaluate says so', async (t) => {
  install.cookbookControl({ step_seconds: 0.02 });
  const h = await server(t, 7);
  const runId = await train(h, { env: 'gsm8k', groups_per_batch: 50, group_size: 2, save_every: 7, eval_every: 3 });
  const rows = readFileSync(join(home, 'runs', runId, 'cookbook', 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(rows.filter((r) => 'test/env/all/correct' in r).map((r) => r.step), [0, 3, 6]);
  const results = (await h.call('rl_get_results', { run_id: runId })).json;
  assert.deepEqual(results.test_metrics.steps, [0, 6], JSON.stringify(results.test_metrics));
  const correct = results.test_metrics.metrics['test/env/all/correct'];
  const r4 = (x: number) => Math.round(x * 10000) / 10000;
  assert.equal(correct.base, r4(rows[0]['test/env/all/correct']));
  assert.equal(correct.trained, r4(rows[6]['test/env/all/correct']));
  assert.ok(correct.diff > 0.3, JSON.stringify(correct));
  assert.match(results.test_metrics.note, /step 0, before any training.*after 6 batches, at no cost/);

  const answer = await evaluate(h, { run_id: runId, num_items: 20 });
  assert.match(answer.note, /already logged its recipe's own test metrics at steps 0 and 6: rl_get_results shows them/);
  assert.match(answer.method_reason, /Items: the first items of the recipe's test set \(60 items\)/);
  assert.deepEqual(answer.models.map((m: any) => m.items), [20, 20]);
  assert.equal(answer.verdict.verdict, 'better', answer.message);
  const groups = readFileSync(join(home, 'evaluations', answer.eval_id, '1-step_7.groups.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.ok(groups.every((g: any) => g.scores.length === 1 && /Natalia sold clips to \d{3} of her friends/.test(g.messages[0][0].content)), 'one completion per test item, as the recipe builds its test set');
});

test('a recipe whose environments need a sandbox is refused before any sampling', async (t) => {
  const h = await server(t);
  const run = writeVerifiersRun(home, 'cb00e001', { vfEnvId: 'unused', file: install.python, env: { model_name: 'Qwen/Qwen3.5-9B' }, steps: 2 });
  const logDir = join(home, 'runs', run.run_id, 'cookbook');
  writeFileSync(join(home, 'runs', run.run_id, 'config.yaml'), stringify({ cookbook: { recipe: 'harbor_rl', log_path: logDir }, env: { model_name: 'Qwen/Qwen3.5-9B' }, tinker: {} }));
  const samplers = tinker.calls('create_sampling_client').length;
  const refused = await h.call('rl_evaluate', { run_id: run.run_id });
  assert.equal(refused.isError, true);
  assert.match(refused.json.error, /recipe harbor_rl: its environments are tasks run in Modal sandboxes .* cannot build them to evaluate\. Nothing was sampled\./);
  assert.equal(tinker.calls('create_sampling_client').length, samplers);
});
