/**
 * The metrics an agent gets, read from the keys tinker-atropos and atroposlib really log,
 * not the ones Hermes guessed (`train/reward_mean`, unprefixed accuracy).
 */
import type { JsonValue } from '../../core/json.js';
import { ENV_EVAL_ACCURACY, ENV_TRAIN_ACCURACY, findEnvMetric, mainRun, type RunGroup } from './groupRuns.js';
import { asMetricNumber, type MetricNumber } from './tolerantJson.js';

export const TRAINER_STEP = '_step';
export const TRAINER_REWARD = 'reward/mean';
export const TRAINER_LOSS = 'train/loss';
export const TRAINER_LEARNING_RATE = 'train/learning_rate';

export interface StatusMetrics {
  step: MetricNumber;
  reward_mean: MetricNumber;
  loss: MetricNumber;
  percent_correct: MetricNumber;
  eval_percent_correct: MetricNumber;
  /** The trainer run's W&B state (running, finished, crashed, ...), else the environment run's. */
  state: string | null;
  /** What a trainer that records its own rows logs for training instead of a loss (a cookbook run: its `optim/` keys: optimizer metrics, KL, entropy). */
  training?: Record<string, MetricNumber>;
  /** Key metrics its rows never carry, and why: null for these means "not logged by this trainer", not "not yet". */
  not_logged?: Record<string, string>;
}

/** Summary values that are W&B bookkeeping or media (histograms, tables), not metrics. */
function isInternal(key: string, value: JsonValue): boolean {
  return key === '_wandb' || (value !== null && typeof value === 'object' && !Array.isArray(value) && '_type' in value);
}

export function statusMetrics(group: RunGroup, wandbName: string): StatusMetrics {
  const trainer = group.trainer?.summary ?? {};
  const accuracy = findEnvMetric(group, ENV_TRAIN_ACCURACY, wandbName);
  const evalAccuracy = findEnvMetric(group, ENV_EVAL_ACCURACY, wandbName);
  return {
    step: asMetricNumber(trainer[TRAINER_STEP]),
    reward_mean: asMetricNumber(trainer[TRAINER_REWARD]),
    loss: asMetricNumber(trainer[TRAINER_LOSS]),
    percent_correct: accuracy ? asMetricNumber(accuracy.run.summary[accuracy.key]) : null,
    eval_percent_correct: evalAccuracy ? asMetricNumber(evalAccuracy.run.summary[evalAccuracy.key]) : null,
    state: mainRun(group).state,
  };
}

/** The trainer's summary (minus internals and media) plus the environment's accuracy keys. */
export function finalMetrics(group: RunGroup, wandbName: string): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  for (const [key, value] of Object.entries(group.trainer?.summary ?? {})) {
    if (!isInternal(key, value)) out[key] = value;
  }
  for (const suffix of [ENV_TRAIN_ACCURACY, ENV_EVAL_ACCURACY]) {
    const metric = findEnvMetric(group, suffix, wandbName);
    if (metric) out[metric.key] = metric.run.summary[metric.key]!;
  }
  return out;
}
