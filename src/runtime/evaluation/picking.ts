/**
 * A few rollouts to read, out of many: the best or worst scored, or a seeded random few, with
 * long texts cut in the middle (the start shows the approach, the end the answer) and a marker
 * naming the file that holds them whole. Pure, so the answer's size is bounded by construction.
 */
import type { Rollout } from './rollouts.js';

export const ROLLOUT_FILTERS = ['best', 'worst', 'random'] as const;
export type RolloutFilter = (typeof ROLLOUT_FILTERS)[number];
export const MAX_ROLLOUTS = 10;
/** Per text: a prompt is context, a completion is what is being read. 10 x (800 + 2000) chars stays far under 10k tokens. */
export const PROMPT_CHARS = 800;
export const COMPLETION_CHARS = 2000;

export interface SourcedRollout extends Rollout {
  /** Which model wrote it (a model id, or an evaluation label). */
  model?: string;
  /** The rl:// resource holding it whole. */
  file: string;
}

export interface PickedRollout {
  model?: string;
  score: number;
  prompt: string;
  completion: string;
  /** Set when a text was cut; the whole text is in `file`. */
  cut?: { prompt_chars?: number; completion_chars?: number };
  file: string;
}

/** Mulberry32: a small seeded generator, so "random" answers the same for the same seed. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `text` at most `max` characters: its start and end around a marker saying how much was cut and where it is whole. */
export function cutMiddle(text: string, max: number, file: string): { text: string; cut?: number } {
  if (text.length <= max) return { text };
  const cut = text.length - max;
  const head = Math.ceil(max * 0.6);
  return { text: `${text.slice(0, head)}\n[... ${cut} characters cut; the whole text is in ${file} ...]\n${text.slice(text.length - (max - head))}`, cut };
}

export function pickRollouts(all: readonly SourcedRollout[], filter: RolloutFilter, limit: number, seed = 0): PickedRollout[] {
  const indexed = all.map((r, i) => ({ r, i }));
  let chosen: typeof indexed;
  if (filter === 'random') {
    const next = seeded(seed);
    const pool = [...indexed];
    chosen = [];
    while (chosen.length < limit && pool.length > 0) chosen.push(pool.splice(Math.floor(next() * pool.length), 1)[0]!);
  } else {
    const sign = filter === 'best' ? -1 : 1;
    chosen = [...indexed].sort((a, b) => sign * (a.r.score - b.r.score) || a.i - b.i).slice(0, limit);
  }
  return chosen.map(({ r }) => {
    const prompt = cutMiddle(r.prompt, PROMPT_CHARS, r.file);
    const completion = cutMiddle(r.completion, COMPLETION_CHARS, r.file);
    const cut = { ...(prompt.cut ? { prompt_chars: prompt.cut } : {}), ...(completion.cut ? { completion_chars: completion.cut } : {}) };
    return { ...(r.model !== undefined ? { model: r.model } : {}), score: r.score, prompt: prompt.text, completion: completion.text, ...(Object.keys(cut).length ? { cut } : {}), file: r.file };
  });
}
