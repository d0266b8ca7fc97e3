/**
 * Scored rollouts read back from what atroposlib writes, in one shape ({item, prompt, completion,
 * score}): `process` groups (JSONL, one group per line: `scores`, and `messages` when
 * include_messages is on), `evaluate` samples (samples.jsonl, one object per item, fields chosen
 * by the environment), and the API's `/latest_example` (one group). Files are streamed: a group
 * line carries every token. A group atroposlib filled with placeholders has no text: its texts
 * are taken from the wire to the endpoint, or said plainly to be unavailable (wireText.ts).
 */
import { createReadStream } from 'node:fs';
import { nodeReadline } from '../../core/onDemand.js';
import { isMissing } from '../../core/files/safePath.js';
import { answered, type WireExchange } from '../inference/wire/exchanges.js';
import { isPlaceholderGroup } from '../inference/wire/placeholders.js';
import { placeholderRollouts, renderMessages } from './wireText.js';

export interface Rollout {
  /** What identifies the item across models: its prompt (or question) and its occurrence. */
  item: string;
  prompt: string;
  completion: string;
  score: number;
  /** atroposlib wrote placeholders for its group: its texts come from the wire, or are said to be unavailable. */
  placeholder?: boolean;
}

/** What the wire to the endpoint carried while a file of groups was written, and where that record is. */
export interface GroupWire {
  exchanges: readonly WireExchange[];
  /** How a rollout's text names the record (a file name or an rl:// URI). */
  file: string;
}

type Message = { role?: unknown; content?: unknown };

const text = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));

function splitConversation(messages: unknown): { prompt: string; completion: string } | undefined {
  if (!Array.isArray(messages) || messages.length === 0) return undefined;
  const list = messages as Message[];
  const last = list[list.length - 1]!;
  const hasAnswer = last.role === 'assistant';
  return { prompt: renderMessages(hasAnswer ? list.slice(0, -1) : list), completion: hasAnswer ? text(last.content) : '' };
}

const NO_MESSAGES = '(no text: the group carries tokens only; the environment ran with include_messages off)';

/** A group's line without its tokens: a file of them stays small in memory. */
interface GroupText {
  scores: unknown;
  messages: unknown;
  placeholder: boolean;
}

const groupText = (group: Record<string, unknown>): GroupText => ({ scores: group.scores, messages: group.messages, placeholder: isPlaceholderGroup(group) });

function rolloutsOf(group: GroupText, wire?: { exchange?: WireExchange; file?: string }): Rollout[] {
  const scores = (Array.isArray(group.scores) ? group.scores : []).filter((s): s is number => typeof s === 'number' && Number.isFinite(s));
  if (group.placeholder) return placeholderRollouts(scores, wire?.exchange, wire?.file);
  const messages = Array.isArray(group.messages) ? group.messages : [];
  return scores.map((score, i) => {
    const conv = splitConversation(messages[i]);
    const prompt = conv?.prompt ?? '';
    return { item: prompt, prompt, completion: conv?.completion ?? NO_MESSAGES, score };
  });
}

/** The rollouts of one group (`/latest_example`). */
export const groupRollouts = (group: Record<string, unknown>): Rollout[] => rolloutsOf(groupText(group));

/**
 * The groups of a `process` file; placeholder groups get their texts from `wire` when its answered
 * requests pair one to one with the groups (one request per group, none dropped).
 */
async function readGroups(path: string, wire: GroupWire | undefined): Promise<Rollout[][] | undefined> {
  const groups: GroupText[] = [];
  if (!(await readJsonlObjects(path, (value) => groups.push(groupText(value))))) return undefined;
  const exchanges = wire ? answered(wire.exchanges) : [];
  const paired = exchanges.length === groups.length;
  return groups.map((g, i) => rolloutsOf(g, { exchange: paired ? exchanges[i] : undefined, file: wire?.file })).filter((g) => g.length > 0);
}

const PROMPT_FIELDS = ['question', 'prompt', 'problem', 'input'];
const COMPLETION_FIELDS = ['response', 'model_response', 'completion', 'output', 'response_after_think'];

/** One `evaluate` sample: its score, and whatever prompt and completion fields the environment wrote. */
export function sampleRollout(sample: Record<string, unknown>): Rollout | undefined {
  const score = typeof sample.score === 'number' ? sample.score : typeof sample.correct === 'boolean' ? Number(sample.correct) : undefined;
  if (score === undefined || !Number.isFinite(score)) return undefined;
  const conv = splitConversation(sample.messages);
  const promptField = PROMPT_FIELDS.find((f) => typeof sample[f] === 'string');
  const completionField = COMPLETION_FIELDS.find((f) => typeof sample[f] === 'string');
  const prompt = promptField ? text(sample[promptField]) : (conv?.prompt ?? '');
  const completion = completionField ? text(sample[completionField]) : (conv?.completion ?? JSON.stringify(sample));
  return { item: prompt, prompt, completion, score };
}

/** Reads a JSONL file line by line; undefined when it does not exist. Lines that are not JSON objects are skipped. */
export async function readJsonlObjects(path: string, each: (value: Record<string, unknown>) => void): Promise<boolean> {
  const stream = createReadStream(path, { encoding: 'utf8' });
  try {
    for await (const line of nodeReadline().createInterface({ input: stream, crlfDelay: Infinity })) {
      if (line.trim() === '') continue;
      try {
        const value: unknown = JSON.parse(line);
        if (typeof value === 'object' && value !== null && !Array.isArray(value)) each(value as Record<string, unknown>);
      } catch {
        // A line cut by a killed process.
      }
    }
    return true;
  } catch (err) {
    if (isMissing(err)) return false;
    throw err;
  } finally {
    stream.destroy();
  }
}

/**
 * The rollouts of a `process` output file (one group per line; `wire`: what its endpoint was sent
 * and answered), an `evaluate` samples.jsonl (one item per line) or our own rollouts file (one
 * rollout per line), grouped by item; undefined when missing.
 */
export async function readRolloutGroups(path: string, kind: 'groups' | 'samples' | 'rollouts', wire?: GroupWire): Promise<Rollout[][] | undefined> {
  if (kind === 'groups') return readGroups(path, wire);
  const out: Rollout[][] = [];
  const found = await readJsonlObjects(path, (value) => {
    if (kind === 'samples') {
      const r = sampleRollout(value);
      if (r) out.push([r]);
    } else if (typeof value.score === 'number') {
      const placeholder = value.placeholder === true ? { placeholder: true } : {};
      out.push([{ item: text(value.item), prompt: text(value.prompt), completion: text(value.completion), score: value.score, ...placeholder }]);
    }
  });
  return found ? out : undefined;
}

export interface ItemScore {
  /** `<item>#<occurrence>`, so a prompt asked twice stays two items. */
  key: string;
  /** The mean score of the item's rollouts. */
  score: number;
}

export function itemScores(groups: readonly (readonly Rollout[])[]): ItemScore[] {
  const seen = new Map<string, number>();
  return groups.map((group) => {
    const item = group[0]!.item;
    const occurrence = seen.get(item) ?? 0;
    seen.set(item, occurrence + 1);
    return { key: `${item}#${occurrence}`, score: group.reduce((a, r) => a + r.score, 0) / group.length };
  });
}
