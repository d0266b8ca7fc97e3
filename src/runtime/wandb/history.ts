/**
 * Sampled history. W&B returns, per spec, only the rows that hold *every* key of that spec, so
 * metrics logged in separate `log()` calls (or by different runs) come back empty when asked
 * together: we send one spec per key and outer-join the series on `_step` ourselves.
 */
import type { JsonValue } from '../../core/json.js';
import { asMetricNumber, type MetricNumber, parseJsonObjectField } from './tolerantJson.js';

export const DEFAULT_HISTORY_SAMPLES = 10;
export const MAX_HISTORY_SAMPLES = 500;

export interface Point {
  step: number;
  value: MetricNumber;
}

/** Key -> points sorted by step. */
export type Series = Map<string, Point[]>;

export function clampSamples(samples: number | undefined): number {
  if (samples === undefined || !Number.isFinite(samples)) return DEFAULT_HISTORY_SAMPLES;
  return Math.min(MAX_HISTORY_SAMPLES, Math.max(1, Math.floor(samples)));
}

export function sampledHistorySpecs(keys: readonly string[], samples: number): string[] {
  return keys.map((key) => JSON.stringify({ keys: ['_step', key], samples }));
}

/** The points of one spec's answer: row objects (or, tolerated, JSON strings) holding `_step`. */
export function seriesPoints(rows: unknown, key: string): Point[] {
  if (!Array.isArray(rows)) return [];
  const points: Point[] = [];
  for (const raw of rows) {
    const row: Record<string, unknown> = typeof raw === 'string' ? parseJsonObjectField(raw) : raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
    if (typeof row._step === 'number' && key in row) points.push({ step: row._step, value: asMetricNumber(row[key]) });
  }
  return points.sort((a, b) => a.step - b.step);
}

/** One row per step holding every key logged at that step, in step order. */
export function joinOnStep(series: Series): Record<string, JsonValue>[] {
  const rows = new Map<number, Record<string, JsonValue>>();
  for (const [key, points] of series) {
    for (const { step, value } of points) {
      let row = rows.get(step);
      if (!row) rows.set(step, (row = { _step: step }));
      row[key] = value;
    }
  }
  return [...rows.entries()].sort((a, b) => a[0] - b[0]).map(([, row]) => row);
}

/** At most `n` items, evenly spaced, keeping the first and the last (the latest) one. */
export function evenlySpaced<T>(items: readonly T[], n: number): T[] {
  if (items.length <= n) return [...items];
  if (n <= 1) return n === 1 ? [items[items.length - 1]!] : [];
  return Array.from({ length: n }, (_, i) => items[Math.round((i * (items.length - 1)) / (n - 1))]!);
}

/** One history key over its sampled points: finite values only for min, max and mean. */
export interface KeySummary {
  points: number;
  first_step: number;
  last_step: number;
  first: MetricNumber;
  last: MetricNumber;
  min: number | null;
  max: number | null;
  mean: number | null;
}

const round6 = (x: number): number => Number(x.toPrecision(6));

export function summarizeSeries(series: Series): Record<string, KeySummary> {
  const out: Record<string, KeySummary> = {};
  for (const [key, points] of series) {
    if (points.length === 0) continue;
    const finite = points.map((p) => p.value).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
    out[key] = {
      points: points.length,
      first_step: points[0]!.step,
      last_step: points.at(-1)!.step,
      first: points[0]!.value,
      last: points.at(-1)!.value,
      min: finite.length > 0 ? Math.min(...finite) : null,
      max: finite.length > 0 ? Math.max(...finite) : null,
      mean: finite.length > 0 ? round6(finite.reduce((a, b) => a + b, 0) / finite.length) : null,
    };
  }
  return out;
}

/** The most evenly spaced rows (first and last kept) whose JSON fits in `maxChars`. */
export function fitRows<T>(rows: readonly T[], maxChars: number): T[] {
  let n = rows.length;
  for (;;) {
    const picked = evenlySpaced(rows, n);
    const size = JSON.stringify(picked).length;
    if (size <= maxChars || n <= 2) return picked;
    // Rows are about the same size: shrink in proportion, by at least one.
    n = Math.min(n - 1, Math.floor((n * maxChars) / size));
  }
}
