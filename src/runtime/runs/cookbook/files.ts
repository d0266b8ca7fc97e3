/**
 * What a tinker-cookbook run writes under its log_path, read as it grows (docs/architecture.md,
 * "The life of a run"): `metrics.jsonl` (one row per finished batch, `{"step": i, ...}`; after a
 * resume the batch after the last checkpoint runs again, so a step may repeat and its last row
 * wins), `checkpoints.jsonl` (`name`, `batch`, `state_path`, `sampler_path`; the last one named
 * `final`), `logs.log` ("Will train on N batches", Tinker's billing-pause warnings, errors) and
 * `config.json` (written once the argv parsed and the log directory is set up). Each read costs
 * only what the files gained.
 */
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { RUN_FILES } from '../../../core/files/home.js';
import type { JsonValue } from '../../../core/json.js';
import type { LoggedTokens } from '../../cost/spend.js';
import { parseTolerantJson } from '../../wandb/tolerantJson.js';
import type { RunRecord, TrainerLogSignals } from '../seams/record.js';
import { LogCursor } from '../supervision/polling.js';

export const COOKBOOK_FILES = { config: 'config.json', metrics: 'metrics.jsonl', checkpoints: 'checkpoints.jsonl', log: 'logs.log' } as const;

/** The run's log_path: inside its own directory, beside its config. */
export const logDirOf = (record: Pick<RunRecord, 'config_path'>): string => join(dirname(record.config_path), RUN_FILES.cookbookLogDir);
export const cookbookFile = (record: Pick<RunRecord, 'config_path'>, name: keyof typeof COOKBOOK_FILES): string => join(logDirOf(record), COOKBOOK_FILES[name]);

/** The keys the RL trainer logs per batch (tinker_cookbook/rl/metric_util.py). */
export const REWARD_KEY = 'env/all/reward/total';
export const PROMPT_TOKENS_KEY = 'env/all/total_ob_tokens';
export const COMPLETION_TOKENS_KEY = 'env/all/total_ac_tokens';
/** A loss, where a loss function reports one under a name of these. */
const LOSS_KEYS = ['optim/loss', 'train/loss', 'loss'];

export interface CookbookCheckpoint {
  name: string;
  batch?: number;
  state_path?: string;
  sampler_path?: string;
}

/** checkpoints.jsonl's records, in order; lines that are not records are skipped. */
export function parseCheckpoints(text: string): CookbookCheckpoint[] {
  return text.split('\n').flatMap((line) => {
    if (line.trim() === '') return [];
    try {
      const r = JSON.parse(line) as Record<string, unknown>;
      if (typeof r.name !== 'string') return [];
      const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
      const batch = typeof r.batch === 'number' && Number.isInteger(r.batch) ? r.batch : undefined;
      const [state_path, sampler_path] = [str(r.state_path), str(r.sampler_path)];
      return [{ name: r.name, ...(batch !== undefined ? { batch } : {}), ...(state_path ? { state_path } : {}), ...(sampler_path ? { sampler_path } : {}) }];
    } catch {
      return [];
    }
  });
}

/** What a resume starts from: the last record with a state (tinker_cookbook checkpoint_utils.get_last_checkpoint). */
export const lastState = (checkpoints: readonly CookbookCheckpoint[]): CookbookCheckpoint | undefined => checkpoints.findLast((c) => c.state_path !== undefined);

const number = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** metrics.jsonl fed as it grows. */
export class MetricsScanner {
  /** The highest step with a row: steps run 0..n-1. */
  maxStep = -1;
  /** Per step, its last row's reward and loss (the series), by step. */
  readonly rewards = new Map<number, number | string>();
  readonly losses = new Map<number, number | string>();
  /** Every step's last row, when asked for (`keepRows`): what rl_get_results shows as history. */
  readonly rows?: Map<number, Record<string, JsonValue>>;
  /** Every row counted, with the tokens of those that logged them. */
  tokens: LoggedTokens = { rows: 0, prompt_tokens: 0, completion_tokens: 0 };
  private rest = '';

  constructor(keepRows = false) {
    if (keepRows) this.rows = new Map();
  }

  /** Adds the rows of `text`; a line still being written waits for its newline. */
  feed(text: string): void {
    const lines = (this.rest + text).split('\n');
    this.rest = lines.pop()!;
    for (const line of lines) this.row(line);
  }

