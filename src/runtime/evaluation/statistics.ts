/**
 * The arithmetic of "did training help": a model's mean score with a 95% interval, the difference
 * to the baseline with a 95% interval, and the verdict read off that interval. Pure functions,
 * tested as tables; the answer names the method each number came from.
 *
 * - Scores that are all 0 or 1 (one completion per item): accuracy with a Wilson score interval,
 *   which stays inside [0, 1] and behaves at 0% and 100%, where the normal one collapses.
 * - Other scores (partial credit, -1/1, per-item means of a group): the mean with a Student t interval.
 * - The difference: a paired t interval on per-item differences when both models saw the same
 *   items (the per-item noise cancels); otherwise Newcombe's hybrid score interval for two
 *   accuracies, or Welch's t interval for two means.
 */

export interface Interval {
  low: number;
  high: number;
}

export type IntervalMethod = 'wilson' | 't';
export type DifferenceMethod = 'paired_t' | 'newcombe' | 'welch_t';
export type Verdict = 'better' | 'no_clear_difference' | 'worse';

export interface ScoreSummary {
  n: number;
  mean: number;
  /** null when there are too few items for an interval (fewer than 2, or none). */
  ci: Interval | null;
  method: IntervalMethod;
}

export interface Difference {
  /** other - baseline */
  diff: number;
  ci: Interval | null;
  method: DifferenceMethod;
  /** Items in the comparison (pairs when paired). */
  n: number;
}

const Z_975 = 1.959964;

/** Two-sided 95% critical values of Student's t by degrees of freedom (1-30), then a few anchors. */
const T_975 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074,
  2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];
const T_975_ANCHORS: readonly [number, number][] = [
  [30, 2.042],
  [40, 2.021],
  [60, 2.0],
  [120, 1.98],
];

/** The 97.5% quantile of t with `df` degrees of freedom (fractional df, from Welch, interpolated). */
export function tCritical(df: number): number {
  if (!(df >= 1)) return Number.POSITIVE_INFINITY;
  if (df <= 30) {
    const lo = Math.floor(df);
    const hi = Math.min(30, lo + 1);
    return T_975[lo - 1]! + (T_975[hi - 1]! - T_975[lo - 1]!) * (df - lo);
  }
  for (let i = 1; i < T_975_ANCHORS.length; i++) {
    const [d1, t1] = T_975_ANCHORS[i - 1]!;
    const [d2, t2] = T_975_ANCHORS[i]!;
    if (df <= d2) return t1 + ((t2 - t1) * (df - d1)) / (d2 - d1);
  }
  // Past 120 df t approaches the normal: interpolate in 1/df towards z.
  return Z_975 + (1.98 - Z_975) * (120 / df);
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

function variance(xs: readonly number[]): number {
  const m = mean(xs);
  return xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1);
}

export const isBinary = (xs: readonly number[]): boolean => xs.every((x) => x === 0 || x === 1);

/** Wilson score interval of a proportion. */
export function wilson(successes: number, n: number, z = Z_975): Interval | null {
  if (n <= 0) return null;
  const p = successes / n;
  const denom = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / denom;
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

function tInterval(xs: readonly number[]): Interval | null {
  if (xs.length < 2) return null;
  const m = mean(xs);
  const half = tCritical(xs.length - 1) * Math.sqrt(variance(xs) / xs.length);
  return { low: m - half, high: m + half };
}

/** A model's mean score over its items, with a 95% interval (Wilson for 0/1 scores, else t). */
export function summarizeScores(scores: readonly number[]): ScoreSummary {
  const n = scores.length;
  if (n === 0) return { n, mean: 0, ci: null, method: 't' };
  if (isBinary(scores)) {
    const successes = scores.filter((s) => s === 1).length;
    return { n, mean: successes / n, ci: wilson(successes, n), method: 'wilson' };
  }
  return { n, mean: mean(scores), ci: tInterval(scores), method: 't' };
}

/** other - baseline over aligned items: a paired t interval on the per-item differences. */
export function pairedDifference(baseline: readonly number[], other: readonly number[]): Difference {
  if (baseline.length !== other.length) throw new Error('paired scores must align item by item');
  const diffs = other.map((x, i) => x - baseline[i]!);
  return { diff: diffs.length ? mean(diffs) : 0, ci: tInterval(diffs), method: 'paired_t', n: diffs.length };
}

/** other - baseline over different items: Newcombe (0/1 scores) or Welch t. */
export function unpairedDifference(baseline: readonly number[], other: readonly number[]): Difference {
  const n = Math.min(baseline.length, other.length);
  if (baseline.length === 0 || other.length === 0) return { diff: 0, ci: null, method: 'welch_t', n };
  const diff = mean(other) - mean(baseline);
  if (isBinary(baseline) && isBinary(other)) {
    const a = wilson(baseline.filter((s) => s === 1).length, baseline.length)!;
    const b = wilson(other.filter((s) => s === 1).length, other.length)!;
    const p1 = mean(baseline);
    const p2 = mean(other);
    return {
      diff,
      ci: { low: diff - Math.sqrt((p2 - b.low) ** 2 + (a.high - p1) ** 2), high: diff + Math.sqrt((b.high - p2) ** 2 + (p1 - a.low) ** 2) },
      method: 'newcombe',
      n,
    };
  }
  if (baseline.length < 2 || other.length < 2) return { diff, ci: null, method: 'welch_t', n };
  const v1 = variance(baseline) / baseline.length;
  const v2 = variance(other) / other.length;
  const se = Math.sqrt(v1 + v2);
  if (se === 0) return { diff, ci: { low: diff, high: diff }, method: 'welch_t', n };
  const df = (v1 + v2) ** 2 / (v1 ** 2 / (baseline.length - 1) + v2 ** 2 / (other.length - 1));
  const half = tCritical(df) * se;
  return { diff, ci: { low: diff - half, high: diff + half }, method: 'welch_t', n };
}

/** Better when the whole interval lies above 0, worse when below, else no clear difference. */
export function verdictOf(ci: Interval | null): Verdict {
  if (ci === null) return 'no_clear_difference';
  if (ci.low > 0) return 'better';
  if (ci.high < 0) return 'worse';
  return 'no_clear_difference';
}

export const METHOD_TEXT: Record<IntervalMethod | DifferenceMethod, string> = {
  wilson: '95% Wilson score interval of the accuracy (scores are 0/1, one per item)',
  t: '95% Student t interval of the mean score over items',
  paired_t: '95% paired t interval of the per-item score differences (same items for both models)',
  newcombe: "95% Newcombe hybrid score interval of the difference of two accuracies (items not aligned)",
  welch_t: "95% Welch t interval of the difference of two means (items not aligned)",
};
