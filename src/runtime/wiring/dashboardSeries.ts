/**
 * The dashboard's curves, as pure decisions: which source each metric's curve comes from (W&B
 * when it holds points, else the trainer log, which prints reward and loss only), how many points
 * a snapshot may carry (a budget shared by every run and metric, so a comparison stays as small
 * as one run), and numbers cut to what a chart can show.
 */
import { evenlySpaced, type Point } from '../wandb/history.js';
import { KEY_METRICS, type KeyMetric } from '../wandb/keyMetrics.js';
import type { TrainingSummary } from '../runs/seams/framework.js';

export type SeriesSource = 'wandb' | 'trainer_log';

export interface ChartSeries {
  source: SeriesSource;
  /** `[step, value]`, finite values only, in step order. */
  points: [number, number][];
  /** Points the source held before they were thinned to the budget (only when thinned). */
  thinned_from?: number;
  /** Values that were not numbers (NaN, Infinity): left out of `points`, counted here. */
  non_finite?: number;
}

export type RunSeries = Partial<Record<KeyMetric, ChartSeries>>;

/** One curve never needs more points than a chart is wide. */
export const MAX_POINTS_PER_SERIES = 200;
/** All the points of one snapshot: with four runs and four metrics, 100 per curve. */
export const SNAPSHOT_POINT_BUDGET = 1600;
const MIN_POINTS_PER_SERIES = 20;

/** Points each curve may carry when `runs` runs are shown. */
export function pointsPerSeries(runs: number): number {
  const share = Math.floor(SNAPSHOT_POINT_BUDGET / (Math.max(1, runs) * KEY_METRICS.length));
  return Math.max(MIN_POINTS_PER_SERIES, Math.min(MAX_POINTS_PER_SERIES, share));
}

/** Five significant digits: more than a chart or its table can show, and a third of the bytes. */
export function roundValue(value: number): number {
  return Number(value.toPrecision(5));
}

/** One curve from `points` (any order, non-finite values counted apart), thinned to `cap`. */
export function chartSeries(points: readonly { step: number; value: unknown }[], source: SeriesSource, cap: number): ChartSeries | undefined {
  const finite: [number, number][] = [];
  let nonFinite = 0;
  for (const { step, value } of points) {
    if (typeof value === 'number' && Number.isFinite(value)) finite.push([step, roundValue(value)]);
    else if (value !== null && value !== undefined) nonFinite += 1;
  }
  if (finite.length === 0 && nonFinite === 0) return undefined;
  finite.sort((a, b) => a[0] - b[0]);
  const kept = evenlySpaced(finite, cap);
  return {
    source,
    points: kept,
    ...(kept.length < finite.length ? { thinned_from: finite.length } : {}),
    ...(nonFinite > 0 ? { non_finite: nonFinite } : {}),
  };
}

const TRAINER_LOG_METRICS: Partial<Record<KeyMetric, 'reward' | 'loss'>> = { reward_mean: 'reward', loss: 'loss' };

/** Per metric, W&B's points when it has any, else the trainer log's; metrics with neither are absent. */
export function pickSeries(wandb: Partial<Record<KeyMetric, Point[]>> | undefined, trainer: TrainingSummary['series'], cap: number): RunSeries {
  const out: RunSeries = {};
  for (const metric of KEY_METRICS) {
    const fromWandb = wandb?.[metric];
    const logKey = TRAINER_LOG_METRICS[metric];
    const fromLog = logKey !== undefined ? trainer?.[logKey] : undefined;
    const series =
      fromWandb !== undefined && fromWandb.length > 0
        ? chartSeries(fromWandb, 'wandb', cap)
        : fromLog !== undefined && fromLog.length > 0
          ? chartSeries(fromLog.map(([step, value]) => ({ step, value })), 'trainer_log', cap)
          : undefined;
    if (series !== undefined) out[metric] = series;
  }
  return out;
}