  private row(line: string): void {
    let parsed: JsonValue;
    try {
      // Python's json writes NaN and Infinity bare: they come back as "NaN" / "Infinity".
      parsed = parseTolerantJson(line);
    } catch {
      return;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return;
    const row = parsed as Record<string, JsonValue>;
    const step = number(row.step);
    if (step === undefined) return;
    if (this.rows !== undefined) this.rows.set(step, row);
    this.maxStep = Math.max(this.maxStep, step);
    const reward = row[REWARD_KEY];
    if (reward !== undefined && reward !== null) this.rewards.set(step, reward as number | string);
    const lossKey = LOSS_KEYS.find((k) => row[k] !== undefined && row[k] !== null);
    if (lossKey !== undefined) this.losses.set(step, row[lossKey] as number | string);
    const t = this.tokens;
    this.tokens = { rows: t.rows + 1, prompt_tokens: t.prompt_tokens + (number(row[PROMPT_TOKENS_KEY]) ?? 0), completion_tokens: t.completion_tokens + (number(row[COMPLETION_TOKENS_KEY]) ?? 0) };
  }
}

/** What logs.log says: the batches the run trains on, Tinker's billing pause, errors it logged. */
export interface LogSignals extends TrainerLogSignals {
  total_steps?: number;
}

const WILL_TRAIN = /\[INFO\] Will train on (\d+) batches\s*$/;
/** The SDK's warning while Tinker pauses the job for billing (HTTP 402). */
export const BILLING_PAUSE = /The job (?:is|was) paused due to billing status/;
const LOGGED_ERROR = /\[(?:ERROR|CRITICAL)\] /;
const MAX_QUOTED = 300;

/** Adds what `lines` of logs.log (read at `at`) say to `signals`, in place; true when a signal was added. */
export function addLogSignals(signals: LogSignals, lines: readonly string[], at: string): boolean {
  let changed = false;
  for (const raw of lines) {
    const line = raw.trim();
    const total = WILL_TRAIN.exec(line);
    if (total) signals.total_steps = Number(total[1]);
    const kind = BILLING_PAUSE.test(line) ? 'billing_paused' : LOGGED_ERROR.test(line) ? 'errors' : undefined;
    if (kind === undefined) continue;
    signals[kind] = { line: line.length > MAX_QUOTED ? `${line.slice(0, MAX_QUOTED)}...` : line, count: (signals[kind]?.count ?? 0) + 1, at };
    changed = true;
  }
  return changed;
}

/** Everything read so far. */
export interface CookbookState {
  metrics: MetricsScanner;
  checkpoints: CookbookCheckpoint[];
  signals: LogSignals;
  /** config.json's mtime, when it exists: the recipe parsed its argv and set up its log directory then. */
  configWrittenMs?: number;
}

/** Follows one run's files; each `read` costs what they gained. Reads run one at a time (they share offsets). */
export class CookbookFiles {
  private readonly metricsCursor: LogCursor;
  private readonly logCursor: LogCursor;
  private logRest = '';
  private checkpointsSize = -1;
  readonly state: CookbookState;
  private reading: Promise<CookbookState>;

  /** `keepRows`: keep every step's last metrics row (a reader that shows the history). */
  constructor(
    private readonly record: Pick<RunRecord, 'config_path'>,
    keepRows = false,
  ) {
    this.state = { metrics: new MetricsScanner(keepRows), checkpoints: [], signals: {} };
    this.reading = Promise.resolve(this.state);
    this.metricsCursor = new LogCursor(cookbookFile(record, 'metrics'));
    this.logCursor = new LogCursor(cookbookFile(record, 'log'));
  }

  /** `at`: when this read happens, stamped on the log signals it finds. */
  read(at = new Date().toISOString()): Promise<CookbookState> {
    this.reading = this.reading.catch(() => undefined).then(() => this.readNew(at));
    return this.reading;
  }

  private async readNew(at: string): Promise<CookbookState> {
    for (let text = await this.metricsCursor.read(); text !== ''; text = await this.metricsCursor.read()) this.state.metrics.feed(text);
    for (let text = await this.logCursor.read(); text !== ''; text = await this.logCursor.read()) {
      const lines = (this.logRest + text).split('\n');
      this.logRest = lines.pop()!;
      addLogSignals(this.state.signals, lines, at);
    }
    const [checkpoints, config] = await Promise.all([stat(cookbookFile(this.record, 'checkpoints')).catch(() => undefined), stat(cookbookFile(this.record, 'config')).catch(() => undefined)]);
    if (checkpoints !== undefined && checkpoints.size !== this.checkpointsSize) {
      this.checkpointsSize = checkpoints.size;
      this.state.checkpoints = parseCheckpoints(await readFile(cookbookFile(this.record, 'checkpoints'), 'utf8').catch(() => ''));
    }
    if (config !== undefined) this.state.configWrittenMs = config.mtimeMs;
    return this.state;
  }
}
