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
