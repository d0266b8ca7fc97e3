/**
 * Cost estimates as pure functions, checked against hand calculations: rollout lengths counted
 * from `process` groups, the low / expected / high figures of a run, spend so far, the budgets, the
 * price table from RL_MCP_CONFIG, the doctor's look at it, and the question before a costly start.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { confirmationQuestion, startConfirmation } from '../../src/runtime/wiring/costs.js';
import type { ModelPrice, Settings } from '../../src/core/settings.js';
import { budgetReached, budgetRefusal, totalBudgetReached } from '../../src/runtime/cost/budget.js';
import { DEFAULT_PRICES } from '../../src/runtime/cost/defaultPrices.js';
import { estimateRun, type LengthsInfo, type RunShape } from '../../src/runtime/cost/estimate.js';
import { LengthCounter } from '../../src/runtime/cost/lengths.js';
import { priceTable } from '../../src/runtime/cost/priceConfig.js';
import { planOf, spendOf } from '../../src/runtime/cost/spend.js';
import { holdSpend, listedCost, runCost, runLedgerEntry } from '../../src/runtime/runs/watching/runCost.js';
import type { RunRecord } from '../../src/runtime/runs/seams/record.js';
import { loadSettings } from '../../src/runtime/config/settings.js';
import { priceTableOutcome } from '../../src/runtime/setup/costRequirements.js';
import { TrainerLogScanner } from '../../src/runtime/runs/atropos/trainerLog.js';
import { tempDir, testEnv } from '../helpers/tmp.js';

const PRICE: ModelPrice = { prefill: 0.2, sample: 0.5, train: 0.4, as_of: '2026-11-01', source: 'test table' };
const SHAPE: RunShape = { model: 'M', total_steps: 10, batch_size: 32, group_size: 8, max_token_length: 1000 };

/** One group of 4 rollouts: prompts of 100 tokens (mask -100), completions of 40, 60, 80 and 100 tokens. */
function knownGroup(): unknown {
  const completions = [40, 60, 80, 100];
  return {
    tokens: completions.map((c) => Array.from({ length: 100 + c }, (_, i) => i)),
    masks: completions.map((c) => [...Array<number>(100).fill(-100), ...Array.from({ length: c }, (_, i) => i)]),
    scores: [1, 0, 1, 0],
  };
}

function measured(): LengthsInfo {
  const counter = new LengthCounter();
  counter.add(knownGroup());
  return { lengths: counter.result()!, test_id: 'abcd1234', measured_at: '2026-11-20T00:00:00.000Z', models: 'qwen/qwen3-8b' };
}

test('lengths: tokens/masks per rollout, mean, 25th percentile (nearest rank) and max; messages at 4 characters per token', () => {
  assert.deepEqual(measured().lengths, { source: 'tokens/masks', rollouts: 4, prompt_tokens: { mean: 100, max: 100 }, completion_tokens: { mean: 70, p25: 40, max: 100 } });
  const byChars = new LengthCounter();
  byChars.add({ messages: [[{ role: 'user', content: 'x'.repeat(40) }, { role: 'assistant', content: 'y'.repeat(9) }]] });
  assert.deepEqual(byChars.result(), { source: 'chars/4', rollouts: 1, prompt_tokens: { mean: 10, max: 10 }, completion_tokens: { mean: 3, p25: 3, max: 3 } });
  assert.equal(new LengthCounter().result(), undefined);
});

test('estimate: low, expected and high dollars match the hand calculation, each with its basis', () => {
  // Per step: 32 sequences in 4 groups. Expected: prefill 4 x 100 = 400 tokens x $0.2, sample 32 x 70 = 2240 x $0.5,
  // train 32 x 170 = 5440 x $0.4 -> (80 + 1120 + 2176) / 1e6 = $0.003376 a step, x 10 steps = $0.03376.
  // Low (completions at the 25th percentile, 40): (80 + 640 + 1792) / 1e6 = $0.002512 -> $0.02512.
  // High (longest prompt 100, completions and trained sequences at 1000): (80 + 16000 + 12800) / 1e6 = $0.02888 -> $0.2888.
  const e = estimateRun(SHAPE, PRICE, measured());
  assert.equal(e.estimate, true);
  assert.deepEqual(
    Object.fromEntries(Object.entries(e.total_usd).map(([k, f]) => [k, [f.usd, f.per_step_usd]])),
    { low: [0.0251, 0.0025], expected: [0.0338, 0.0034], high: [0.2888, 0.0289] },
  );
  for (const f of Object.values(e.total_usd)) {
    assert.match(f.basis, /^estimate: 10 steps x /);
    assert.match(f.basis, /test table, as of 2026-11-01/);
  }
  assert.match(e.total_usd.expected!.basis, /mean prompt 100 and mean completion 70 tokens, from inference test abcd1234/);
  assert.deepEqual(e.price_source, { source: 'test table', as_of: '2026-11-01' });

  // Without a smoke test: only the bound, every prompt and completion at 1000: (800 + 16000 + 12800) / 1e6 = $0.0296 -> $0.296.
  const bound = estimateRun(SHAPE, PRICE, undefined);
  assert.deepEqual(Object.keys(bound.total_usd), ['high']);
  assert.equal(bound.total_usd.high!.usd, 0.296);
  assert.match(bound.unknown[0]!, /no inference test measured this environment.*only the high bound/);
  // Without a price: no dollars, and the fix.
  const unpriced = estimateRun(SHAPE, undefined, measured());
  assert.deepEqual(unpriced.total_usd, {});
  assert.match(unpriced.unknown[0]!, /no entry for M; add it under prices in the RL_MCP_CONFIG file/);
});

