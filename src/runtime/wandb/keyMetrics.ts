/**
 * The key metrics runs are compared by (rl_compare_runs): per metric, the final value (the W&B
 * summary, i.e. the last one logged), the best value the run reached and a text sparkline. Which
 * way is better is decided here, once: a loss is better lower, rewards and accuracies higher.
 */
import type { Point } from './history.js';
import type { StatusMetrics } from './metrics.js';
import { sparkline } from './sparkline.js';
import type { MetricNumber } from './tolerantJson.js';

export const KEY_METRICS = ['reward_mean', 'loss', 'percent_correct', 'eval_percent_correct'] as const;
export type KeyMetric = (typeof KEY_METRICS)[number];
export type Direction = 'higher' | 'lower';

export const DIRECTIONS: Record<KeyMetric, Direction> = { reward_mean: 'higher', loss: 'lower', percent_correct: 'higher', eval_percent_correct: 'higher' };

export interface MetricSummary {
  /** The summary value; non-finite as "NaN" / "Infinity" / "-Infinity", null when W&B has none. */
  final: MetricNumber;
  /** The best finite value of the sampled history and the final one; null when none is finite. */
  best: number | null;
  sparkline?: string;
}

export function isBetter(a: number, b: number, direction: Direction): boolean {
  return direction === 'higher' ? a > b : a < b;
}

export function finiteNumber(value: MetricNumber): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function summarize(metric: KeyMetric, final: MetricNumber, points: readonly Point[]): MetricSummary {
  // The final value counts too: the sampled history may leave out the last step.
  const finite = [...points.map((p) => p.value), final].map(finiteNumber).filter((v): v is number => v !== undefined);
  const best = finite.reduce<number | null>((found, v) => (found === null || isBetter(v, found, DIRECTIONS[metric]) ? v : found), null);
  return { final, best, ...(points.length > 0 ? { sparkline: sparkline(points.map((p) => p.value)) } : {}) };
}

/** Every key metric W&B holds a summary value or a history for; the others are left out. */
export function keyMetricSummaries(finals: StatusMetrics, points: Readonly<Record<string, Point[]>>): Partial<Record<KeyMetric, MetricSummary>> {
  const out: Partial<Record<KeyMetric, MetricSummary>> = {};
  for (const metric of KEY_METRICS) {
    const series = points[metric] ?? [];
    if (finals[metric] !== null || series.length > 0) out[metric] = summarize(metric, finals[metric], series);
  }
  return out;
}
