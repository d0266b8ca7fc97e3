/**
 * The watchdog's eyes on an Atropos run: while it trains, its supervisor looks every few seconds
 * at what the trainer log gained (steps completed, rewards, loss), what the environment log gained
 * (connection errors, dropped groups, errors) and the Atropos API's `/status` (data queued,
 * batches taken), and keeps the result in run.json (`observed`), from which health is judged.
 */
import { addEnvSignals } from './logSignals.js';
import { LogCursor } from '../supervision/polling.js';
import { getJson } from './probes.js';
import type { RunLook, RunObserver } from '../seams/framework.js';
import { type BatchTokens, type EnvLogSignals, hostOf, logOf, processOf, type RunObservations, type RunRecord } from '../seams/record.js';
import { TrainerLogScanner, type TrainerLogSummary } from './trainerLog.js';
import { addBatch, BatchReader } from './batchTokens.js';

/** What one look found. */
export interface Look {
  trainer: Pick<TrainerLogSummary, 'steps_completed' | 'total_steps' | 'recent_rewards' | 'last_loss' | 'sequences_trained' | 'untrained_steps'>;
  /** The API's `/status`, when it answered. */
  api?: { queue_size: number; current_step: number };
  /** Lines the environment log gained since the last look. */
  envLines: string[];
  /** Tokens of the batches the trainer took (its temp.json), all those seen so far. */
  batch_tokens?: BatchTokens;
}

/** JSON has no NaN: a non-finite value is kept as the string Python would print. */
export function jsonNumber(value: number): number | string {
  if (Number.isFinite(value)) return value;
  return Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
}

/**
 * The observations after a look at `at`, and whether anything a reader cares about changed. Data
 * "arrives" when the queue grows or the trainer takes a batch: either count rising.
 */
export function nextObservations(previous: RunObservations | undefined, look: Look, at: string): { next: RunObservations; changed: boolean } {
  const prev = previous ?? { observed_at: at, steps_completed: 0 };
  const next: RunObservations = { ...prev, observed_at: at };
  let changed = previous === undefined;
  if (look.trainer.steps_completed > prev.steps_completed) {
    next.steps_completed = look.trainer.steps_completed;
    next.step_completed_at = at;
    changed = true;
  }
  if (look.trainer.total_steps !== undefined) next.total_steps = look.trainer.total_steps;
  if (look.trainer.sequences_trained !== undefined) next.sequences_trained = look.trainer.sequences_trained;
  // The trainer log is read from its start by every server: what it says now replaces what was kept.
  if (look.trainer.untrained_steps !== undefined) next.untrained_steps = look.trainer.untrained_steps;
  else delete next.untrained_steps;
  if (look.batch_tokens && look.batch_tokens.batches > (prev.batch_tokens?.batches ?? 0)) {
    next.batch_tokens = look.batch_tokens;
    changed = true;
  }
  if (look.trainer.recent_rewards.length > 0) next.recent_rewards = look.trainer.recent_rewards.map(jsonNumber);
  if (look.trainer.last_loss !== undefined) next.last_loss = jsonNumber(look.trainer.last_loss);
  if (look.api) {
    const { queue_size, current_step } = look.api;
    const grew = queue_size > (prev.queue_size ?? 0) || current_step > (prev.batches_taken ?? 0);
    if (grew) {
      next.data_first_at ??= at;
      next.data_last_at = at;
      changed = true;
    }
    next.queue_size = queue_size;
    next.batches_taken = current_step;
  }
  const env: EnvLogSignals = { ...prev.env };
  if (addEnvSignals(env, look.envLines, at)) {
    next.env = env;
    changed = true;
  }
  return { next, changed };
}

const asCount = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

/** Reads only what the logs gained since the last look; one `/status` probe per look. */
export class AtroposObserver implements RunObserver {
  private readonly trainer: { cursor: LogCursor; scanner: TrainerLogScanner };
  private readonly env: { cursor: LogCursor; partial: string };
  private readonly batches: BatchReader;
  /** Counted here, not from run.json: a look's observations reach run.json only every few seconds. */
  private batchTokens?: BatchTokens;

  private started?: Promise<void>;

  constructor(private readonly record: () => RunRecord) {
    this.trainer = { cursor: new LogCursor(logOf(record(), 'trainer')), scanner: new TrainerLogScanner() };
    this.env = { cursor: new LogCursor(logOf(record(), 'env')), partial: '' };
    this.batches = new BatchReader(processOf(record(), 'trainer').cwd);
    this.batchTokens = record().observed?.batch_tokens;
  }

  /**
   * The trainer log is read from its start (steps and rewards are counted over the whole run);
   * the environment's signals an earlier server already counted are in run.json, so an adopted
   * run's environment log is read from where it ends now.
   */
  private start(): Promise<void> {
    return (this.started ??= this.record().observed?.env !== undefined ? this.env.cursor.skipToEnd() : Promise.resolve());
  }

  private count(batch: { rollouts: number; prompt: number; completion: number } | undefined): boolean {
    if (batch) this.batchTokens = addBatch(this.batchTokens, batch);
    return this.batchTokens !== undefined;
  }

  async look(previous: RunObservations | undefined, at: string): Promise<RunLook> {
    return nextObservations(previous, await this.lookAtFiles(), at);
  }

  private async lookAtFiles(): Promise<Look> {
    await this.start();
    const [trainerText, envText, status, batch] = await Promise.all([this.trainer.cursor.read(), this.env.cursor.read(), getJson({ host: hostOf(this.record()), port: this.record().ports.api }, '/status'), this.batches.next()]);
    this.trainer.scanner.feed(trainerText);
    const lines = (this.env.partial + envText).split('\n');
    this.env.partial = lines.pop() ?? '';
    const body = (status?.status === 200 ? status.body : undefined) as Record<string, unknown> | undefined;
    const queue = asCount(body?.queue_size);
    const step = asCount(body?.current_step);
    const { steps_completed, total_steps, recent_rewards, last_loss, sequences_trained, untrained_steps } = this.trainer.scanner.summary;
    return {
      trainer: { steps_completed, total_steps, recent_rewards, last_loss, sequences_trained, untrained_steps },
      ...(queue !== undefined && step !== undefined ? { api: { queue_size: queue, current_step: step } } : {}),
      envLines: lines,
      ...(this.count(batch) ? { batch_tokens: this.batchTokens } : {}),
    };
  }
}
