/**
 * What Tinker reports, turned into answers, as tables of pure functions: billed dollars from
 * usage rows (checked by hand, cached prefill included), storage from checkpoint sizes and ages,
 * exact short descriptions of checkpoint paths, which checkpoints an action keeps, a retired base
 * model, and a failed billing question.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ModelPrice } from '../../src/core/settings.js';
import { priceTable } from '../../src/runtime/cost/priceConfig.js';
import { baseModelOutcome } from '../../src/runtime/setup/modelRequirements.js';
import { billedUsage, type BillingAnswer } from '../../src/runtime/tinker/billing.js';
import { inOrder, planAction, storageOf, trainedWeights, type TinkerCheckpoint } from '../../src/runtime/tinker/checkpoints.js';
import { describePaths, parseTinkerPath, sessionOf, trainingRunIdsOf } from '../../src/runtime/tinker/paths.js';
import { usageOf } from '../../src/runtime/tinker/usage.js';
import { RunUsage } from '../../src/runtime/runs/usage.js';
import type { RunRecord } from '../../src/runtime/runs/seams/record.js';

const QWEN: ModelPrice = { prefill: 0.195, sample: 0.6, train: 0.44, as_of: '2026-10-07', source: 'test' };
const HOUR = 3_600_000;
const NOW = Date.parse('2026-11-20T12:00:00Z');
const zero = { training: 0, sampling_prefill: 0, sampling_prefill_cached: 0, sampling_sample: 0, checkpoint: 0, storage_gigabyte_hours: 0 };

function billing(totals: BillingAnswer['totals'], asOf: string | null = '2026-11-20T09:00:00Z'): BillingAnswer {
  return { window: { start: '2026-11-20T00:00:00Z', end: '2026-11-20T13:00:00Z' }, session_ids: ['s1'], as_of: asOf, totals };
}

function checkpoint(path: string, o: { size?: number; hoursAgo?: number; expiresInHours?: number } = {}): TinkerCheckpoint {
  const kind = path.includes('/sampler_weights/') ? 'sampler' : 'state';
  const created = new Date(NOW - (o.hoursAgo ?? 1) * HOUR).toISOString();
  const expires = o.expiresInHours === undefined ? null : new Date(NOW + o.expiresInHours * HOUR).toISOString();
  return { path, training_run_id: parseTinkerPath(path)!.training_run_id, name: path.split('/').at(-1)!, kind, size_bytes: o.size ?? 1e9, created_at: created, expires_at: expires, public: false };
}

test('billed dollars are the usage rows priced by hand: cached prefill at 20% of prefill by default, storage from sizes and ages', () => {
  // Two 1 GB checkpoints kept 73 hours: 146 GB-hours = 0.2 GB-months at $0.10.
  const storage = storageOf([checkpoint('tinker://s1:train:0/sampler_weights/step_0', { hoursAgo: 73 }), checkpoint('tinker://s1:train:0/sampler_weights/step_1', { hoursAgo: 73 })], NOW);
  assert.deepEqual(storage, { checkpoints: 2, size_bytes: 2e9, monthly_cost_usd: 0.2, gigabyte_hours: 146, accrued_usd: 0.02 });
  const rows = billing([{ base_model: 'Qwen/Qwen3-8B', ...zero, training: 2_000_000, sampling_prefill: 1_000_000, sampling_prefill_cached: 500_000, sampling_sample: 300_000, checkpoint: 4 }]);
  const billed = billedUsage(rows, (m) => (m === 'Qwen/Qwen3-8B' ? QWEN : undefined), storage);
  // 2M x 0.44 + 1M x 0.195 + 0.5M x (0.2 x 0.195) + 0.3M x 0.6, per million, + $0.02 of storage.
  const hand = 2 * 0.44 + 1 * 0.195 + 0.5 * 0.039 + 0.3 * 0.6 + 0.02;
  assert.ok(Math.abs(billed.usd! - hand) < 1e-9, `${billed.usd} vs ${hand}`);
  assert.equal(billed.as_of, '2026-11-20T09:00:00Z');
  assert.deepEqual(billed.by_type, {
    training: { amount: 2_000_000, unit: 'tokens', usd: 0.88 },
    sampling_prefill: { amount: 1_000_000, unit: 'tokens', usd: 0.195 },
    sampling_prefill_cached: { amount: 500_000, unit: 'tokens', usd: 0.0195 },
    sampling_sample: { amount: 300_000, unit: 'tokens', usd: 0.18 },
    checkpoint: { amount: 4, unit: 'checkpoints', usd: null },
    storage: { amount: 146, unit: 'GB-hours', usd: 0.02 },
  });
  assert.match(billed.note, /up to 2026-11-20T09:00:00Z \(its billing lags/);
  assert.match(billed.note, /0\.039 cached prefill/);
  assert.match(billed.note, /storage is computed from the sizes and ages of the 2 checkpoints/);
});

test('an explicit cached_prefill rate wins; an unpriced model is listed without dollars and said; no rows yet is said', () => {
  const cheap = { ...QWEN, cached_prefill: 0.05 };
  const rows = billing([
    { base_model: 'Qwen/Qwen3-8B', ...zero, sampling_prefill_cached: 1_000_000 },
    { base_model: 'meta-llama/Llama-3.1-8B', ...zero, training: 1_000_000, sampling_prefill_cached: 1_000_000 },
  ]);
  const billed = billedUsage(rows, (m) => (m === 'Qwen/Qwen3-8B' ? cheap : undefined), undefined);
  assert.equal(billed.usd, 0.05);
  assert.deepEqual(billed.by_type.sampling_prefill_cached, { amount: 2_000_000, unit: 'tokens', usd: 0.05 });
  assert.deepEqual(billed.by_type.training, { amount: 1_000_000, unit: 'tokens', usd: null });
  assert.match(billed.note, /no price for meta-llama\/Llama-3\.1-8B/);
  assert.match(billed.note, /storage is not included/);

  const empty = billedUsage(billing([], null), () => QWEN, undefined);
  assert.equal(empty.usd, 0);
  assert.equal(empty.as_of, null);
  assert.match(empty.note, /has no rows for the run's 1 session\(s\) yet/);
});

test('the price table takes cached_prefill as an optional rate and refuses a bad one', () => {
  const table = priceTable({ M: { prefill: 1, sample: 2, train: 3, cached_prefill: 0.25, as_of: '2026-11-01' } }, 'rl.yaml');
  assert.equal(table.M!.cached_prefill, 0.25);
  assert.equal(priceTable({ M: { prefill: 1, sample: 2, train: 3, as_of: '2026-11-01' } }, 'rl.yaml').M!.cached_prefill, undefined);
  assert.throws(() => priceTable({ M: { prefill: 1, sample: 2, train: 3, cached_prefill: -1, as_of: '2026-11-01' } }, 'rl.yaml'), /prices\.M\.cached_prefill must be dollars per million tokens/);
});

test('storage counts each checkpoint until now or its expiry', () => {
  const s = storageOf([checkpoint('tinker://a:train:0/sampler_weights/step_0', { size: 2e9, hoursAgo: 10, expiresInHours: -5 }), checkpoint('tinker://a:train:0/sampler_weights/step_1', { size: 5e8, hoursAgo: 2, expiresInHours: 24 })], NOW);
  assert.equal(s.gigabyte_hours, 2 * 5 + 0.5 * 2);
  assert.equal(s.monthly_cost_usd, 0.25);
});

test('paths: parsed, grouped by training run and session, and described exactly and briefly', () => {
  assert.deepEqual(parseTinkerPath('tinker://ab-12:train:0/weights/000080'), { path: 'tinker://ab-12:train:0/weights/000080', training_run_id: 'ab-12:train:0', kind: 'state', name: '000080', step: 80 });
  assert.equal(parseTinkerPath('tinker://x/other/step_1'), undefined);
  assert.deepEqual(trainingRunIdsOf(['tinker://a:train:0/sampler_weights/step_0', null, 'tinker://a:train:0/sampler_weights/step_1', 'tinker://b:train:1/weights/s', 'nope']), ['a:train:0', 'b:train:1']);
  assert.equal(sessionOf('2d57b556:train:3'), '2d57b556');
  assert.equal(sessionOf('no-session'), undefined);
  const run = 'tinker://r:train:0';
  const table: Array<[string[], string[]]> = [
    [[`${run}/sampler_weights/step_7`], [`${run}/sampler_weights/step_7`]],
    [[3, 1, 2, 5, 10, 11].map((n) => `${run}/sampler_weights/step_${n}`), [`${run}/sampler_weights/step_{1..3,5,10..11}`]],
    [[`${run}/weights/000100`, `${run}/weights/000080`, `${run}/sampler_weights/final`, `${run}/weights/000080`], [`${run}/weights/{000080,000100}`, `${run}/sampler_weights/final`]],
    [[`${run}/sampler_weights/step_1`, 'tinker://q:train:0/sampler_weights/step_2'], [`${run}/sampler_weights/step_1`, 'tinker://q:train:0/sampler_weights/step_2']],
  ];
  for (const [paths, described] of table) assert.deepEqual(describePaths(paths), described, paths.join(' '));
});

test('an action on the intermediate checkpoints keeps the latest of each kind, the best and named steps, within `steps`', () => {
  const run = 'tinker://r:train:0';
  const all = [...[0, 1, 2, 3, 4, 5].map((n) => checkpoint(`${run}/sampler_weights/step_${n}`, { hoursAgo: 10 - n })), checkpoint(`${run}/weights/000003`), checkpoint(`${run}/weights/000005`)];
  const everything = planAction(all, { latest: true, best: `${run}/sampler_weights/step_2`, steps: [4] });
  assert.deepEqual(everything.targets.map((c) => c.path), [`${run}/sampler_weights/step_0`, `${run}/sampler_weights/step_1`, `${run}/sampler_weights/step_3`, `${run}/weights/000003`]);
  assert.deepEqual(new Map(everything.kept.map((k) => [k.path, k.why])), new Map([
    [`${run}/sampler_weights/step_5`, 'the latest sampler checkpoint'],
    [`${run}/weights/000005`, 'the latest state checkpoint'],
    [`${run}/sampler_weights/step_2`, 'the best by rl_evaluate'],
    [`${run}/sampler_weights/step_4`, 'step 4 was named in keep'],
  ]));
  assert.deepEqual(planAction(all, { latest: true, steps: [] }, [1, 5]).targets.map((c) => c.path), [`${run}/sampler_weights/step_1`], 'the latest is kept even when named in steps');
  assert.equal(planAction(all, { latest: false, steps: [] }).targets.length, all.length, 'keep nothing: every checkpoint');
});

test("the run's trained weights (a cookbook run's `final`, else the newest by step) are the newest and kept by every rule", () => {
  const run = 'tinker://r:train:1';
  // A cookbook run: final saved last, with the batch of the record before it; its name has no number.
  const cookbook = [2, 4].flatMap((n) => [checkpoint(`${run}/weights/00000${n}`, { hoursAgo: 5 - n }), checkpoint(`${run}/sampler_weights/00000${n}`, { hoursAgo: 5 - n })]);
  cookbook.push(checkpoint(`${run}/weights/final`, { hoursAgo: 0.5 }), checkpoint(`${run}/sampler_weights/final`, { hoursAgo: 0.5 }));
  const trained = trainedWeights(`${run}/sampler_weights/final`);
  assert.deepEqual(trained, [`${run}/sampler_weights/final`, `${run}/weights/final`]);
  assert.deepEqual(inOrder(cookbook, trained).slice(-2).map((c) => c.name), ['final', 'final']);
  for (const keep of [{ latest: true, steps: [] }, { latest: false, steps: [] }, { latest: false, steps: [4] }]) {
    for (const only of [undefined, [2, 4]]) {
      const plan = planAction(cookbook, { ...keep, trained }, only);
      assert.ok(plan.targets.every((c) => c.name !== 'final'), `${JSON.stringify(keep)} ${only}: ${plan.targets.map((c) => c.path)}`);
    }
  }
  // An Atropos run: the newest sampler by step; tinker-atropos saves no state beside it.
  const atropos = [0, 1, 2].map((n) => checkpoint(`${run}/sampler_weights/step_${n}`));
  const plan = planAction(atropos, { latest: false, steps: [], trained: trainedWeights(`${run}/sampler_weights/step_2`) });
  assert.deepEqual(plan.targets.map((c) => c.name), ['step_0', 'step_1']);
  assert.match(plan.kept[0]!.why, /trained weights/);
  assert.deepEqual(trainedWeights(null), []);
});

test('a retired base model is refused naming the live ones; an unanswered question blocks nothing', () => {
  const live = { ok: true as const, models: ['Qwen/Qwen3-8B', 'Qwen/Qwen3-32B'], checked_at: '2026-11-20T11:00:00Z' };
  assert.equal(baseModelOutcome('Qwen/Qwen3-8B', live).ok, true);
  const refused = baseModelOutcome('meta-llama/Llama-3.1-8B', live);
  assert.equal(refused.ok, false);
  if (refused.ok) return;
  assert.match(refused.message, /^Tinker no longer serves the base model meta-llama\/Llama-3\.1-8B .*Live base models: Qwen\/Qwen3-8B, Qwen\/Qwen3-32B\./);
  assert.deepEqual(refused.hints.live_models, live.models);
  const unknown = baseModelOutcome('meta-llama/Llama-3.1-8B', { ok: false, reason: 'Tinker did not answer (timeout)' });
  assert.deepEqual(unknown, { ok: true, detail: 'meta-llama/Llama-3.1-8B: not checked (Tinker did not answer (timeout))' });
});

test('billing refused for want of the billing-view role: no dollars, the reason, and the storage still computed', () => {
  const denied = { error: { kind: 'permission', status: 403, message: "PermissionDeniedError: Error code: 403 - {'detail': 'Viewing billing usage requires the billing view role'}" } };
  const listing = { checkpoints: [checkpoint('tinker://s:train:0/sampler_weights/step_0', { hoursAgo: 730 })], not_found: [] };
  const usage = usageOf({ ok: true, value: { billing: denied, checkpoints: listing } }, ['s:train:0'], () => QWEN, NOW);
  assert.equal(usage.billed.usd, null);
  assert.match(usage.billed.note, /^No billed figure: TINKER_API_KEY lacks the billing-view role .*403.*The estimate \(spent_usd\) stands\.$/);
  assert.deepEqual(usage.storage, { checkpoints: 1, size_bytes: 1e9, monthly_cost_usd: 0.1, gigabyte_hours: 730, accrued_usd: 0.1 });
  const down = usageOf({ ok: false, error: { kind: 'unavailable', status: null, message: 'no answer within 30 s' } }, ['s:train:0'], () => QWEN, NOW);
  assert.match(down.billed.note, /Tinker did not answer \(no answer within 30 s\)/);
  assert.match(down.storage_error!, /Tinker did not answer/);
});

test('when a run\'s usage is asked again: never asked, asked before the run last ended, or older than the refresh', () => {
  // Only the settings are read by the rule; nothing is asked.
  const usage = new RunUsage({ settings: { cost: { billingRefreshSeconds: 300 } } } as never, undefined as never, undefined as never);
  const at = (minutesAgo: number) => new Date(NOW - minutesAgo * 60_000).toISOString();
  const run = (checkedMinutesAgo: number | null, endedMinutesAgo: number | null, ids = ['s:train:0']) =>
    ({ ended_at: endedMinutesAgo === null ? null : at(endedMinutesAgo), ...(checkedMinutesAgo === null ? {} : { tinker: { checked_at: at(checkedMinutesAgo), training_run_ids: ids } }) }) as unknown as RunRecord;
  const rows: [string, RunRecord, boolean][] = [
    ['never asked', run(null, null), true],
    ['asked a minute ago, running', run(1, null), false],
    ['asked 6 minutes ago, running', run(6, null), true],
    ['asked a minute ago, no checkpoint then (30 s)', run(1, null, []), true],
    ['asked 2 minutes ago, ended a minute ago: its last checkpoints came after', run(2, 1), true],
    ['asked a minute ago, ended 2 minutes ago', run(1, 2), false],
  ];
  for (const [name, record, due] of rows) assert.equal(usage.due(record, NOW), due, name);
});
