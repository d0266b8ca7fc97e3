/**
 * The readiness verdict as tables: what the offline checks observed (and what a probe's models
 * scored) in, the verdict and its first reason out. No process is started.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { combine, judgeOffline, type CheckedItem, type OfflineObservations, type Probe, type Score } from '../../src/runtime/readiness/verdicts/verdict.js';
import { judgeProbe, signalStats } from '../../src/runtime/readiness/verdicts/signal.js';
import { configKey } from '../../src/runtime/readiness/readiness.js';

const OK = { ok: true };
const probe = (kind: Probe['kind'], scores: Score[] | 'dropped' | { error: string }): Probe =>
  scores === 'dropped' ? { kind, completion: '', dropped: true } : Array.isArray(scores) ? { kind, completion: kind, scores } : { kind, completion: kind, error: scores.error };

/** `n` items, each probed as `probes(i)` says. */
function observed(n: number, probes: (i: number) => Probe[], extra: Partial<OfflineObservations> = {}): OfflineObservations {
  const items: CheckedItem[] = Array.from({ length: n }, (_, i) => ({ index: i, reference: { key: 'answer', text: '42' }, probes: probes(i) }));
  return { framework: 'atropos', steps: { import: OK, config: OK, data: OK, prompts: OK }, items_count: 16, prompt_tokens: Array(n).fill(120), max_token_length: 2048, items, unchecked: [], ...extra };
}

const good = (i: number): Probe[] => [probe('empty', [0, 0, 0, 0]), probe('garbage', [0, 0, 0, 0]), probe('reference', [1, 1, 1, 1]), probe('reference_again', [1, 1, 1, 1]), ...(i < 0 ? [] : [])];

const rows: { name: string; o: OfflineObservations; verdict: string; code?: string; message?: RegExp }[] = [
  { name: 'a good environment', o: observed(5, good), verdict: 'go' },
  {
    name: 'reward crashes on an empty completion',
    o: observed(5, () => [probe('empty', { error: "TypeError: 'NoneType' object is not subscriptable at env.py:40" }), probe('garbage', [0, 0, 0, 0]), probe('reference', [1, 1, 1, 1]), probe('reference_again', [1, 1, 1, 1])]),
    verdict: 'no_go',
    code: 'crash_empty',
    message: /rewards crashed on an empty completion on 5 of 5 items: TypeError/,
  },
  {
    name: 'the reference answer scores 0',
    o: observed(10, (i) => [probe('empty', [0, 0]), probe('garbage', [0, 0]), probe('reference', [i < 3 ? 1 : 0, i < 3 ? 1 : 0]), probe('reference_again', [i < 3 ? 1 : 0, i < 3 ? 1 : 0])]),
    verdict: 'no_go',
    code: 'reference_not_top',
    message: /the reference answer scored 0 on 7 of 10 items/,
  },
  {
    name: 'one reference in ten scoring 0 is a check, not a no_go',
    o: observed(10, (i) => [probe('empty', [0, 0]), probe('garbage', [0, 0]), probe('reference', [i === 0 ? 0 : 1, i === 0 ? 0 : 1]), probe('reference_again', [i === 0 ? 0 : 1, i === 0 ? 0 : 1])]),
    verdict: 'check',
    code: 'reference_not_top',
  },
  {
    name: 'random scoring',
    o: observed(3, () => [probe('empty', [0.1, 0.7, 0.3, 0.9]), probe('garbage', [0.5, 0.2, 0.8, 0.4]), probe('reference', [0.6, 0.1, 0.9, 0.3])]),
    verdict: 'no_go',
    code: 'not_deterministic',
    message: /the same completion scored differently/,
  },
  {
    name: 'the reference scored differently the second time',
    o: observed(2, () => [probe('empty', [0, 0]), probe('garbage', [0, 0]), probe('reference', [1, 1]), probe('reference_again', [0.5, 0.5])]),
    verdict: 'no_go',
    code: 'not_deterministic',
  },
  {
    name: 'groups always alike: every completion scores the same',
    o: observed(5, () => [probe('empty', [0.5, 0.5]), probe('garbage', [0.5, 0.5]), probe('reference', [0.5, 0.5]), probe('reference_again', [0.5, 0.5])]),
    verdict: 'no_go',
    code: 'always_alike',
  },
  {
    name: 'prompts far longer than max_token_length',
    o: observed(5, good, { prompt_tokens: [9000, 9100, 8800, 9050, 9020], max_token_length: 512 }),
    verdict: 'no_go',
    code: 'prompts_too_long',
    message: /5 of 5 prompts reach 512 tokens \(longest 9100\)/,
  },
  { name: 'a prompt over half of max_token_length', o: observed(5, good, { prompt_tokens: [300, 100, 100, 100, 100], max_token_length: 512 }), verdict: 'check', code: 'prompts_long' },
  {
    name: 'NaN rewards count apart from zeros',
    o: observed(2, () => [probe('empty', ['NaN', 'NaN']), probe('garbage', [0, 0]), probe('reference', [1, 1]), probe('reference_again', [1, 1])]),
    verdict: 'no_go',
    code: 'invalid_empty',
    message: /not numbers for an empty completion: NaN \(4 rewards\)/,
  },
  {
    name: 'an empty completion scoring as high as the reference',
    o: observed(2, () => [probe('empty', [1, 1]), probe('garbage', [0, 0]), probe('reference', [1, 1]), probe('reference_again', [1, 1])]),
    verdict: 'no_go',
    code: 'empty_rewarded',
  },
  {
    name: 'an empty group dropped (scored None) is not a failure',
    o: observed(2, () => [probe('empty', 'dropped'), probe('garbage', [0, 0]), probe('reference', [1, 1]), probe('reference_again', [1, 1])]),
    verdict: 'go',
  },
  {
    name: 'no reference answer: the top was not shown, check (with what could not be checked)',
    o: { ...observed(2, () => [probe('empty', [0, 0]), probe('garbage', [0, 0])]), unchecked: ['reference answer: the items carry none'] },
    verdict: 'check',
    code: 'top_not_shown',
    message: /reference answer: the items carry none/,
  },
  { name: 'an import that fails', o: { framework: 'atropos', steps: { import: { ok: false, error: "ModuleNotFoundError: No module named 'datasets'" } }, prompt_tokens: [], items: [], unchecked: [] }, verdict: 'no_go', code: 'import_failed' },
  { name: 'data with no items', o: observed(1, good, { items_count: 0 }), verdict: 'no_go', code: 'no_items' },
];

