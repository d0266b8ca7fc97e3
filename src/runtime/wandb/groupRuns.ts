/**
 * The W&B runs of one training run. Every run we start logs under `group = run_id`: the trainer
 * (tinker-atropos: tag `trainer`, name `<env>-<run_id>-trainer-<suffix>`) and one environment run
 * per env process (atroposlib: name `<wandb_name>-<date>-<random>`, metrics prefixed
 * `<wandb_name>_<n>_`). Display names are never matched exactly: they carry random parts.
 */
import type { JsonValue } from '../../core/json.js';
import type { GroupRunNode } from './documents.js';
import { parseJsonObjectField } from './tolerantJson.js';

export interface GroupRun {
  /** The W&B run id (GraphQL `name`). */
  name: string;
  displayName: string | null;
  state: string | null;
  tags: string[];
  createdAt: string;
  summary: Record<string, JsonValue>;
  url: string;
}

export interface RunGroup {
  trainer?: GroupRun;
  /** Newest first. */
  envRuns: GroupRun[];
}

/** A metric of the environment run(s): the run that logged it and its prefixed key. */
export interface EnvMetric {
  run: GroupRun;
  key: string;
}

export const ENV_TRAIN_ACCURACY = 'train/percent_correct';
export const ENV_EVAL_ACCURACY = 'eval/percent_correct';

export function toGroupRun(node: GroupRunNode, urlOf: (runName: string) => string): GroupRun {
  return {
    name: node.name,
    displayName: node.displayName,
    state: node.state,
    tags: node.tags ?? [],
    createdAt: node.createdAt,
    summary: parseJsonObjectField(node.summaryMetrics),
    url: urlOf(node.name),
  };
}

export function isTrainerRun(run: GroupRun): boolean {
  return run.tags.includes('trainer') || (run.displayName ?? '').includes('-trainer-');
}

/**
 * Splits a group into its trainer and environment runs. A restarted trainer leaves an older run
 * in the group, so the newest of each kind wins; the order is re-established here rather than
 * trusted from the query (timestamps without zone compare fine as they all share the format).
 */
export function splitGroup(runs: GroupRun[]): RunGroup {
  const newestFirst = runs
    .map((run, index) => ({ run, index, at: Date.parse(run.createdAt) || Number.NEGATIVE_INFINITY }))
    .sort((a, b) => b.at - a.at || a.index - b.index)
    .map((e) => e.run);
  return { trainer: newestFirst.find(isTrainerRun), envRuns: newestFirst.filter((r) => !isTrainerRun(r)) };
}

/**
 * The environment key ending in `suffix` (e.g. `gsm8k_0_train/percent_correct`), from the newest
 * environment run that logged it; a key with this run's `<wandb_name>_` prefix is preferred when
 * a run holds several.
 */
export function findEnvMetric(group: RunGroup, suffix: string, wandbName: string): EnvMetric | undefined {
  for (const run of group.envRuns) {
    const keys = Object.keys(run.summary).filter((k) => k === suffix || k.endsWith(`_${suffix}`));
    const key = keys.find((k) => k.startsWith(`${wandbName}_`)) ?? keys[0];
    if (key !== undefined) return { run, key };
  }
  return undefined;
}

/** The run a user should open and whose state counts: the trainer's, else the newest env run's. */
export function mainRun(group: RunGroup): GroupRun {
  return (group.trainer ?? group.envRuns[0])!;
}