test('spend so far: steps x per step, refined by the sequences trained and by the batches the trainer took', () => {
  const plan = planOf(estimateRun(SHAPE, PRICE, measured()), 1, PRICE, { prompt: 100, completion: 70, trained: 170 });
  // 3 steps at $0.003376; the 7 left, and the next one a budget looks ahead to, at the same rate.
  assert.deepEqual(({ ...spendOf(plan, { steps: 3 })!, basis: undefined }), { spent_usd: 0.0101, remaining_usd: 0.0236, step_usd: 0.003376, basis: undefined });
  // 64 sequences trained instead of 96: 3 x (80 + 1120) / 1e6 + 64 x 170 x 0.4 / 1e6 = 0.0036 + 0.004352.
  const trained = spendOf(plan, { steps: 3, sequences: 64 })!;
  assert.equal(trained.spent_usd, 0.008);
  assert.match(trained.basis, /64 sequences trained \(trainer log\)/);
  // Batches seen with 50-token prompts and 200-token completions: (4 x 50 x 0.2 + 32 x 200 x 0.5 + 32 x 250 x 0.4) / 1e6 = $0.00644 a step.
  const seen = spendOf(plan, { steps: 3, batches: { batches: 2, sequences: 64, prompt_tokens: 3200, completion_tokens: 12800 } })!;
  assert.equal(seen.spent_usd, 0.0193);
  assert.ok(Math.abs(seen.step_usd - 0.00644) < 1e-12);
  assert.match(seen.basis, /^estimate: 3 steps done \(trainer log\) x \$0\.0064\/step from mean lengths of 2 batches the trainer took/);
  assert.equal(spendOf(planOf(estimateRun(SHAPE, undefined, measured()), undefined, undefined, undefined), { steps: 3 }), undefined);
});

test("a run's spend never goes down: a later estimate from a lower mean over more batches is held at the most it was counted at, in status, listing, budget and ledger", () => {
  const plan = planOf(estimateRun(SHAPE, PRICE, measured()), 1, PRICE, { prompt: 100, completion: 70, trained: 170 });
  const batch = (n: number, completion: number) => ({ batches: n, sequences: 32 * n, prompt_tokens: 32 * n * 100, completion_tokens: 32 * n * completion });
  const record = { run_id: 'r1', cost: plan, observed: { observed_at: '2026-11-28T00:00:00Z', steps_completed: 3, batch_tokens: batch(1, 200) } } as unknown as RunRecord;
  holdSpend(record);
  const high = runCost(record)!.spent_usd!;
  // A second batch with shorter completions lowers the mean, so 3 steps x the new mean come out lower.
  record.observed!.batch_tokens = { batches: 2, sequences: 64, prompt_tokens: 6400, completion_tokens: 32 * 200 + 32 * 40 };
  assert.ok(spendOf(plan, { steps: 3, batches: record.observed!.batch_tokens })!.spent_usd < high, 'the estimate alone goes down');
  assert.equal(runCost(record)!.spent_usd, high);
  assert.match(runCost(record)!.basis, /held at \$[\d.]+, the most it was counted at/);
  assert.equal(listedCost(record)!.spent_usd, high);
  assert.equal(runLedgerEntry(record)!.usd, high);
  holdSpend(record);
  assert.equal(record.spent_high_usd, high);
  // A step more counts again from the estimate once it passes the figure held.
  record.observed!.steps_completed = 5;
  holdSpend(record);
  assert.ok(record.spent_high_usd! > high && runCost(record)!.spent_usd === record.spent_high_usd);
});