for (const row of rows) {
  test(`offline: ${row.name} -> ${row.verdict}`, () => {
    const judged = judgeOffline(row.o);
    assert.equal(judged.verdict, row.verdict, JSON.stringify(judged.reasons));
    if (row.code !== undefined) assert.equal(judged.reasons[0]?.code, row.code, JSON.stringify(judged.reasons));
    if (row.message !== undefined) assert.match(judged.reasons[0]!.message, row.message);
    if (row.verdict === 'go') assert.ok(judged.evidence.some((e) => e.includes('reference answer scored the top')), JSON.stringify(judged.evidence));
  });
}

test('reasons are ranked: no_go before check, whatever order the checks found them in', () => {
  const o = observed(5, (i) => [probe('empty', [0, 0]), probe('garbage', [0, 0]), probe('reference', [i === 0 ? 0 : 1, i === 0 ? 0 : 1]), probe('reference_again', [i === 0 ? 0 : 1, i === 0 ? 0 : 1])], {
    prompt_tokens: [600, 600, 600, 600, 600],
    max_token_length: 512,
  });
  const judged = judgeOffline(o);
  assert.deepEqual(
    judged.reasons.map((r) => [r.verdict, r.code]),
    [
      ['no_go', 'prompts_too_long'],
      ['check', 'reference_not_top'],
    ],
  );
});

test('probe: signal stats count mixed, all-right and all-wrong groups, and invalid rewards apart from zeros', () => {
  const stats = signalStats({ model: 'm', groups: [[1, 0, 1, 0], [1, 1, 1, 1], [0, 0, 0, 0], [0, null, 'NaN', 1]] });
  assert.deepEqual(stats, { model: 'm', groups: 4, mixed_share: 0.5, all_right_share: 0.25, all_wrong_share: 0.25, reward_range: [0, 1], invalid_rewards: 2, rewards: 16 });
});

test('probe: groups always alike for every model is no_go; a model with mixed groups is go with its share and dollars per step', () => {
  const alike = judgeProbe([signalStats({ model: 'Qwen/Qwen3-8B', groups: [[1, 1], [1, 1], [1, 1]] })], {});
  assert.equal(alike.verdict, 'no_go');
  assert.match(alike.reasons[0]!.message, /no training signal: 0 of 3 groups mixed for Qwen\/Qwen3-8B \(100% all right, 0% all wrong\)/);

  const cost = { per_rollout_usd: 0.0001, per_step_usd: 0.0128, run_usd: 0.64, basis: 'b' };
  const good = judgeProbe([signalStats({ model: 'M', groups: [[1, 0], [1, 1], [0, 1], [0, 0]] })], { M: cost });
  assert.equal(good.verdict, 'go');
  assert.match(good.evidence[0]!, /training signal: 50% of 4 groups mixed for M; \$0.0001 per rollout, \$0.0128 per step, \$0.64 for the run/);

  // The probe answers what offline could not (the top): that reason goes; the others stay.
  const offline = judgeOffline({ ...observed(1, () => [probe('empty', [0, 0]), probe('garbage', [0, 0])]), unchecked: ['reference answer: none'] });
  assert.equal(offline.verdict, 'check');
  assert.equal(combine(offline, good).verdict, 'go');
  assert.equal(combine(offline, alike).verdict, 'no_go');
});

test('a verdict is kept per config: naming fields do not change the key, trained values do', () => {
  const base = { group_size: 8, max_token_length: 512, wandb_name: 'a-20260101' };
  assert.equal(configKey(base), configKey({ ...base, wandb_name: 'a-20261127' }));
  assert.equal(configKey(base), configKey({ wandb_name: 'x', max_token_length: 512, group_size: 8 }));
  assert.notEqual(configKey(base), configKey({ ...base, group_size: 16 }));
});

test('everything scoring 0 is the reference not recognised; everything scoring above 0 is always alike', () => {
  const all = (x: number): OfflineObservations => observed(4, () => [probe('empty', [x, x]), probe('garbage', [x, x]), probe('reference', [x, x]), probe('reference_again', [x, x])]);
  const zero = judgeOffline(all(0));
  assert.equal(zero.reasons[0]!.code, 'reference_not_top');
  assert.match(zero.reasons[0]!.message, /the reference answer scored 0 on 4 of 4 items, as empty and garbage completions do/);
  assert.equal(judgeOffline(all(1)).reasons[0]!.code, 'always_alike');
});
