/**
 * Tokens per rollout, measured from what an inference test's `process` run wrote: per completion
 * in a group, `tokens` with `masks` (-100 on prompt tokens), counted by the environment's own
 * tokenizer, which is the trained model's (tokenizer_name); a group without them is counted from
 * its `messages` at 4 characters per token. The endpoint's `usage` never reaches this server:
 * atroposlib is the endpoint's client and does not write it down.
 */

export const CHARS_PER_TOKEN = 4;

export type LengthSource = 'tokens/masks' | 'chars/4' | 'tokens/masks+chars/4';

export interface RolloutLengths {
  /** How the lengths were counted. */
  source: LengthSource;
  rollouts: number;
  prompt_tokens: { mean: number; max: number };
  completion_tokens: { mean: number; p25: number; max: number };
}

const isArray = Array.isArray;
const chars = (messages: unknown[], assistant: boolean): number =>
  messages.reduce<number>((n, m) => {
    const { role, content } = (m ?? {}) as { role?: unknown; content?: unknown };
    return typeof content === 'string' && (role === 'assistant') === assistant ? n + content.length : n;
  }, 0);

/** Adds one JSONL group at a time; `result` once every group was seen. */
export class LengthCounter {
  private readonly prompts: number[] = [];
  private readonly completions: number[] = [];
  private byTokens = 0;
  private byChars = 0;

  add(group: unknown): void {
    const { tokens, masks, messages } = (group ?? {}) as { tokens?: unknown; masks?: unknown; messages?: unknown };
    const count = Math.max(isArray(tokens) ? tokens.length : 0, isArray(messages) ? messages.length : 0);
    for (let i = 0; i < count; i++) {
      const t = isArray(tokens) ? tokens[i] : undefined;
      const m = isArray(masks) ? masks[i] : undefined;
      if (isArray(t) && isArray(m) && m.length === t.length) {
        const prompt = m.filter((x) => x === -100).length;
        this.push(prompt, t.length - prompt);
        this.byTokens++;
        continue;
      }
      const conversation = isArray(messages) ? messages[i] : undefined;
      if (!isArray(conversation)) continue;
      this.push(Math.ceil(chars(conversation, false) / CHARS_PER_TOKEN), Math.ceil(chars(conversation, true) / CHARS_PER_TOKEN));
      this.byChars++;
    }
  }

  /** Rollouts counted and their prompt and completion tokens, summed. */
  totals(): { rollouts: number; prompt: number; completion: number } {
    const sum = (v: number[]): number => v.reduce((a, b) => a + b, 0);
    return { rollouts: this.completions.length, prompt: sum(this.prompts), completion: sum(this.completions) };
  }

  result(): RolloutLengths | undefined {
    if (this.completions.length === 0) return undefined;
    const source: LengthSource = this.byChars === 0 ? 'tokens/masks' : this.byTokens === 0 ? 'chars/4' : 'tokens/masks+chars/4';
    return { source, rollouts: this.completions.length, prompt_tokens: { mean: mean(this.prompts), max: Math.max(...this.prompts) }, completion_tokens: { mean: mean(this.completions), p25: quantile(this.completions, 0.25), max: Math.max(...this.completions) } };
  }

  private push(prompt: number, completion: number): void {
    this.prompts.push(prompt);
    this.completions.push(completion);
  }
}

const round1 = (x: number): number => Math.round(x * 10) / 10;

export function mean(values: readonly number[]): number {
  return round1(values.reduce((a, b) => a + b, 0) / values.length);
}

/** The nearest-rank quantile: a value that was measured, never one between two. */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}

/** Several models' lengths pooled, weighted by their rollouts (for a trained model none of them is). */
export function poolLengths(parts: readonly RolloutLengths[]): RolloutLengths | undefined {
  if (parts.length === 0) return undefined;
  if (parts.length === 1) return parts[0];
  const n = parts.reduce((a, p) => a + p.rollouts, 0);
  const weighted = (pick: (p: RolloutLengths) => number): number => round1(parts.reduce((a, p) => a + pick(p) * p.rollouts, 0) / n);
  const sources = new Set(parts.map((p) => p.source));
  return {
    source: sources.size === 1 ? parts[0]!.source : 'tokens/masks+chars/4',
    rollouts: n,
    prompt_tokens: { mean: weighted((p) => p.prompt_tokens.mean), max: Math.max(...parts.map((p) => p.prompt_tokens.max)) },
    completion_tokens: { mean: weighted((p) => p.completion_tokens.mean), p25: Math.min(...parts.map((p) => p.completion_tokens.p25)), max: Math.max(...parts.map((p) => p.completion_tokens.max)) },
  };
}
