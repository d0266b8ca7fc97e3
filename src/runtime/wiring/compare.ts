/**
 * rl_compare_runs: runs side by side (a sweep), each run's record joined with its config.yaml and
 * its W&B key metrics, and the best run by one metric. W&B is asked about every run at once, each
 * lookup within the reader's own budget and the call's signal; a W&B problem is that run's
 * `wandb_error` and a damaged record that run's `error`, never a failed call.
 */
import { UserError } from '../../core/errors.js';
import type { Runtime } from './runtime.js';
import { assessHealth, type Health, mainReasonOnly } from '../runs/watching/health.js';
import { readRunConfigFile, type RunConfigRead } from '../runs/registry/configFile.js';
import { isDamaged, type RegistryEntry, type RunRecord, type RunStatus } from '../runs/seams/record.js';
import { RunFiles } from '../runs/registry/runFiles.js';
import { frameworkOf } from '../runs/choice/frameworks.js';
import { DIRECTIONS, type Direction, finiteNumber, isBetter, type KeyMetric } from '../wandb/keyMetrics.js';
import type { WandbKeyMetrics } from '../wandb/reader.js';
import { keyMetrics } from './runMetrics.js';
import { type AssignedValues, assignedValues, compareConfigs, type ConfigComparison } from './compareConfig.js';

/** An unknown id is refused with the newest run ids to choose from, this many at most. */
const AVAILABLE_LISTED = 20;

export type ComparedRun = {
  run_id: string;
  environment: string | null;
  status: RunStatus;
  started_at: string | null;
  health?: Health;
  /** Trainer steps completed. */
  steps: number | null;
  config_error?: string;
  /** What the server gave this run of its own (ports' URLs, checkpoint directory): never a config difference. */
  assigned?: AssignedValues;
  /** Why the run's record cannot be used. */
  error?: string;
} & WandbKeyMetrics;

export interface BestRun {
  run_id: string;
  metric: KeyMetric;
  value: number;
  direction: Direction;
  rule: string;
  /** Other runs with the same value, which lost the tie. */
  tied_with?: string[];
  /** Runs without a finite final value of the metric. */
  left_out?: string[];
}

export type Comparison = {
  metric: KeyMetric;
  best: BestRun | null;
  /** Why `best` is null. */
  best_unavailable?: string;
  runs: ComparedRun[];
} & ConfigComparison;

function requestedRuns(runtime: Runtime, runIds: readonly string[]): RegistryEntry[] {
  const all = runtime.runs.list();
  const byId = new Map(all.map((entry) => [entry.run_id, entry]));
  const unknown = runIds.filter((id) => !byId.has(id));
  if (unknown.length > 0) {
    throw new UserError(`Run${unknown.length > 1 ? 's' : ''} ${unknown.map((id) => `'${id}'`).join(', ')} not found: compare runs of this host, listed by rl_list_runs (the newest are in 'available').`, {
      unknown_run_ids: unknown,
      available: all.slice(0, AVAILABLE_LISTED).map((entry) => entry.run_id),
      ...(all.length > AVAILABLE_LISTED ? { available_count: all.length } : {}),
    });
  }
  return runIds.map((id) => byId.get(id)!);
}

async function stepsCompleted(run: RunRecord): Promise<number> {
  // The supervisor's observation costs nothing; only a run it never observed needs its log read.
  return run.observed?.steps_completed ?? (await frameworkOf(run).readSummary(run)).steps_completed;
}

/** The run's own part of the answer; its config is read beside it and compared across the runs. */
async function comparedRun(runtime: Runtime, entry: RegistryEntry, now: number, signal?: AbortSignal): Promise<ComparedRun> {
  if (isDamaged(entry)) return { run_id: entry.run_id, environment: null, status: 'unknown', started_at: entry.created_at ?? null, steps: null, error: entry.damaged };
  const [steps, wandb] = await Promise.all([
    stepsCompleted(entry),
    keyMetrics(runtime.wandb, entry, signal),
  ]);
  return {
    run_id: entry.run_id,
    environment: entry.environment,
    status: entry.status,
    started_at: entry.started_at,
    health: mainReasonOnly(assessHealth(entry, now, runtime.runs.healthPolicy)),
    steps,
    ...wandb,
  };
}

async function compareRun(runtime: Runtime, files: RunFiles, entry: RegistryEntry, now: number, signal?: AbortSignal): Promise<{ run: ComparedRun; read: RunConfigRead }> {
  const [run, read] = await Promise.all([comparedRun(runtime, entry, now, signal), readRunConfigFile(files, entry.run_id)]);
  return { run: 'config_error' in read ? { ...run, config_error: read.config_error } : { ...run, assigned: assignedValues(read.config) }, read };
}

function bestRule(metric: KeyMetric, direction: Direction): string {
  return (
    `The ${direction === 'higher' ? 'highest' : 'lowest'} final ${metric} wins (the W&B summary value: the last one logged). ` +
    'A tie goes to the run started first; the others are in tied_with. ' +
    `Runs without a finite final ${metric} (W&B off or empty for the run, the metric not logged, NaN or Infinity, a damaged record) are left out, in left_out.`
  );
}

function pickBest(runs: readonly ComparedRun[], metric: KeyMetric): Pick<Comparison, 'best' | 'best_unavailable'> {
  const direction = DIRECTIONS[metric];
  const scored = runs.flatMap((run, index) => {
    const value = finiteNumber(run.metrics?.[metric]?.final ?? null);
    return value === undefined ? [] : [{ run, value, started: Date.parse(run.started_at ?? '') || Number.POSITIVE_INFINITY, index }];
  });
  const [top] = scored.sort((a, b) => (a.value !== b.value ? (isBetter(a.value, b.value, direction) ? -1 : 1) : a.started - b.started || a.index - b.index));
  if (top === undefined) {
    return { best: null, best_unavailable: `No run has a finite final ${metric} in W&B (not logged, or W&B has nothing for the runs: see their wandb_error): compare by another metric, or check that the runs log to W&B.` };
  }
  const tied = scored.filter((s) => s !== top && s.value === top.value).map((s) => s.run.run_id);
  const leftOut = runs.filter((run) => !scored.some((s) => s.run === run)).map((run) => run.run_id);
  return {
    best: {
      run_id: top.run.run_id,
      metric,
      value: top.value,
      direction,
      rule: bestRule(metric, direction),
      ...(tied.length > 0 ? { tied_with: tied } : {}),
      ...(leftOut.length > 0 ? { left_out: leftOut } : {}),
    },
  };
}

/** The comparison of `runIds` (distinct, known to the registry) by `metric`. */
export async function compareRuns(runtime: Runtime, runIds: readonly string[], metric: KeyMetric, signal?: AbortSignal): Promise<Comparison> {
  const entries = requestedRuns(runtime, runIds);
  const files = new RunFiles(runtime.settings.home);
  const now = Date.now();
  const compared = await Promise.all(entries.map((entry) => compareRun(runtime, files, entry, now, signal)));
  const runs = compared.map((c) => c.run);
  return { metric, ...pickBest(runs, metric), ...compareConfigs(compared.map(({ run, read }) => ({ run_id: run.run_id, read }))), runs };
}
