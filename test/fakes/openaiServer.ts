/**
 * An OpenAI-compatible chat-completions endpoint on 127.0.0.1 for inference tests: checks the
 * bearer key like OpenRouter (401 otherwise), answers each model by its configured behaviour
 * (right, wrong, half right, failing with 500, hanging), optionally after a delay or until a
 * promise settles, honours `n` and `stream` (server-sent events, `usage` in a last chunk when
 * `stream_options.include_usage`), counts `usage` from the texts as an endpoint's tokenizer would,
 * and records every request. With `sglangModel` it also serves SGLang's native `POST /generate`
 * (what atroposlib's `sglang` server type posts to), as that model.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ChatMessage = { role: string; content: string };

export interface ModelBehaviour {
  /**
   * right: every choice correct; wrong: none; half: even choices correct; empty: empty contents;
   * half-empty: even choices correct, odd ones empty; fail: HTTP 500; hang: never answers.
   */
  mode: 'right' | 'wrong' | 'half' | 'empty' | 'half-empty' | 'fail' | 'hang';
  /** Answer after this many milliseconds. */
  delayMs?: number;
  /** Answer only once this settles (lets a test hold a model "running" as long as it needs). */
  holdUntil?: Promise<unknown>;
}

export interface RecordedRequest {
  path: string;
  model?: string;
  n: number;
  authorized: boolean;
  messages: ChatMessage[];
  /** What a chat completion answered as its `usage`. */
  usage?: Usage;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** Tokens as this endpoint counts them: 4 characters a token, plus 4 per message of the prompt. */
export function usageOf(messages: ChatMessage[], texts: string[]): Usage {
  const prompt = messages.reduce((n, m) => n + Math.ceil(String(m.content).length / 4) + 4, 0);
  const completion = texts.reduce((n, t) => n + Math.ceil(t.length / 4) + 1, 0);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** A chat completion as server-sent events: each choice's text in two deltas, then its finish, then `usage` when asked for. */
function sendStream(res: ServerResponse, id: string, model: string | undefined, texts: string[], usage: Usage | undefined): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const event = (choices: unknown[], extra: Record<string, unknown> = {}): void => void res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', model, choices, ...extra })}\n\n`);
  texts.forEach((text, index) => {
    const half = Math.ceil(text.length / 2);
    event([{ index, delta: { role: 'assistant', content: text.slice(0, half) }, finish_reason: null }]);
    event([{ index, delta: { content: text.slice(half) }, finish_reason: null }]);
    event([{ index, delta: {}, finish_reason: 'stop' }]);
  });
  if (usage) event([], { usage });
  res.end('data: [DONE]\n\n');
}

export interface FakeOpenAIOptions {
  apiKey: string;
  models: Record<string, ModelBehaviour>;
  /** The correct final answer text for a conversation (undefined: the question is unknown). */
  solve: (messages: ChatMessage[]) => string | undefined;
  /** Path prefix of the API (default /v1). */
  basePath?: string;
  /**
   * The model `POST /generate` answers as (an SGLang server serves one model, and the request names
   * none); without it /generate is not served.
   */
  sglangModel?: string;
}

export interface FakeOpenAI {
  /** The base_url to give clients, e.g. http://127.0.0.1:1234/v1 */
  baseUrl: string;
  requests: RecordedRequest[];
  /** Requests that reached a model (authorized, known model). */
  requestsFor(model: string): RecordedRequest[];
  close(): Promise<void>;
}

export function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The completion text: worked steps and the final answer in \boxed{}, as a math model writes it. */
export function completion(correct: boolean, answer: string | undefined): string {
  const value = answer === undefined ? 'unknown' : correct ? answer : String(Number(answer) + 7);
  return `Let me work through this step by step.\nAfter computing each part, the result follows.\n\\boxed{${value}}`;
}

/** Choice `index` of a model in `mode` (one that answers). */
function choiceText(mode: ModelBehaviour['mode'], index: number, answer: string | undefined): string {
  if (mode === 'empty' || (mode === 'half-empty' && index % 2 === 1)) return '';
  return completion(mode === 'right' || mode === 'half-empty' || (mode === 'half' && index % 2 === 0), answer);
}

/**
 * Token ids as the environments' stand-in tokenizer makes them (test/fakes/python/atroposlib/utils/
 * tokenizer.py): one per character (its code point), ChatML specials from U+110000 on.
 */
const SPECIAL_TOKENS = ['<|im_start|>', '<|im_end|>', '<|endoftext|>'];
const FIRST_SPECIAL_ID = 0x110000;
const IM_END_ID = FIRST_SPECIAL_ID + 1;

function decodeChat(ids: unknown): ChatMessage[] {
  if (!Array.isArray(ids)) return [];
  const text = ids.map((id: number) => (id >= FIRST_SPECIAL_ID ? (SPECIAL_TOKENS[id - FIRST_SPECIAL_ID] ?? '') : String.fromCodePoint(id))).join('');
  return [...text.matchAll(/<\|im_start\|>(\w+)\n([\s\S]*?)<\|im_end\|>/g)].map((m) => ({ role: m[1]!, content: m[2]! }));
}

/** SGLang's answer to one sample: the text, and (logprob, token id, text) per generated token. */
function generated(text: string, promptTokens: number) {
  const ids = [...[...text].map((char) => char.codePointAt(0)!), IM_END_ID];
  return {
    text,
    meta_info: {
      prompt_tokens: promptTokens,
      completion_tokens: ids.length,
      finish_reason: { type: 'stop' },
      output_token_logprobs: ids.map((id) => [-0.25, id, null]),
    },
  };
}

export async function startFakeOpenAI(opts: FakeOpenAIOptions): Promise<FakeOpenAI> {
  const basePath = (opts.basePath ?? '/v1').replace(/\/+$/, '');
  const generatePath = `${basePath.replace('/v1', '')}/generate`;
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const path = (req.url ?? '').split('?')[0]!;
      const body = await readJson(req);
      const isGenerate = req.method === 'POST' && path === generatePath && opts.sglangModel !== undefined;
      const authorized = req.headers.authorization === `Bearer ${opts.apiKey}`;
      const messages = isGenerate ? decodeChat(body.input_ids) : Array.isArray(body.messages) ? (body.messages as ChatMessage[]) : [];
      const model = isGenerate ? opts.sglangModel : typeof body.model === 'string' ? body.model : undefined;
      const params = (isGenerate ? body.sampling_params : body) as Record<string, unknown> | undefined;
      const n = typeof params?.n === 'number' && params.n > 0 ? params.n : 1;
      const recorded: RecordedRequest = { path, model, n, authorized, messages };
      requests.push(recorded);
      if (!isGenerate && (req.method !== 'POST' || path !== `${basePath}/chat/completions`)) {
        return send(res, 404, { error: { message: `No route ${req.method} ${path}`, code: 404 } });
      }
      if (!authorized) return send(res, 401, { error: { message: 'No auth credentials found', code: 401 } });
      const behaviour = model === undefined ? undefined : opts.models[model];
      if (!behaviour) return send(res, 404, { error: { message: `${model} is not a valid model ID`, code: 404 } });
      if (behaviour.mode === 'hang') return; // the socket stays open until the client or close() ends it
      if (behaviour.holdUntil) await behaviour.holdUntil;
      if (behaviour.delayMs) await new Promise((r) => setTimeout(r, behaviour.delayMs));
      if (behaviour.mode === 'fail') return send(res, 500, { error: { message: 'Internal server error', type: 'server_error', code: 500 } });
      const answer = opts.solve(messages);
      const texts = Array.from({ length: n }, (_, index) => choiceText(behaviour.mode, index, answer));
      if (isGenerate) {
        const promptTokens = Array.isArray(body.input_ids) ? body.input_ids.length : 0;
        const samples = texts.map((text) => generated(text, promptTokens));
        return send(res, 200, n === 1 ? samples[0] : samples);
      }
      const usage = usageOf(messages, texts);
      recorded.usage = usage;
      const id = `chatcmpl-${requests.length}`;
      if (body.stream === true) {
        const withUsage = (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
        return sendStream(res, id, model, texts, withUsage ? usage : undefined);
      }
      send(res, 200, {
        id,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model,
        choices: texts.map((content, index) => ({ index, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null })),
        usage,
      });
    })().catch(() => send(res, 500, { error: { message: 'fake endpoint error' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${basePath}`,
    requests,
    requestsFor: (model) => requests.filter((r) => r.authorized && r.model === model),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