test('budgets: a start over the run budget or over what the total budget leaves is refused with the figures; spend at the budget stops a run', () => {
  const e = estimateRun(SHAPE, PRICE, measured());
  assert.equal(budgetRefusal(e, {}, []), undefined);
  assert.equal(budgetRefusal(e, { maxRunUsd: 0.04 }, []), undefined);
  const overRun = budgetRefusal(e, { maxRunUsd: 0.03 }, [])!;
  // $0.0338 against $0.03: shown as they are, never both as "$0.03".
  assert.match(overRun.message, /expected cost estimate is \$0\.0338, over RL_MAX_RUN_COST_USD=\$0\.03\./);
  assert.equal(overRun.hints.estimate_usd, 0.0338);
  const overTotal = budgetRefusal(e, { maxTotalUsd: 0.05 }, [{ run_id: 'aaaa0000', usd: 0.02 }])!;
  assert.match(overTotal.message, /RL_MAX_TOTAL_COST_USD=\$0\.05 leaves \$0\.03 after the 1 active runs/);
  assert.equal(overTotal.hints.left_usd, 0.03);
  assert.equal(budgetRefusal(e, { maxTotalUsd: 0.06 }, [{ run_id: 'aaaa0000', usd: 0.02 }]), undefined);
  assert.match(budgetRefusal(estimateRun(SHAPE, undefined, undefined), { maxRunUsd: 100 }, [])!.message, /^Cannot check the budget: price/);
  assert.match(budgetReached(0.5, 0.5)!, /^budget reached: estimated spend \$0\.5 reached RL_MAX_RUN_COST_USD=\$0\.5/);
  assert.equal(budgetReached(0.49, 0.5), undefined);
  assert.equal(budgetReached(5, undefined), undefined);
  // The total: this run's spend and the other active runs' together.
  assert.match(totalBudgetReached(0.3, 0.2, 0.5)!, /^budget reached: estimated spend of the active runs \$0\.5 \(this run \$0\.3\) reached RL_MAX_TOTAL_COST_USD=\$0\.5, so every active run stops/);
  assert.equal(totalBudgetReached(0.3, 0.19, 0.5), undefined);
  assert.equal(totalBudgetReached(50, 50, undefined), undefined);
  // One more step that would pass a budget stops the run before it: it never ends above the budget.
  assert.match(budgetReached(0.2886, 0.35, undefined, 0.1443)!, /^budget reached: estimated spend \$0\.2886 and one more step \(\$0\.1443\) would pass RL_MAX_RUN_COST_USD=\$0\.35, so the run stops before it/);
  assert.equal(budgetReached(0.2, 0.35, undefined, 0.15), undefined, 'a step that lands exactly on the budget is taken');
  assert.match(totalBudgetReached(0.3, 0.2, 0.6, undefined, 0.11)!, /the active runs \$0\.5 \(this run \$0\.3\) and one more step of this run \(\$0\.11\) would pass RL_MAX_TOTAL_COST_USD=\$0\.6/);
  assert.equal(totalBudgetReached(0.3, 0.2, 0.6, undefined, 0.1), undefined);
});

