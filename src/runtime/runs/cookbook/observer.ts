/**
 * The watchdog's eyes on a cookbook run, and its training record in the shape every framework
 * answers: both read the files under the run's log_path (files.ts). A new metrics row is the
 * run's sign of life (the recipe writes one per finished batch and nothing between), so rows
 * are what health and stalls are judged by; steps are the distinct steps with a row.
 */
import type { Logger } from '../../../core/logger.js';
import type { RunProcess } from '../../../core/files/home.js';
import { jsonNumber } from '../atropos/observer.js';
import { RECENT_VALUES } from '../atropos/trainerLog.js';
import type { Readiness, RunLook, RunObserver, StartUpProbe, TrainingFollower, TrainingSummary } from '../seams/framework.js';
import { logOf, processOf, type RunObservations, type RunRecord } from '../seams/record.js';
import { CookbookFiles, type CookbookState, cookbookFile } from './files.js';
import { trainerReadiness } from './rules.js';

const finite = (v: number | string): number => (typeof v === 'number' ? v : Number.NaN);
const pythonNumber = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'string' ? Number(v.replace(/^nan$/i, 'NaN').replace(/^-?inf(inity)?$/i, (m) => (m.startsWith('-') ? '-Infinity' : 'Infinity'))) : Number.NaN);

/** The observations after a look at `at`: a new row is new data, a higher step a step completed. */
export function nextObservations(previous: RunObservations | undefined, state: CookbookState, at: string): RunLook {
  const prev = previous ?? { observed_at: at, steps_completed: 0 };
  const next: RunObservations = { ...prev, observed_at: at };
  let changed = previous === undefined;
  const { metrics, signals } = state;
  const steps = metrics.maxStep + 1;
  if (steps > prev.steps_completed) {
    next.steps_completed = steps;
    next.step_completed_at = at;
    changed = true;
  }
  if (metrics.tokens.rows > (prev.logged_tokens?.rows ?? 0)) {
    next.data_first_at ??= at;
    next.data_last_at = at;
    next.logged_tokens = metrics.tokens;
    changed = true;
  }
  if (signals.total_steps !== undefined) next.total_steps = signals.total_steps;
  const rewards = [...metrics.rewards.entries()].sort((a, b) => a[0] - b[0]).slice(-RECENT_VALUES).map(([, v]) => jsonNumber(pythonNumber(v)));
  if (rewards.length > 0) next.recent_rewards = rewards;
  const lastLoss = [...metrics.losses.entries()].sort((a, b) => a[0] - b[0]).at(-1);
  if (lastLoss !== undefined) next.last_loss = jsonNumber(pythonNumber(lastLoss[1]));
  const trainerSignals = { ...(signals.billing_paused ? { billing_paused: signals.billing_paused } : {}), ...(signals.errors ? { errors: signals.errors } : {}) };
  if (Object.keys(trainerSignals).length > 0 && JSON.stringify(trainerSignals) !== JSON.stringify(prev.trainer_signals ?? {})) {
    next.trainer_signals = trainerSignals;
    changed = true;
  }
  return { next, changed };
}

export class CookbookObserver implements RunObserver {
  private readonly files: CookbookFiles;

  constructor(record: () => RunRecord) {
    this.files = new CookbookFiles(record());
  }

  async look(previous: RunObservations | undefined, at: string): Promise<RunLook> {
    return nextObservations(previous, await this.files.read(at), at);
  }
}

/** Why a cookbook run has no loss curve: rl/train.py logs the optimizer's metrics (`optim/...`), not a forward-backward loss. */
export const NO_LOSS = "not logged: tinker-cookbook's RL loop logs its optimizer's metrics, KL and entropy (training), not a loss";

/** The run's checkpoints and numbers as every framework answers them. */
export function summaryOf(state: CookbookState, series: boolean): TrainingSummary {
  const { metrics, checkpoints, signals } = state;
  const samplers = checkpoints.filter((c) => c.sampler_path !== undefined);
  const final = checkpoints.findLast((c) => c.name === 'final');
  const byStep = (m: Map<number, number | string>): [number, number][] => [...m.entries()].sort((a, b) => a[0] - b[0]).map(([step, v]) => [step, pythonNumber(v)]);
  const rewards = byStep(metrics.rewards);
  const losses = byStep(metrics.losses);
  return {
    checkpoints: samplers.map((c) => c.sampler_path!),
    latest: samplers.at(-1)?.sampler_path ?? null,
    final_reported: final?.sampler_path ?? null,
    error_line: null,
    completed: final !== undefined,
    registered: state.configWrittenMs !== undefined,
    ...(metrics.maxStep >= 0 ? { step: metrics.maxStep } : {}),
    ...(signals.total_steps !== undefined ? { total_steps: signals.total_steps } : {}),
    steps_completed: metrics.maxStep + 1,
    trained_steps: metrics.maxStep + 1,
    // A checkpoint's batch is the number of steps trained into it: the step it stands for.
    saved: samplers.flatMap((c) => (c.batch !== undefined ? [{ step: c.batch, path: c.sampler_path! }] : [])),
    recent_rewards: rewards.slice(-RECENT_VALUES).map(([, v]) => v),
    ...(losses.length > 0 ? { last_loss: finite(losses.at(-1)![1]) } : {}),
    ...(series ? { series: { reward: rewards, loss: losses } } : {}),
    ...(metrics.maxStep >= 0 && losses.length === 0 ? { not_logged: { loss: NO_LOSS } } : {}),
  };
}

export async function readCookbookSummary(record: RunRecord, opts: { series?: boolean } = {}): Promise<TrainingSummary> {
  return summaryOf(await new CookbookFiles(record).read(), opts.series === true);
}

export class CookbookFollower implements TrainingFollower {
  private readonly files: CookbookFiles;

  constructor(record: RunRecord) {
    this.files = new CookbookFiles(record);
  }

  async read(): Promise<TrainingSummary> {
    return summaryOf(await this.files.read(), true);
  }
}

/** Start-up: the one process, ready once it wrote config.json (rules.ts says why). */
export class CookbookStartUpProbe implements StartUpProbe {
  private readonly files: CookbookFiles;

  constructor(
    private readonly run: () => RunRecord,
    private readonly logger: Logger,
  ) {
    this.files = new CookbookFiles(run());
  }

  wakeOn(stage: RunProcess): string[] {
    // The recipe logs as it sets up (stderr, in trainer.log); config.json's folder may not exist yet.
    return stage === 'trainer' ? [logOf(this.run(), 'trainer')] : [];
  }

  async readiness(stage: RunProcess): Promise<Readiness> {
    const p = processOf(this.run(), stage);
    const { configWrittenMs } = await this.files.read();
    const readiness = trainerReadiness({ running: p.state === 'running', startedMs: Date.parse(p.started_at ?? '') || Date.now(), ...(configWrittenMs !== undefined ? { configWrittenMs } : {}) });
    if (readiness === 'ready') this.logger.debug({ run_id: this.run().run_id, config: cookbookFile(this.run(), 'config') }, 'recipe set up its log directory');
    return readiness;
  }
}
