/**
 * The dashboard's curves as tables: where each curve comes from, how points are thinned to the
 * snapshot's budget, the trainer log's per-step series, and the log followed as it grows.
 */
import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { chartSeries, MAX_POINTS_PER_SERIES, pickSeries, pointsPerSeries, roundValue, SNAPSHOT_POINT_BUDGET } from '../../src/runtime/wiring/dashboardSeries.js';
import { MAX_DASHBOARD_RUNS } from '../../src/runtime/wiring/dashboard.js';
import { TrainerLogFollower, TrainerLogScanner } from '../../src/runtime/runs/atropos/trainerLog.js';
import { KEY_METRICS } from '../../src/runtime/wandb/keyMetrics.js';
import { tempDir } from '../helpers/tmp.js';

const points = (n: number, value = (i: number) => i / n) => Array.from({ length: n }, (_, i) => ({ step: i + 1, value: value(i) }));

test('points per curve: 200 for one or two runs, the budget shared beyond', () => {
  const table: [number, number][] = [
    [1, 200],
    [2, 200],
    [3, 133],
    [4, 100],
  ];
  for (const [runs, expected] of table) assert.equal(pointsPerSeries(runs), expected, `${runs} runs`);
  for (let runs = 1; runs <= MAX_DASHBOARD_RUNS; runs++) assert.ok(pointsPerSeries(runs) * runs * KEY_METRICS.length <= Math.max(SNAPSHOT_POINT_BUDGET, KEY_METRICS.length * MAX_POINTS_PER_SERIES));
});

test('a curve: sorted by step, non-finite values counted apart, thinned keeping the first and the last point', () => {
  assert.equal(chartSeries([], 'wandb', 10), undefined, 'nothing logged: no curve');
  assert.deepEqual(chartSeries([{ step: 3, value: 0.5 }, { step: 1, value: 0.25 }, { step: 2, value: 'NaN' }, { step: 4, value: null }], 'wandb', 10), {
    source: 'wandb',
    points: [
      [1, 0.25],
      [3, 0.5],
    ],
    non_finite: 1,
  });
  assert.deepEqual(chartSeries([{ step: 1, value: Infinity }], 'trainer_log', 10), { source: 'trainer_log', points: [], non_finite: 1 }, 'only non-finite values: said, not hidden');
  const thinned = chartSeries(points(500), 'wandb', 100)!;
  assert.equal(thinned.points.length, 100);
  assert.equal(thinned.thinned_from, 500);
  assert.deepEqual([thinned.points[0]![0], thinned.points.at(-1)![0]], [1, 500]);
  assert.equal(roundValue(0.123456789), 0.12346);
  assert.equal(roundValue(123456.7), 123460);
});

test('each metric from W&B when it holds points, else the trainer log (reward and loss only)', () => {
  const log = { reward: [[0, 0.1] as [number, number], [1, 0.2] as [number, number]], loss: [[0, 2] as [number, number]] };
  const wandbReward = points(3);
  const table: { name: string; wandb: Parameters<typeof pickSeries>[0]; trainer: Parameters<typeof pickSeries>[1]; sources: Record<string, string> }[] = [
    { name: 'W&B off', wandb: undefined, trainer: log, sources: { reward_mean: 'trainer_log', loss: 'trainer_log' } },
    { name: 'W&B has the reward only', wandb: { reward_mean: wandbReward }, trainer: log, sources: { reward_mean: 'wandb', loss: 'trainer_log' } },
    { name: 'W&B answered an empty history', wandb: { reward_mean: [] }, trainer: log, sources: { reward_mean: 'trainer_log', loss: 'trainer_log' } },
    { name: 'W&B has accuracy', wandb: { percent_correct: wandbReward, eval_percent_correct: wandbReward }, trainer: undefined, sources: { percent_correct: 'wandb', eval_percent_correct: 'wandb' } },
    { name: 'nothing yet', wandb: {}, trainer: { reward: [], loss: [] }, sources: {} },
  ];
  for (const { name, wandb, trainer, sources } of table) {
    const picked = pickSeries(wandb, trainer, 200);
    assert.deepEqual(Object.fromEntries(Object.entries(picked).map(([k, v]) => [k, v.source])), sources, name);
  }
});

test('four runs with long histories stay far under 10k tokens', () => {
  const cap = pointsPerSeries(MAX_DASHBOARD_RUNS);
  const run = Object.fromEntries(KEY_METRICS.map((m) => [m, chartSeries(points(2500, (i) => Math.sin(i) * 1.2345678), 'wandb', cap)]));
  const bytes = JSON.stringify(Array.from({ length: MAX_DASHBOARD_RUNS }, () => run)).length;
  assert.ok(bytes < 30_000, `${bytes} bytes of curves`);
});

test('the trainer log: a value belongs to the step it is printed in; nothing before the first step', () => {
  const scanner = new TrainerLogScanner({ series: true });
  scanner.feed(['Reward/mean: 9', 'Step 0/3', 'Loss: 2.5', 'Reward/mean: 0.2500', '', 'Step 0 complete - Loss: 2.5', 'Step 1/3', 'Loss: nan', 'Reward/mean: 0.5', 'Step 1 complete - Loss: nan', 'Step 2/3', 'Loss: 1.5'].join('\n'));
  const summary = scanner.end();
  assert.deepEqual(summary.series?.reward, [
    [0, 0.25],
    [1, 0.5],
  ]);
  assert.deepEqual(summary.series?.loss.map(([s]) => s), [0, 1, 2]);
  assert.ok(Number.isNaN(summary.series?.loss[1]![1]));
  assert.equal(new TrainerLogScanner().end().series, undefined, 'kept only when asked');
});

test('a followed trainer log is read as it grows, a line split across writes counted once', async () => {
  const path = join(tempDir(), 'trainer.log');
  const follower = new TrainerLogFollower(path);
  assert.deepEqual((await follower.read()).series, { reward: [], loss: [] }, 'no log yet');
  writeFileSync(path, 'Step 0/2\nReward/mean: 0.1\nStep 0 complete\nStep 1/2\nReward/me');
  assert.deepEqual((await follower.read()).series?.reward, [[0, 0.1]]);
  appendFileSync(path, 'an: 0.3\nStep 1 complete\nInitial sampling client created: tinker://x/sampler_weights/step_1\n');
  const summary = await follower.read();
  assert.deepEqual(summary.series?.reward, [
    [0, 0.1],
    [1, 0.3],
  ]);
  assert.equal(summary.steps_completed, 2);
  assert.equal(summary.latest, 'tinker://x/sampler_weights/step_1');

  // Two views polling at once share the follower: their reads must not skip what the other read.
  appendFileSync(path, 'Step 2/4\nReward/mean: 0.5\nStep 2 complete\n'.repeat(2000));
  const [first, second] = await Promise.all([follower.read(), follower.read()]);
  assert.equal(first, second);
  assert.equal(second.series?.reward.length, 2 + 2000);
});