test('price table: shipped figures with date and source; RL_MCP_CONFIG entries replace or extend by model id; bad ones stop the server', () => {
  const shipped = DEFAULT_PRICES['Qwen/Qwen3-8B']!;
  assert.match(shipped.as_of, /^\d{4}-\d{2}-\d{2}$/);
  assert.match(shipped.source, /^https:\/\/tinker-docs\.thinkingmachines\.ai\//);
  const merged = priceTable({ 'Qwen/Qwen3-8B': { prefill: 1, sample: 2, train: 3, as_of: '2026-11-20' }, 'meta/X': { prefill: 0.1, sample: 0.2, train: 0.3, as_of: '2026-11-21', source: 'console' } }, 'rl.yaml');
  assert.deepEqual(merged['Qwen/Qwen3-8B'], { prefill: 1, sample: 2, train: 3, as_of: '2026-11-20', source: 'RL_MCP_CONFIG rl.yaml' });
  assert.equal(merged['meta/X']!.source, 'console');
  assert.deepEqual(priceTable(undefined, undefined), DEFAULT_PRICES);
  for (const [bad, message] of [
    [[1], /'prices' must be a mapping/],
    [{ M: { prefill: 1, sample: 2, train: 3 } }, /prices\.M\.as_of must be the date/],
    [{ M: { prefill: -1, sample: 2, train: 3, as_of: '2026-11-01' } }, /prices\.M\.prefill must be dollars per million tokens/],
    [{ M: { prefill: 1, sample: 2, train: 3, as_of: '2026-11-01', cached: 1 } }, /unknown key cached/],
  ] as const) {
    assert.throws(() => priceTable(bad, 'rl.yaml'), message);
  }
  const dir = tempDir();
  const file = join(dir, 'rl.yaml');
  writeFileSync(file, stringify({ prices: { 'Qwen/Qwen3-8B': { prefill: 1, sample: 2, train: 3, as_of: '2026-11-20' } }, RL_MAX_RUN_COST_USD: 25 }));
  const settings = loadSettings(testEnv({ RL_MCP_CONFIG: file, RL_CONFIRM_ABOVE_USD: '5' }));
  assert.deepEqual([settings.cost.maxRunUsd, settings.cost.maxTotalUsd, settings.cost.confirmAboveUsd, settings.cost.prices['Qwen/Qwen3-8B']!.train], [25, undefined, 5, 3]);
  assert.throws(() => loadSettings(testEnv({ RL_MAX_TOTAL_COST_USD: 'lots' })), /RL_MAX_TOTAL_COST_USD="lots" is not an amount of dollars/);
});

test('doctor: the locked model priced and not older than 90 days, else a warning with the fix', () => {
  const table = { 'Qwen/Qwen3-8B': { ...PRICE, as_of: '2026-10-07' } };
  assert.equal(priceTableOutcome(table, 'Qwen/Qwen3-8B', Date.parse('2026-11-23')).ok, true);
  const old = priceTableOutcome(table, 'Qwen/Qwen3-8B', Date.parse('2027-01-10'));
  assert.equal(old.ok, false);
  assert.match(old.ok ? '' : old.message, /is 95 days old \(as of 2026-10-07, over 90\).*prices in the RL_MCP_CONFIG file/);
  const missing = priceTableOutcome(table, 'meta/Llama', Date.parse('2026-11-23'));
  assert.match(missing.ok ? '' : missing.message, /no entry for the locked model meta\/Llama/);
});

test('the trainer log: sequences trained are counted for completed steps only', () => {
  const scanner = new TrainerLogScanner();
  scanner.feed('Got 5 Datum objects\nStep 0 complete - Loss: 0.1\nGot 3 Datum objects\nStep 1 complete - Loss: 0.1\nGot 7 Datum objects\n');
  assert.equal(scanner.end().sequences_trained, 8);
  assert.equal(new TrainerLogScanner().end().sequences_trained, undefined);
});

test('the question before a costly start: only over RL_CONFIRM_ABOVE_USD, with the figures', () => {
  const e = estimateRun(SHAPE, PRICE, measured());
  const settings = (confirmAboveUsd?: number) => ({ cost: { prices: {}, confirmAboveUsd } }) as unknown as Settings;
  assert.equal(confirmationQuestion(settings(), e, 'gsm8k'), undefined);
  assert.equal(confirmationQuestion(settings(1), e, 'gsm8k'), undefined);
  const question = confirmationQuestion(settings(0.01), e, 'gsm8k')!;
  assert.match(question, /^Start training gsm8k on M\? This is an estimated expected cost of \$0\.0338 .*above RL_CONFIRM_ABOVE_USD=\$0\.01\. Estimated range: \$0\.0251 to \$0\.2888\. These are estimates, not charges\.$/);
});

test('what a start over RL_CONFIRM_ABOVE_USD needs, by threshold and confirm_cost_usd (table)', () => {
  const e = estimateRun(SHAPE, PRICE, measured()); // expected $0.0338
  const settings = (confirmAboveUsd?: number) => ({ cost: { prices: {}, confirmAboveUsd } }) as unknown as Settings;
  const unpriced = { ...e, total_usd: {}, unknown: ['price: none'] };
  const cases: Array<[number | undefined, typeof e, number | undefined, string]> = [
    [undefined, e, undefined, 'none'],
    [1, e, undefined, 'none'],
    [0.01, e, undefined, 'ask'],
    [0.01, e, 0.0338, 'confirmed'],
    [0.01, e, 5, 'confirmed'],
    [0.01, e, 0.0337, 'too_low'],
    [0.01, unpriced, undefined, 'ask'],
    [0.01, unpriced, 0, 'confirmed'],
  ];
  for (const [threshold, estimate, confirmed, kind] of cases) {
    assert.equal(startConfirmation(settings(threshold), estimate, 'gsm8k', confirmed).kind, kind, JSON.stringify([threshold, confirmed]));
  }
});

test('prompt lengths from an offline check (no inference test): the high bound takes the longest rendered prompt, the rest stays unknown', () => {
  const estimate = estimateRun(SHAPE, PRICE, { prompts: { mean: 150, max: 300, count: 5 }, checked_at: '2026-11-27T10:00:00Z', counted_by: 'the environment\'s tokenizer' });
  // Per step: 4 groups x 300 prefill, 32 x 1000 sampled, 32 x 1000 trained: (1200 x 0.2 + 32000 x 0.5 + 32000 x 0.4) / 1e6.
  assert.equal(estimate.total_usd.high?.per_step_usd, 0.029);
  assert.match(estimate.total_usd.high!.basis, /longest prompt 300 tokens of 5 rendered by the offline check/);
  assert.equal(estimate.total_usd.expected, undefined);
  assert.ok(estimate.unknown.some((u) => u.startsWith('rollout lengths: no inference test')));
});
