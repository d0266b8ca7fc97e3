/**
 * One request to a model endpoint and its answer, as the recording proxy (proxy.ts) saw them on the
 * wire: the messages sent, each choice's text and the endpoint's `usage`, never a header. Plain
 * JSON answers and server-sent event streams are both read. A model's exchanges are one JSONL file
 * beside its output (`<n>-<model>.wire.jsonl`), one line per request, in the order they finished.
 */
import { readFile } from 'node:fs/promises';
import { isMissing } from '../../../core/files/safePath.js';
import { nodeZlib } from '../../../core/onDemand.js';

export interface WireMessage {
  role: string;
  content: string;
}

export interface WireUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface WireExchange {
  /** The order the requests arrived in: 0, 1, ... */
  seq: number;
  /** When the request arrived (ISO). */
  at: string;
  path: string;
  status: number;
  stream: boolean;
  model?: string;
  n?: number;
  /** The chat messages sent, or (a text completion) its prompt. */
  messages?: WireMessage[];
  prompt?: string;
  /** Each choice's text, by its index. */
  choices: string[];
  usage?: WireUsage;
}

const COMPLETION_PATH = /\/(?:chat\/)?completions$/;

/** The requests worth recording: chat and text completions (what the endpoint bills). */
export const isCompletionPath = (path: string): boolean => COMPLETION_PATH.test(path);

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function parseObject(text: string): Json | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** A message's content as text: a string, or the text parts of a list of parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : '')).join('');
}

/** What a request says: its model, n, messages or prompt, and whether it asked for a stream. */
export function requestFacts(body: Buffer): Pick<WireExchange, 'model' | 'n' | 'messages' | 'prompt' | 'stream'> {
  const json = parseObject(body.toString('utf8')) ?? {};
  const messages = Array.isArray(json.messages) ? json.messages.filter(isObject).map((m) => ({ role: String(m.role ?? ''), content: contentText(m.content) })) : undefined;
  return {
    stream: json.stream === true,
    ...(typeof json.model === 'string' ? { model: json.model } : {}),
    ...(typeof json.n === 'number' ? { n: json.n } : {}),
    ...(messages ? { messages } : {}),
    ...(typeof json.prompt === 'string' ? { prompt: json.prompt } : {}),
  };
}

function usageOf(value: unknown): WireUsage | undefined {
  if (!isObject(value) || typeof value.prompt_tokens !== 'number' || typeof value.completion_tokens !== 'number') return undefined;
  return { prompt_tokens: value.prompt_tokens, completion_tokens: value.completion_tokens };
}

/** Adds one answer object's (or one stream chunk's) choices to `texts`, by index. */
function addChoices(texts: string[], json: Json): void {
  if (!Array.isArray(json.choices)) return;
  json.choices.filter(isObject).forEach((choice, i) => {
    const index = typeof choice.index === 'number' ? choice.index : i;
    const part = isObject(choice.message) ? choice.message.content : isObject(choice.delta) ? choice.delta.content : choice.text;
    texts[index] = (texts[index] ?? '') + contentText(part);
  });
}

function decoded(body: Buffer, encoding: string | undefined): Buffer | undefined {
  try {
    if (!encoding || encoding === 'identity') return body;
    if (encoding === 'gzip' || encoding === 'x-gzip') return nodeZlib().gunzipSync(body);
    if (encoding === 'deflate') return nodeZlib().inflateSync(body);
    if (encoding === 'br') return nodeZlib().brotliDecompressSync(body);
  } catch {
    // A body cut at the recording limit, or not what it claims to be.
  }
  return undefined;
}

/** The choices' texts and the usage of an answer: one JSON object, or server-sent events (`data:` lines). */
export function responseFacts(body: Buffer, contentType: string | undefined, contentEncoding: string | undefined): Pick<WireExchange, 'choices' | 'usage'> {
  const text = decoded(body, contentEncoding?.toLowerCase())?.toString('utf8') ?? '';
  const texts: string[] = [];
  let usage: WireUsage | undefined;
  const objects = contentType?.includes('text/event-stream')
    ? text.split('\n').flatMap((line) => (line.startsWith('data:') ? [parseObject(line.slice(5).trim())] : []))
    : [parseObject(text)];
  for (const json of objects) {
    if (json === undefined) continue;
    addChoices(texts, json);
    usage = usageOf(json.usage) ?? usage;
  }
  return { choices: Array.from(texts, (t) => t ?? ''), ...(usage ? { usage } : {}) };
}

/** A model's exchanges in the order their requests arrived; none when nothing was recorded. */
export async function readExchanges(file: string): Promise<WireExchange[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if (isMissing(err)) return [];
    throw err;
  }
  const exchanges = text.split('\n').flatMap((line) => {
    const json = parseObject(line);
    return json !== undefined && typeof json.seq === 'number' && Array.isArray(json.choices) ? [json as unknown as WireExchange] : [];
  });
  return exchanges.sort((a, b) => a.seq - b.seq);
}

/** The exchanges the endpoint answered with completions: the ones a rollout can come from. */
export const answered = (exchanges: readonly WireExchange[]): WireExchange[] => exchanges.filter((e) => e.status === 200 && e.choices.length > 0);

/** The prompt of an exchange as characters: what a tokenizer would count when the endpoint gave no usage. */
export function promptChars(exchange: WireExchange): number {
  return (exchange.messages ?? []).reduce((n, m) => n + m.content.length, 0) + (exchange.prompt?.length ?? 0);
}
