/**
 * The spend ledger's pure parts as tables: what a window totals (cumulative figures per id, the
 * highest counting, spend leaving the window), the campaign budget's decisions, RL_BUDGET_WINDOW,
 * dollar amounts in messages, and one formula for a run's spend and its estimate.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { windowTotals, parseEntry, type LedgerEntry } from '../../src/runtime/ledger/entries.js';
import { capReached, jobRefusal } from '../../src/runtime/ledger/budget.js';
import { money, moneys } from '../../src/runtime/cost/money.js';
import { costSettings } from '../../src/runtime/cost/priceConfig.js';
import { atroposBounds, estimateRun, type LengthBounds, type LengthsInfo, type RunShape } from '../../src/runtime/cost/estimate.js';
import { planOf, spendOf } from '../../src/runtime/cost/spend.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpendLedger } from '../../src/runtime/ledger/ledger.js';
import { SamplingMeter } from '../../src/runtime/ledger/meter.js';
import { meterUnseen } from '../../src/runtime/evaluation/unmetered.js';

const T0 = Date.parse('2026-11-20T00:00:00Z');
const at = (s: number): string => new Date(T0 + s * 1000).toISOString();
const e = (kind: LedgerEntry['kind'], id: string, s: number, usd: number, basis: LedgerEntry['basis'] = 'estimate'): LedgerEntry => ({ kind, id, model: 'M', at: at(s), usd, tokens: { prefill: 0, sample: 0, train: 0 }, basis });

test('a window totals each id by its highest figure, less what it had before the window began', () => {
  const entries = [e('run', 'r1', 0, 0.1), e('run', 'r1', 10, 0.3), e('run', 'r1', 20, 0.25, 'billed'), e('evaluation', 'e1', 15, 0.05), e('inference_test', 't1', 30, 0.02), e('run', 'r2', 100, 1)];
  const cases: Array<[string, number | undefined, number, number, Record<string, number>]> = [
    // name, window seconds, now (s), total, by kind
    ['all, at 40 s', undefined, 40, 0.37, { run: 0.3, evaluation: 0.05, inference_test: 0.02 }],
    ['the last 35 s at 40 s: r1 had 0.1 before', 35, 40, 0.27, { run: 0.2, evaluation: 0.05, inference_test: 0.02 }],
    ['the last 5 s at 40 s: nothing moved', 5, 40, 0, { run: 0, evaluation: 0, inference_test: 0 }],
    ['future entries do not count yet', undefined, 12, 0.3, { run: 0.3, evaluation: 0, inference_test: 0 }],
    ['r2 only in the last 10 s at 105 s', 10, 105, 1, { run: 1, evaluation: 0, inference_test: 0 }],
  ];
  for (const [name, seconds, now, total, byKind] of cases) {
    const t = windowTotals(entries, seconds === undefined ? {} : { seconds }, T0 + now * 1000);
    assert.ok(Math.abs(t.total_usd - total) < 1e-9, `${name}: ${t.total_usd}`);
    for (const [k, v] of Object.entries(byKind)) assert.ok(Math.abs(t.by_kind[k as LedgerEntry['kind']] - v) < 1e-9, `${name}: ${k} ${t.by_kind[k as LedgerEntry['kind']]}`);
  }
  // The same figure written by two writers counts once; a lower one written late lowers nothing.
  assert.equal(windowTotals([e('run', 'a', 0, 0.5), e('run', 'a', 1, 0.5), e('run', 'a', 2, 0.4)], {}, T0 + 5000).total_usd, 0.5);
  assert.equal(parseEntry('{"kind":"run","id":"x","at":"2026'), undefined, 'a line cut by a crash is skipped');
  assert.equal(parseEntry('{"kind":"bogus","id":"x","at":"2026-01-01T00:00:00Z","usd":1}'), undefined);
});

test('the campaign budget: a paid action that does not fit what is left is refused naming what was spent by what; the cap reached stops everything', () => {
  const totals = windowTotals([e('run', 'r1', 0, 0.6), e('evaluation', 'e1', 1, 0.0692)], {}, T0 + 10_000);
  const cases: Array<[string, number | undefined, number | undefined, RegExp | undefined]> = [
    ['no cap', 5, undefined, undefined],
    ['fits', 0.3, 1, undefined],
    ['exactly what is left', 0.3308, 1, undefined],
    ['over what is left', 0.4, 1, /^Refused: an evaluation: RL_MAX_TOTAL_COST_USD=\$1 leaves \$0\.3308 \(\$0\.6692 spent in all of RL_HOME: runs \$0\.6 \(r1 \$0\.6\), evaluations \$0\.0692 \(e1 \$0\.0692\)\); its high estimate \$0\.4 does not fit/],
    ['no estimate, something left', undefined, 1, undefined],
    ['no estimate, nothing left', undefined, 0.5, /leaves \$0 .*nothing is left/],
  ];
  for (const [name, high, cap, refused] of cases) {
    const r = jobRefusal('an evaluation', high, cap, totals, {});
    if (refused === undefined) assert.equal(r, undefined, name);
    else assert.match(r ?? '', refused, name);
  }
  assert.equal(capReached(totals, 0.67, {}), undefined);
  assert.match(capReached(totals, 0.6692, { seconds: 86_400 })!, /^budget reached: \$0\.6692 spent in the last 1d: .* reached RL_MAX_TOTAL_COST_USD=\$0\.6692, so every active paid action stops/);
  // A run's next step that would pass the cap stops it before that step.
  assert.match(capReached(totals, 0.7, {}, 0.04)!, /which and one more step of this run \(\$0\.04\) would pass RL_MAX_TOTAL_COST_USD=\$0\.7,/);
  assert.equal(capReached(totals, 0.7, {}, 0.03), undefined);
});

test('dollar amounts: exact when short, four significant digits under $1, and different amounts never read the same', () => {
  const cases: Array<[number, string]> = [[1, '$1'], [0.6, '$0.6'], [0.0692, '$0.0692'], [0.06555, '$0.06555'], [0.069234567, '$0.06923'], [12.3456, '$12.3456'], [12.345678, '$12.35'], [0, '$0']];
  for (const [x, shown] of cases) assert.equal(money(x), shown, String(x));
  // The example: $0.0692 against $0.06555 was "$0.07 reached $0.07".
  assert.deepEqual(moneys(0.0692, 0.06555), ['$0.0692', '$0.06555']);
  assert.deepEqual(moneys(0.0692341, 0.0692349), ['$0.069234', '$0.069235']);
  assert.deepEqual(moneys(12.345678, 12.346), ['$12.35', '$12.346']);
});

test('RL_BUDGET_WINDOW: all by default, lengths in s, m, h, d; anything else stops the server', () => {
  const windowOf = (raw: string | undefined): number | undefined => costSettings((k) => (k === 'RL_BUDGET_WINDOW' ? raw : undefined), undefined, undefined).budgetWindowSeconds;
  const cases: Array<[string | undefined, number | undefined]> = [[undefined, undefined], ['all', undefined], ['24h', 86_400], ['7d', 604_800], ['30m', 1800], ['90s', 90]];
  for (const [raw, seconds] of cases) assert.equal(windowOf(raw), seconds, String(raw));
  for (const bad of ['week', '0h', '-1d', '24']) assert.throws(() => windowOf(bad), /RL_BUDGET_WINDOW=.* is not a window/);
});

test('one formula: at the lengths the high estimate assumed, a run spends at most its high estimate, both frameworks, several group sizes', () => {
  const price = { prefill: 0.2, sample: 0.6, train: 0.45, as_of: '2026-11-20', source: 'test' };
  const measured: LengthsInfo = { lengths: { source: 'tokens/masks' as const, rollouts: 8, prompt_tokens: { mean: 300, max: 400 }, completion_tokens: { mean: 200, p25: 100, max: 500 } }, test_id: 't', measured_at: at(0), models: 'M' };
  for (const group of [1, 4, 16]) {
    const shape: RunShape = { model: 'M', total_steps: 10, batch_size: 8 * group, group_size: group, max_token_length: 1000 };
    const cookbook: LengthBounds = { prefillsPerGroup: group, unmeasuredPrompt: { tokens: 1024, basis: 'b' } };
    for (const [framework, bounds] of [['atropos', atroposBounds(shape)], ['cookbook', cookbook]] as const) {
      const estimate = estimateRun(shape, price, measured, [], bounds);
      const high = estimate.total_usd.high!;
      const L = estimate.lengths!.high!;
      const plan = planOf(estimate, undefined, price, L);
      const sequences = shape.total_steps * shape.batch_size;
      // Atropos trains sequences of at most max_token_length (atroposlib drops longer ones): the longest prompt, the rest completion.
      const completion = framework === 'atropos' ? L.trained - L.prompt : L.completion;
      // What each framework's record says after every step at those lengths: Atropos the batches the trainer took, the cookbook its logged tokens.
      const done =
        framework === 'atropos'
          ? { steps: shape.total_steps, batches: { batches: shape.total_steps, sequences, prompt_tokens: sequences * L.prompt, completion_tokens: sequences * completion } }
          : { steps: shape.total_steps, logged: { rows: shape.total_steps, prompt_tokens: sequences * L.prompt, completion_tokens: sequences * completion } };
      const spent = spendOf(plan, done)!.spent_usd;
      assert.ok(spent <= high.usd + 1e-4, `${framework}, group_size ${group}: spent $${spent} over the high estimate $${high.usd}`);
      if (framework === 'cookbook') assert.ok(spent >= high.usd - 1e-3, `${framework}, group_size ${group}: at those lengths spend is the high estimate ($${spent} vs $${high.usd})`);
    }
  }
});

test('an evaluation sampling past the recording proxy counts from its records: its wire file, else its usage totals; a model the proxy metered is not counted again', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rlmcp-unmetered-'));
  try {
    const ledger = new SpendLedger(dir);
    const price = { prefill: 1, sample: 2, train: 0, as_of: '2026-11-20', source: 'test' };
    const meter = new SamplingMeter(ledger, { kind: 'evaluation', id: 'e1', model: 'B' }, (m) => (m === 'B' || m.startsWith('tinker://') ? price : undefined));
    const line = (seq: number, prompt: number, completion: number, status = 200): string => JSON.stringify({ seq, at: at(seq), path: '/api/v1/asample', status, stream: false, model: 'tinker://r/sampler_weights/step_3', n: 1, prompt: 'p', choices: ['c'], usage: { prompt_tokens: prompt, completion_tokens: completion } });
    // 1-base: metered by the proxy as it sampled (100 + 2 x 50 = $0.0002); its wire file is the proxy's own.
    meter.add('B', { prompt_tokens: 100, completion_tokens: 50 }, '1-base');
    writeFileSync(join(dir, '1-base.wire.jsonl'), `${line(0, 100, 50)}\n`);
    // 2-step_3: a sampler of its own wrote a line per request (a failed one counts nothing): 2 x 1000 + 2 x 2 x 400 = $0.0036.
    writeFileSync(join(dir, '2-step_3.wire.jsonl'), `${line(0, 1000, 400)}\n${line(1, 1000, 400)}\n${line(2, 1000, 400, 500)}\n`);
    // 3-step_5: no wire file, only the totals its result carries: 3000 + 2 x 1000 = $0.005.
    const cases: Array<[string, { prompt_tokens: number; completion_tokens: number } | undefined, number]> = [
      ['metered by the proxy: not again', { prompt_tokens: 100, completion_tokens: 50 }, 0.0002],
      ['its wire file', { prompt_tokens: 1, completion_tokens: 1 }, 0.0038],
      ['its usage totals', { prompt_tokens: 3000, completion_tokens: 1000 }, 0.0088],
      ['nothing recorded', undefined, 0.0088],
    ];
    const specs = ['1-base', '2-step_3', '3-step_5', '4-step_7'];
    for (const [i, [name, usage, total]] of cases.entries()) {
      await meterUnseen(meter, dir, { model: 'tinker://r/sampler_weights/step_3', stem: specs[i]! }, usage);
      assert.ok(Math.abs(ledger.totals({}).total_usd - total) < 1e-12, `${name}: ${ledger.totals({}).total_usd}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
