/** The pure decisions of evaluation: statistics, verdicts, checkpoint choice, endpoint routing, rollout picking. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { methodFor, type EvaluateArgs } from '../../src/runtime/wiring/evaluate.js';
import { REPO_ROOT } from '../helpers/tmp.js';
import { chooseCheckpoints, evenlySpaced, savedCheckpoints } from '../../src/runtime/evaluation/checkpoints.js';
import { compareModels } from '../../src/runtime/evaluation/comparison.js';
import { cutMiddle, pickRollouts } from '../../src/runtime/evaluation/picking.js';
import { groupRollouts, itemScores, sampleRollout } from '../../src/runtime/evaluation/rollouts.js';
import { pairedDifference, summarizeScores, tCritical, unpairedDifference, verdictOf, wilson } from '../../src/runtime/evaluation/statistics.js';
import { routeModel } from '../../src/runtime/inference/routing.js';
import { shownMetrics } from '../../src/runtime/evaluation/modelRun.js';

const close = (a: number, b: number, eps = 1e-3): boolean => Math.abs(a - b) < eps;

test('Wilson intervals and t critical values match published tables', () => {
  const rows: [number, number, number, number][] = [
    // successes, n, low, high (Wilson 95%)
    [0, 10, 0, 0.2775],
    [10, 10, 0.7225, 1],
    [5, 10, 0.2366, 0.7634],
    [81, 263, 0.2553, 0.3662],
  ];
  for (const [k, n, low, high] of rows) {
    const ci = wilson(k, n)!;
    assert.ok(close(ci.low, low) && close(ci.high, high), `${k}/${n}: ${JSON.stringify(ci)}`);
  }
  assert.equal(wilson(0, 0), null);
  for (const [df, t] of [[1, 12.706], [3, 3.182], [10, 2.228], [30, 2.042], [60, 2.0], [1000, 1.962]] as const) assert.ok(close(tCritical(df), t, 2e-3), `df ${df}: ${tCritical(df)}`);
});

test('a score summary is Wilson for 0/1 scores and t otherwise; too few items give no interval', () => {
  assert.deepEqual(summarizeScores([1, 0, 1, 1]).method, 'wilson');
  assert.equal(summarizeScores([1, 0, 1, 1]).mean, 0.75);
  const t = summarizeScores([0.5, 0.25, 1, 0.75]);
  assert.equal(t.method, 't');
  assert.ok(close(t.ci!.low, 0.625 - 3.182 * Math.sqrt(0.1041667 / 4)));
  assert.equal(summarizeScores([0.5]).ci, null);
  assert.equal(summarizeScores([]).n, 0);
});

test('verdicts: the difference interval above 0 is better, below worse, across 0 (or missing) no clear difference', () => {
  const rows: [number[], number[], string, string][] = [
    [[0, 0, 0, 0], [1, 1, 1, 1], 'better', 'paired_t'],
    [[1, 1, 1, 1], [0, 0, 0, 0], 'worse', 'paired_t'],
    [[0, 1, 0, 1], [0, 1, 0, 1], 'no_clear_difference', 'paired_t'],
    [[0, 0, 0, 1], [1, 1, 1, 1], 'no_clear_difference', 'paired_t'],
    [[0], [1], 'no_clear_difference', 'paired_t'],
  ];
  for (const [base, other, verdict, method] of rows) {
    const d = pairedDifference(base, other);
    assert.deepEqual([verdictOf(d.ci), d.method], [verdict, method], `${base} -> ${other}`);
  }
  const many = unpairedDifference(Array(50).fill(0).map((_, i) => (i < 10 ? 1 : 0)), Array(60).fill(0).map((_, i) => (i < 45 ? 1 : 0)));
  assert.deepEqual([many.method, verdictOf(many.ci)], ['newcombe', 'better']);
  const means = unpairedDifference([0.2, 0.3, 0.25], [0.9, 0.8, 0.85, 0.95]);
  assert.deepEqual([means.method, verdictOf(means.ci)], ['welch_t', 'better']);
});

test('comparison pairs items only when every key matches, and gives the latest checkpoint the verdict', () => {
  const items = (scores: number[], prefix = 'q') => scores.map((score, i) => ({ key: `${prefix}${i}#0`, score }));
  const c = compareModels([
    { label: 'base', model: 'Qwen/Qwen3-8B', role: 'baseline', items: items([0, 0, 0, 0]) },
    { label: 'step_1', model: 'tinker://x/sampler_weights/step_1', role: 'checkpoint', step: 1, items: items([0, 1, 0, 1]) },
    { label: 'step_3', model: 'tinker://x/sampler_weights/step_3', role: 'checkpoint', step: 3, items: items([1, 1, 1, 1]) },
  ]);
  assert.equal(c.same_items, true);
  assert.deepEqual([c.verdict?.checkpoint, c.verdict?.verdict], ['step_3', 'better']);
  assert.equal(c.models[1]!.vs_baseline!.verdict, 'no_clear_difference');
  const other = compareModels([
    { label: 'base', model: 'b', role: 'baseline', items: items([0, 1, 0, 1]) },
    { label: 'step_2', model: 'c', role: 'checkpoint', step: 2, items: items([0, 1, 0, 1], 'other') },
    { label: 'step_4', model: 'd', role: 'checkpoint', step: 4 },
  ]);
  assert.equal(other.same_items, false);
  assert.equal(other.models[1]!.vs_baseline!.method, 'newcombe');
  assert.deepEqual([other.models[2]!.score, other.verdict?.checkpoint], [null, 'step_2']);
});

test('checkpoints: step_N from the trainer log; latest, all (bounded, evenly spaced), or named', () => {
  const paths = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].map((n) => `tinker://run:train:0/sampler_weights/step_${n}`);
  const saved = savedCheckpoints([...paths, 'tinker://run:train:0/sampler_weights/final']);
  assert.equal(saved.length, 12);
  assert.deepEqual(chooseCheckpoints(saved, 'latest').chosen.map((c) => c.step), [11]);
  const all = chooseCheckpoints(saved, 'all');
  assert.deepEqual(all.chosen.map((c) => c.step), [1, 2, 4, 5, 7, 8, 10, 11]);
  assert.match(all.note!, /11 trained checkpoints saved; 8 evenly spaced/);
  assert.deepEqual(chooseCheckpoints(saved, [3, 'step_5', paths[0]!]).chosen.map((c) => c.step), [0, 3, 5]);
  assert.throws(() => chooseCheckpoints(saved, [42]), /not among the run's saved checkpoints/);
  assert.throws(() => chooseCheckpoints(savedCheckpoints([paths[0]!]), 'latest'), /only step_0, the untrained starting point/);
  assert.throws(() => chooseCheckpoints([], 'all'), /saved no checkpoint yet/);
  assert.deepEqual(evenlySpaced(3, 8), [0, 1, 2]);
  assert.deepEqual(evenlySpaced(10, 1), [9]);
});

test('routing: checkpoints always go to Tinker; Tinker base-model ids too unless base_url was given', () => {
  const tinker = 'https://tinker.example/oai/api/v1';
  const choice = { baseUrl: 'https://openrouter.ai/api/v1', apiKeyEnv: 'OPENROUTER_API_KEY', baseUrlExplicit: false };
  const explicit = { ...choice, baseUrl: 'http://127.0.0.1:9/v1', baseUrlExplicit: true };
  const rows: [string, typeof choice, string][] = [
    ['tinker://abc:train:0/sampler_weights/step_3', choice, 'tinker'],
    ['tinker://abc:train:0/sampler_weights/step_3', explicit, 'tinker'],
    ['Qwen/Qwen3-8B;tinker://abc:train:0/sampler_weights/step_3', explicit, 'tinker'],
    ['Qwen/Qwen3-8B', choice, 'tinker'],
    ['meta-llama/Llama-3.1-8B-Instruct', choice, 'tinker'],
    ['Qwen/Qwen3-8B', explicit, 'env'],
    ['qwen/qwen3-8b', choice, 'env'],
    ['meta-llama/llama-3.1-8b-instruct', choice, 'env'],
    ['openai/gpt-oss-120b', choice, 'env'],
    ['z-ai/glm-4.7-flash', choice, 'env'],
  ];
  for (const [model, c, kind] of rows) {
    const route = routeModel(model, c, tinker);
    assert.equal(route.key.kind, kind, model);
    assert.equal(route.base_url, kind === 'tinker' ? tinker : c.baseUrl, model);
  }
});

test('rollouts: groups and samples read into one shape; picking best/worst/random is bounded and cut with a marker', () => {
  const group = { scores: [1, 0], messages: [[{ role: 'user', content: 'Q?' }, { role: 'assistant', content: 'A1' }], [{ role: 'user', content: 'Q?' }, { role: 'assistant', content: 'A2' }]] };
  assert.deepEqual(groupRollouts(group).map((r) => [r.prompt, r.completion, r.score]), [['[user] Q?', 'A1', 1], ['[user] Q?', 'A2', 0]]);
  assert.match(groupRollouts({ scores: [1], tokens: [[1, 2]] })[0]!.completion, /include_messages off/);
  assert.deepEqual(sampleRollout({ question: 'Q', response: 'R', score: 0 }), { item: 'Q', prompt: 'Q', completion: 'R', score: 0 });
  assert.equal(sampleRollout({ question: 'Q' }), undefined);
  assert.deepEqual(itemScores([groupRollouts(group), groupRollouts(group)]).map((i) => [i.key, i.score]), [['[user] Q?#0', 0.5], ['[user] Q?#1', 0.5]]);

  const all = Array.from({ length: 30 }, (_, i) => ({ item: `q${i}`, prompt: `q${i}`, completion: 'x'.repeat(i === 7 ? 50_000 : 10), score: i % 5, file: 'rl://f' }));
  assert.deepEqual(pickRollouts(all, 'best', 3).map((r) => r.score), [4, 4, 4]);
  assert.deepEqual(pickRollouts(all, 'worst', 2).map((r) => r.prompt), ['q0', 'q5']);
  assert.deepEqual(pickRollouts(all, 'random', 5, 7), pickRollouts(all, 'random', 5, 7), 'seeded');
  assert.notDeepEqual(pickRollouts(all, 'random', 5, 7), pickRollouts(all, 'random', 5, 8));
  const long = pickRollouts(all.filter((r) => r.prompt === 'q7'), 'best', 1)[0]!;
  assert.ok(long.completion.length < 2200 && long.cut?.completion_chars === 48_000, JSON.stringify(long.cut));
  assert.match(cutMiddle('a'.repeat(100), 10, 'rl://x').text, /\[\.\.\. 90 characters cut; the whole text is in rl:\/\/x \.\.\.\]/);
});

test("an environment's own metrics: the first 20 scalar ones are shown, nested or long values are not", () => {
  const all = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`eval/m${i}`, i / 10]));
  const shown = shownMetrics({ nested: { a: 1 }, long: 'x'.repeat(101), flag: true, ...all });
  assert.equal(Object.keys(shown!).length, 20);
  assert.equal(shown!.flag, true);
  assert.equal(shown!['eval/m0'], 0);
  assert.equal('nested' in shown!, false);
  assert.equal('long' in shown!, false);
  assert.equal(shownMetrics(undefined), undefined);
  assert.equal(shownMetrics([1, 2] as never), undefined);
});

test('the method: as asked, else evaluate for an environment whose source logs a held-out evaluation, else process', () => {
  const source = (file: string): string => readFileSync(join(REPO_ROOT, file), 'utf8');
  const rows: Array<[EvaluateArgs['method'], string, string, boolean]> = [
    ['auto', 'examples/tinker_atropos/environments/gsm8k_tinker.py', 'evaluate', true],
    ['auto', 'examples/tinker_atropos/environments/countdown_tinker.py', 'process', true],
    ['auto', 'test/fakes/environments/gsm8k_server.py', 'process', true],
    ['process', 'examples/tinker_atropos/environments/gsm8k_tinker.py', 'process', false],
    ['evaluate', 'test/fakes/environments/gsm8k_server.py', 'evaluate', false],
  ];
  for (const [requested, file, method, mayFallBack] of rows) {
    const choice = methodFor(requested, source(file));
    assert.deepEqual([choice.method, choice.mayFallBack], [method, mayFallBack], `${requested} ${file}`);
    assert.ok(choice.reason.length > 20, choice.reason);
  }
  assert.equal(methodFor('auto', '').method, 'process', 'an unreadable source is treated as having no held-out evaluation');
});
