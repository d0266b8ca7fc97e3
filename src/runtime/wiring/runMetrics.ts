/**
 * A run's metrics for rl_check_status, rl_get_results and rl_compare_runs: from W&B when the run
 * logs there, else from the rows its trainer records itself (a cookbook run's metrics.jsonl,
 * through its framework's `metricRows`), in the same shapes, saying where they came from
 * (`metrics_source`). A run with neither answers W&B's "off" sentence as before.
 */
import type { JsonValue } from '../../core/json.js';
import { NO_LOSS } from '../runs/cookbook/observer.js';
import { frameworkOf } from '../runs/choice/frameworks.js';
import { isActive, type RunRecord } from '../runs/seams/record.js';
import { clampSamples, evenlySpaced, type Point, type Series, summarizeSeries } from '../wandb/history.js';
import { KEY_METRICS, type KeyMetric, keyMetricSummaries } from '../wandb/keyMetrics.js';
import type { StatusMetrics } from '../wandb/metrics.js';
import { WANDB_OFF, type WandbKeyMetrics, type WandbReader, type WandbResults, type WandbStatus } from '../wandb/reader.js';
import { sparkline } from '../wandb/sparkline.js';
import { asMetricNumber, type MetricNumber } from '../wandb/tolerantJson.js';

/** Where the metrics of an answer came from, when not W&B. */
export const RUN_FILES_SOURCE = 'metrics.jsonl (the run\'s own record; W&B is not used for this run)';

/** The keys a cookbook row holds each key metric under, first found wins (tinker_cookbook/rl/metric_util.py; test/ = its evaluators). */
const ROW_KEYS: Record<KeyMetric, readonly string[]> = {
  reward_mean: ['env/all/reward/total'],
  loss: ['optim/loss', 'train/loss', 'loss'],
  percent_correct: ['env/all/correct', 'env/all/correct_answer'],
  eval_percent_correct: ['test/env/all/correct', 'test/env/all/correct_answer'],
};

type Row = Record<string, JsonValue>;

function keyOf(rows: readonly Row[], metric: KeyMetric): string | undefined {
  return ROW_KEYS[metric].find((key) => rows.some((row) => key in row));
}

/** Per key metric its points, by step. */
function keyPoints(rows: readonly Row[]): Partial<Record<KeyMetric, Point[]>> {
  const out: Partial<Record<KeyMetric, Point[]>> = {};
  for (const metric of KEY_METRICS) {
    const key = keyOf(rows, metric);
    if (key !== undefined) out[metric] = rows.filter((r) => key in r).map((r) => ({ step: r.step as number, value: asMetricNumber(r[key]) }));
  }
  return out;
}

/** The training figures a cookbook row holds (rl/train.py logs the optimizer's metrics, not a loss): its `optim/` keys but the learning rate. */
function trainingFigures(row: Row | undefined): Record<string, MetricNumber> | undefined {
  const figures = Object.entries(row ?? {}).filter(([key]) => key.startsWith('optim/') && key !== 'optim/lr');
  return figures.length > 0 ? Object.fromEntries(figures.map(([key, value]) => [key, asMetricNumber(value)])) : undefined;
}

/** Why each key metric no row carries is null: a trainer that never logs it, not one that has not yet. */
const NOT_LOGGED: Record<KeyMetric, string> = {
  reward_mean: 'no row of metrics.jsonl has env/all/reward/total',
  loss: NO_LOSS,
  percent_correct: "not logged: the environment reports no 'correct' metric",
  eval_percent_correct: 'not logged: the recipe has no evaluator (or has not run one yet: every eval_every steps)',
};

function notLogged(rows: readonly Row[]): Record<string, string> | undefined {
  if (rows.length === 0) return undefined;
  const missing = KEY_METRICS.filter((metric) => keyOf(rows, metric) === undefined);
  return missing.length > 0 ? Object.fromEntries(missing.map((metric) => [metric, NOT_LOGGED[metric]])) : undefined;
}

function lastMetrics(record: RunRecord, rows: readonly Row[]): StatusMetrics {
  const points = keyPoints(rows);
  const last = (metric: KeyMetric) => points[metric]?.at(-1)?.value ?? null;
  const training = trainingFigures(rows.at(-1));
  const missing = notLogged(rows);
  return {
    step: (rows.at(-1)?.step as number | undefined) ?? null,
    reward_mean: last('reward_mean'),
    loss: last('loss'),
    percent_correct: last('percent_correct'),
    eval_percent_correct: last('eval_percent_correct'),
    state: isActive(record.status) ? 'running' : record.status,
    ...(training !== undefined ? { training } : {}),
    ...(missing !== undefined ? { not_logged: missing } : {}),
  };
}

/** The run's own rows, or undefined when its framework keeps none (only W&B has its metrics). */
async function ownRows(record: RunRecord): Promise<Row[] | undefined> {
  return frameworkOf(record).metricRows?.(record);
}

type Sourced<T> = T & { metrics_source?: string };

export async function statusMetrics(wandb: WandbReader, record: RunRecord, signal?: AbortSignal): Promise<Sourced<WandbStatus>> {
  if (record.use_wandb) return wandb.statusMetrics(record, signal);
  const rows = await ownRows(record);
  return rows === undefined ? { wandb_error: WANDB_OFF } : { metrics: lastMetrics(record, rows), metrics_source: RUN_FILES_SOURCE };
}

export async function results(wandb: WandbReader, record: RunRecord, samples: number, signal?: AbortSignal): Promise<Sourced<WandbResults>> {
  if (record.use_wandb) return wandb.results(record, { samples }, signal);
  const rows = await ownRows(record);
  if (rows === undefined) return { wandb_error: WANDB_OFF };
  const series: Series = new Map();
  for (const row of rows) {
    for (const [key, value] of Object.entries(row)) {
      if (key === 'step' || (typeof value !== 'number' && !['NaN', 'Infinity', '-Infinity'].includes(value as string))) continue;
      if (!series.has(key)) series.set(key, []);
      series.get(key)!.push({ step: row.step as number, value: asMetricNumber(value) });
    }
  }
  const sparklines = Object.fromEntries(Object.entries(keyPoints(rows)).map(([metric, points]) => [metric, sparkline(points.map((p) => p.value))]));
  const { step: _step, ...final } = rows.at(-1) ?? {};
  return {
    final_metrics: final,
    history: evenlySpaced(rows, clampSamples(samples)).map(({ step, ...rest }) => ({ _step: step!, ...rest })),
    history_summary: summarizeSeries(series),
    ...(Object.keys(sparklines).length > 0 ? { sparklines } : {}),
    metrics_source: RUN_FILES_SOURCE,
  };
}

export async function keyMetrics(wandb: WandbReader, record: RunRecord, signal?: AbortSignal): Promise<Sourced<WandbKeyMetrics>> {
  if (record.use_wandb) return wandb.keyMetrics(record, signal);
  const rows = await ownRows(record);
  return rows === undefined ? { wandb_error: WANDB_OFF } : { metrics: keyMetricSummaries(lastMetrics(record, rows), keyPoints(rows)), metrics_source: RUN_FILES_SOURCE };
}
