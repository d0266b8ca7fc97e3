/**
 * The texts of a group atroposlib filled with placeholders (src/runtime/inference/wire/placeholders.ts):
 * its prompt is the request the endpoint got for it, when requests and groups pair one to one; a
 * completion is known only when every score of the group is the same (any completion earned it),
 * because environments may shuffle and drop completions before scoring, and atroposlib records no
 * link from a score to a text. Whatever is not known is said so, with where the wire's record is.
 */
import type { WireExchange } from '../inference/wire/exchanges.js';

type Message = { role?: unknown; content?: unknown };

const text = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));

/** Messages as a prompt is shown: `[role] content`, one per line. */
export const renderMessages = (messages: readonly Message[]): string => messages.map((m) => `[${text(m.role)}] ${text(m.content)}`).join('\n');

const PLACEHOLDERS = "atroposlib wrote placeholder tokens for this group (an OpenAI-compatible endpoint gives no token ids), not the model's text, and the environment keeps no text of its own";

function unpaired(file: string | undefined): string {
  return file === undefined
    ? 'no record of the requests to the endpoint was kept'
    : `the requests the endpoint got are in ${file}, but they do not pair one to one with the groups written (the environment dropped groups, or asked more than once per group)`;
}

/** A placeholder group's rollouts (rollouts.ts's shape). */
export function placeholderRollouts(
  scores: readonly number[],
  exchange: WireExchange | undefined,
  file: string | undefined,
): { item: string; prompt: string; completion: string; score: number; placeholder: true }[] {
  const prompt = exchange === undefined ? `(not available: ${PLACEHOLDERS}; ${unpaired(file)}.)` : exchange.prompt ?? renderMessages(exchange.messages ?? []);
  const known = exchange !== undefined && exchange.choices.length === scores.length && scores.every((s) => s === scores[0]);
  const unknown =
    exchange === undefined
      ? `(not available: ${PLACEHOLDERS}; ${unpaired(file)}.)`
      : `(not available: ${PLACEHOLDERS}. The endpoint's ${exchange.choices.length} completions of this prompt are in ${file}, request ${exchange.seq}, but not which of them earned this score.)`;
  return scores.map((score, i) => ({ item: prompt, prompt, completion: known ? exchange.choices[i]! : unknown, score, placeholder: true as const }));
}
