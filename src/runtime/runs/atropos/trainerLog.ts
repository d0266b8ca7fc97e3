/**
 * What the tinker-atropos trainer's log says: its
 * checkpoints, whether it registered, how far it got, whether it finished, and its first error.
 * The trainer prints `Training complete!` and exits 0 even after `Error in step`, so the error
 * line, not the exit code, decides a failure. The file is streamed: a run's log grows for hours.
 */
import { createReadStream } from 'node:fs';
import type { TrainingSummary } from '../seams/framework.js';
import { LogCursor } from '../supervision/polling.js';

/**
 * The trainer log read as the run's training summary (framework.ts): `checkpoints` are the sampler
 * checkpoints it printed (`step_0` at setup, then one per step), `final_reported` the
 * `.../sampler_weights/final` path it prints although nothing by that name is saved upstream,
 * `error_line` the first `Error in step` / `Error during training` line, `completed` is
 * `Training complete!`, `registered` is `Registered as trainer`, `step` the last `Step k/N` begun,
 * `steps_completed` counts `Step k complete`, `sequences_trained` sums `Got N Datum objects`, the
 * rewards and losses are `Reward/mean:` and `Loss:`.
 */
export type TrainerLogSummary = TrainingSummary;

export interface TrainerLogOptions {
  /** Keep every step's reward and loss (the dashboard's curves), not only the latest. */
  series?: boolean;
}

/** How many of the latest per-step rewards are kept: enough to see a flat curve. */
export const RECENT_VALUES = 10;

const CHECKPOINT = /^(?:Initial sampling client created|Sampling client updated): (tinker:\/\/\S+?\/sampler_weights\/(?:step_\d+|final)|tinker:\/\/\S+)/;
const FINAL = /^Final weights are available here: (tinker:\/\/\S+?\/sampler_weights\/(?:step_\d+|final)|tinker:\/\/\S+)/;
const ERROR = /^(?:Error in step \d+|Error during training)\b/;
// The trainer's print() writes its text and its newline apart, and the inference server's access
// log (another thread, same file) can land in between: markers are matched at a line's start, and a
// checkpoint path ends at its sampler name.
const STEP = /^Step (\d+)\/(\d+)(?!\d)/;
const STEP_DONE = /^Step (\d+) complete\b/;
const DATUMS = /^Got (\d+) Datum objects/;
const SKIPPED = /^Skipped \d+ groups with zero advantages/;
// A float as Python prints it (nan and inf included), and nothing after it: an access log line
// written before the value's newline must not turn the value into NaN.
const FLOAT = String.raw`(-?(?:nan|inf|\d+(?:\.\d*)?(?:e[-+]?\d+)?))`;
const REWARD = new RegExp(`^Reward/mean: ${FLOAT}`, 'i');
const LOSS = new RegExp(`^Loss: ${FLOAT}`, 'i');

/** A float as Python prints it (`nan`, `inf`, `-inf` included). */
function pythonFloat(text: string): number {
  const t = text.toLowerCase();
  if (t === 'nan') return NaN;
  if (t === 'inf') return Infinity;
  if (t === '-inf') return -Infinity;
  return Number(text);
}

/** No marker line is this long; a longer one (a dumped batch, say) is skipped, not buffered. */
const MAX_LINE_CHARS = 64 * 1024;

/** Feeds log text in chunks of any size; lines split across chunks are joined. */
export class TrainerLogScanner {
  private rest = '';
  private skipping = false;
  /** Datums of the step under way, and its skipped-groups line: counted once the step completes. */
  private stepDatums?: number;
  private stepSkipped?: string;
  readonly summary: TrainerLogSummary = { checkpoints: [], latest: null, final_reported: null, error_line: null, completed: false, registered: false, steps_completed: 0, recent_rewards: [] };

  constructor(opts: TrainerLogOptions = {}) {
    if (opts.series) this.summary.series = { reward: [], loss: [] };
  }

