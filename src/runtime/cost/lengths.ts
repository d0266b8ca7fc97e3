/**
 * Tokens per rollout, measured from what an inference test's `process` run wrote: per completion
 * in a group, `tokens` with `masks` (-100 on prompt tokens), counted by the environment's own
 * tokenizer, which is the trained model's (tokenizer_name); a group without them is counted from
 * its `messages` at 4 characters per token. Rollouts atroposlib filled with placeholders (an
 * OpenAI-compatible endpoint: every one 1 prompt and 127 completion tokens) are never counted:
 * their lengths come from what the wire to the endpoint carried (src/runtime/inference/wire/),
 * the endpoint's `usage` (a request's completion tokens shared among its choices by their
 * length), else its texts at 4 characters per token.
 */
import { hasOwnText, isPlaceholderRollout } from '../inference/wire/placeholders.js';

export const CHARS_PER_TOKEN = 4;

export type LengthSource = 'tokens/masks' | 'chars/4' | 'tokens/masks+chars/4' | 'endpoint usage' | 'endpoint text chars/4' | 'endpoint usage+chars/4';

/** One request as the wire carried it: its prompt's characters, each choice's text, the endpoint's count. */
export interface ExchangeLengths {
  promptChars: number;
  completions: readonly string[];
  usage?: { prompt_tokens: number; completion_tokens: number };
}

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

/** Rollouts' prompt and completion tokens, and how many were counted each way. */
class Pool {
  readonly prompts: number[] = [];
  readonly completions: number[] = [];
  /** Counted exactly (tokens/masks, or the endpoint's usage), and from characters. */
  exact = 0;
  byChars = 0;

  push(prompt: number, completion: number, exact: boolean): void {
    this.prompts.push(prompt);
    this.completions.push(completion);
    if (exact) this.exact++;
    else this.byChars++;
  }

  result(sources: [LengthSource, LengthSource, LengthSource]): RolloutLengths | undefined {
    if (this.completions.length === 0) return undefined;
    const source = this.byChars === 0 ? sources[0] : this.exact === 0 ? sources[1] : sources[2];
    const { prompts, completions } = this;
    // A request's completion tokens shared among its choices are fractions: shown to a tenth, as means are.
    return {
      source,
      rollouts: completions.length,
      prompt_tokens: { mean: mean(prompts), max: round1(Math.max(...prompts)) },
      completion_tokens: { mean: mean(completions), p25: round1(quantile(completions, 0.25)), max: round1(Math.max(...completions)) },
    };
  }
}

const tokensOf = (text: string): number => Math.ceil(text.length / CHARS_PER_TOKEN);

/**
 * Adds one JSONL group (and one wire exchange) at a time; `result` once every one was seen: the
 * groups' own lengths, or, when atroposlib wrote placeholders, the wire's.
 */
export class LengthCounter {
  private readonly written = new Pool();
  private readonly wire = new Pool();
  private placeholders = 0;

  add(group: unknown): void {
    const { tokens, masks, messages } = (group ?? {}) as { tokens?: unknown; masks?: unknown; messages?: unknown };
    const count = Math.max(isArray(tokens) ? tokens.length : 0, isArray(messages) ? messages.length : 0);
    for (let i = 0; i < count; i++) {
      const t = isArray(tokens) ? tokens[i] : undefined;
      const m = isArray(masks) ? masks[i] : undefined;
      const conversation = isArray(messages) ? messages[i] : undefined;
      const placeholder = isPlaceholderRollout(t, m);
      if (placeholder) this.placeholders++;
      if (!placeholder && isArray(t) && isArray(m) && m.length === t.length) {
        const prompt = m.filter((x) => x === -100).length;
        this.written.push(prompt, t.length - prompt, true);
      } else if (isArray(conversation) && (!placeholder || hasOwnText(conversation))) {
        this.written.push(Math.ceil(chars(conversation, false) / CHARS_PER_TOKEN), Math.ceil(chars(conversation, true) / CHARS_PER_TOKEN), false);
      }
    }
  }

  /** One request's choices as rollouts: the endpoint's usage when it gave one, else the texts' characters. */
  addExchange({ promptChars, completions, usage }: ExchangeLengths): void {
    const textTokens = completions.map(tokensOf);
    const totalText = textTokens.reduce((a, b) => a + b, 0);
    completions.forEach((_, i) => {
      if (usage === undefined) return this.wire.push(Math.ceil(promptChars / CHARS_PER_TOKEN), textTokens[i]!, false);
      const share = totalText > 0 ? textTokens[i]! / totalText : 1 / completions.length;
      this.wire.push(usage.prompt_tokens, usage.completion_tokens * share, true);
    });
  }

  /** Rollouts counted and their prompt and completion tokens, summed. */
  totals(): { rollouts: number; prompt: number; completion: number } {
    const sum = (v: number[]): number => v.reduce((a, b) => a + b, 0);
    return { rollouts: this.written.completions.length, prompt: sum(this.written.prompts), completion: sum(this.written.completions) };
  }

  /** Placeholders are never lengths: with any, the wire's count when it has one, else the environment's own texts. */
  result(): RolloutLengths | undefined {
    const fromWire = this.placeholders > 0 ? this.wire.result(['endpoint usage', 'endpoint text chars/4', 'endpoint usage+chars/4']) : undefined;
    return fromWire ?? this.written.result(['tokens/masks', 'chars/4', 'tokens/masks+chars/4']);
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
