/**
 * Which sampler checkpoints of a run to evaluate. tinker-atropos saves `step_0` at setup (the
 * untrained LoRA: the base model's behaviour) and `step_{k+1}` after step k, and prints each path
 * as it saves it; nothing named `final` is ever saved. A checkpoint is usable as soon as its line
 * is in the trainer log, so a running run is evaluated on what it has saved so far.
 */
import { UserError } from '../../core/errors.js';

export interface Checkpoint {
  step: number;
  path: string;
}

/** `checkpoints: "all"` evaluates at most this many, evenly spaced, the latest included. */
export const MAX_ALL_CHECKPOINTS = 8;
/** An explicit list may name at most this many. */
export const MAX_LISTED_CHECKPOINTS = 8;

const STEP_NAME = /\/sampler_weights\/step_(\d+)$/;

/** Saved `step_N` checkpoints by step, the last path printed for a step winning. */
export function savedCheckpoints(paths: readonly string[]): Checkpoint[] {
  const byStep = new Map<number, string>();
  for (const path of paths) {
    const m = STEP_NAME.exec(path);
    if (m) byStep.set(Number(m[1]), path);
  }
  return [...byStep.entries()].sort((a, b) => a[0] - b[0]).map(([step, path]) => ({ step, path }));
}

/** `count` indices spread evenly over 0..length-1, first and last included, ascending and distinct. */
export function evenlySpaced(length: number, count: number): number[] {
  if (length <= count) return Array.from({ length }, (_, i) => i);
  if (count === 1) return [length - 1];
  return [...new Set(Array.from({ length: count }, (_, i) => Math.round((i * (length - 1)) / (count - 1))))];
}

export type CheckpointRequest = 'latest' | 'all' | readonly (string | number)[];

export interface ChosenCheckpoints {
  chosen: Checkpoint[];
  /** What was left out and why, when something was. */
  note?: string;
}

function named(saved: readonly Checkpoint[], want: string | number): Checkpoint {
  const text = String(want).trim();
  const step = /^(?:step_)?(\d+)$/.exec(text)?.[1];
  const found = step !== undefined ? saved.find((c) => c.step === Number(step)) : saved.find((c) => c.path === text);
  if (found) return found;
  throw new UserError(`Checkpoint ${JSON.stringify(want)} is not among the run's saved checkpoints`, {
    available: saved.map((c) => `step_${c.step}`),
    expected: 'a step number, step_N, or a tinker:// path the trainer saved; or "latest" / "all"',
  });
}

/** How the run stands, for saying why there is nothing to evaluate. */
export interface RunState {
  status: string;
  ended: boolean;
  ended_at?: string;
  error?: string;
}

/** Why a run with no trained checkpoint cannot be evaluated: waiting helps only while it runs. */
function nothingTrained(saved: readonly Checkpoint[], run: RunState): string {
  if (run.ended) {
    const how = `${run.status}${run.ended_at ? ` at ${run.ended_at}` : ''}${run.error ? `: ${run.error}` : ''}`;
    return `The run ended (${how}) without saving a trained checkpoint${saved.length > 0 ? ' (only step_0, the untrained starting point)' : ''}: there is nothing to evaluate. Evaluate the base model with rl_test_inference, or train again.`;
  }
  return saved.length === 0
    ? 'The run has saved no checkpoint yet: the trainer prints each one as it saves it. Wait until it is running (rl_wait_for_run until: "step"), then evaluate.'
    : 'The run has saved only step_0, the untrained starting point (the same as the base model). Wait for its first step (rl_wait_for_run until: "step"), then evaluate.';
}

/**
 * The checkpoints a request names. step_0 is the untrained start, so it is left out of `latest`
 * and `all` (the baseline stands for it); a list may still name it.
 */
export function chooseCheckpoints(saved: readonly Checkpoint[], request: CheckpointRequest, run: RunState = { status: 'running', ended: false }): ChosenCheckpoints {
  const trained = saved.filter((c) => c.step > 0);
  if (Array.isArray(request)) {
    const chosen = [...new Map(request.map((w) => named(saved, w)).map((c) => [c.step, c])).values()].sort((a, b) => a.step - b.step);
    return { chosen: chosen.slice(0, MAX_LISTED_CHECKPOINTS), ...(chosen.length > MAX_LISTED_CHECKPOINTS ? { note: `only the first ${MAX_LISTED_CHECKPOINTS} checkpoints are evaluated` } : {}) };
  }
  if (trained.length === 0) {
    throw new UserError(nothingTrained(saved, run), { available: saved.map((c) => `step_${c.step}`), status: run.status });
  }
  if (request === 'latest') return { chosen: [trained[trained.length - 1]!] };
  const picked = evenlySpaced(trained.length, MAX_ALL_CHECKPOINTS).map((i) => trained[i]!);
  return {
    chosen: picked,
    ...(picked.length < trained.length ? { note: `${trained.length} trained checkpoints saved; ${picked.length} evenly spaced ones evaluated (the latest included)` } : {}),
  };
}