  feed(text: string): void {
    const lines = (this.rest + text).split('\n');
    this.rest = lines.pop()!;
    for (const line of lines) {
      if (this.skipping) this.skipping = false;
      else this.line(line);
    }
    if (this.rest.length > MAX_LINE_CHARS) {
      this.rest = '';
      this.skipping = true;
    }
  }

  end(): TrainerLogSummary {
    if (this.rest !== '' && !this.skipping) this.line(this.rest);
    this.rest = '';
    return this.summary;
  }

  private stepDone(step: number): void {
    const s = this.summary;
    s.steps_completed = step + 1;
    if (this.stepDatums !== undefined) {
      s.sequences_trained = (s.sequences_trained ?? 0) + this.stepDatums;
      s.untrained_steps = this.stepDatums > 0 ? undefined : { steps: (s.untrained_steps?.steps ?? 0) + 1, line: this.stepSkipped ?? `Got ${this.stepDatums} Datum objects` };
    }
    this.stepDatums = undefined;
    this.stepSkipped = undefined;
  }

  private line(raw: string): void {
    const line = raw.replace(/\r$/, '').trim();
    const s = this.summary;
    let m: RegExpExecArray | null;
    if ((m = CHECKPOINT.exec(line))) {
      s.checkpoints.push(m[1]!);
      s.latest = m[1]!;
    } else if ((m = FINAL.exec(line))) s.final_reported = m[1]!;
    else if ((m = STEP.exec(line))) {
      s.step = Number(m[1]);
      s.total_steps = Number(m[2]);
    } else if ((m = STEP_DONE.exec(line))) this.stepDone(Number(m[1]));
    else if ((m = DATUMS.exec(line))) this.stepDatums = Number(m[1]);
    else if ((m = SKIPPED.exec(line))) this.stepSkipped = m[0];
    else if ((m = REWARD.exec(line))) {
      const reward = pythonFloat(m[1]!);
      s.recent_rewards = [...s.recent_rewards, reward].slice(-RECENT_VALUES);
      this.keep('reward', reward);
    } else if ((m = LOSS.exec(line))) {
      s.last_loss = pythonFloat(m[1]!);
      this.keep('loss', s.last_loss);
    } else if (line.startsWith('Registered as trainer')) s.registered = true;
    else if (line.startsWith('Training complete!')) s.completed = true;
    else if (s.error_line === null && ERROR.test(line)) s.error_line = line.slice(0, 500);
  }

  /** A value printed within step `Step k/N` belongs to step k (none is printed before the first step). */
  private keep(which: 'reward' | 'loss', value: number): void {
    const { series, step } = this.summary;
    if (series !== undefined && step !== undefined) series[which].push([step, value]);
  }
}

export async function readTrainerLog(path: string, opts: TrainerLogOptions = {}): Promise<TrainerLogSummary> {
  const scanner = new TrainerLogScanner(opts);
  try {
    for await (const chunk of createReadStream(path, { encoding: 'utf8', highWaterMark: 256 * 1024 })) scanner.feed(chunk as string);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return scanner.end();
}

/**
 * One trainer log followed by a reader that asks often (the dashboard polls every few seconds):
 * each call reads only what the log gained since the last one, per-step series included.
 */
export class TrainerLogFollower {
  private readonly cursor: LogCursor;
  private readonly scanner = new TrainerLogScanner({ series: true });

  constructor(path: string) {
    this.cursor = new LogCursor(path);
  }

  private reading: Promise<TrainerLogSummary> = Promise.resolve(this.scanner.summary);

  /** The summary so far; a line still being written counts once it ends. Reads run one at a time (they share the offset). */
  read(): Promise<TrainerLogSummary> {
    this.reading = this.reading.catch(() => undefined).then(() => this.readNew());
    return this.reading;
  }

  private async readNew(): Promise<TrainerLogSummary> {
    for (let text = await this.cursor.read(); text !== ''; text = await this.cursor.read()) this.scanner.feed(text);
    return this.scanner.summary;
  }
}
