/**
 * Tinker's OpenAI-compatible endpoint on 127.0.0.1: `POST {base}/chat/completions` (and
 * `/completions`), authenticated with the Tinker key (401 otherwise, OpenAI's error JSON), serving
 * base models by their Tinker ids and sampler checkpoints `tinker://.../sampler_weights/<name>`
 * (also as `<base model>;<path>`), a checkpoint that was never saved answering 404
 * model_not_found. Each model has a quality: the chance a choice is right, decided by a hash of
 * the question and how many choices this model already gave for it (a sampler asking n=1 n times
 * gets n different draws), so the same item gets the same answers from two models of equal
 * quality, and every run of a test sees the same answers. Responses carry `usage`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { completion, readJson, send, type ChatMessage } from './openaiServer.js';

export interface TinkerOaiOptions {
  apiKey: string;
  /** Base-model ids and their quality (0..1), read at each request. */
  baseModels: Record<string, number>;
  /** A checkpoint path's quality, or undefined when no such checkpoint was saved. */
  checkpoint: (path: string) => number | undefined;
  /** The correct final answer of a conversation (undefined: unknown question). */
  solve: (messages: ChatMessage[]) => string | undefined;
  /** While true, a valid request is taken and never answered (status 0): an endpoint that stalls. */
  stalled?: () => boolean;
  /** The prompt tokens `usage` reports for each request (60 unless set): an environment of long prompts. */
  promptTokens?: number;
}

export interface TinkerRequest {
  path: string;
  model?: string;
  authorized: boolean;
  /** 0: taken and never answered (stalled). */
  status: number;
  /** The last user message: which item was asked. */
  question: string;
  /** What the answer's `usage` reported (answered requests only). */
  usage?: { prompt_tokens: number; completion_tokens: number };
}

export interface FakeTinkerOai {
  baseUrl: string;
  requests: TinkerRequest[];
  /** Questions a model answered (status 200), in order. */
  questionsOf(model: string): string[];
  close(): Promise<void>;
}

/** FNV-1a of a string with murmur3's finalizer (texts differing in their last character land far apart), as a fraction in [0, 1). */
function unitHash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}

const openAiError = (message: string, type: string, code: string) => ({ error: { message, type, param: null, code } });

export async function startFakeTinkerOai(opts: TinkerOaiOptions): Promise<FakeTinkerOai> {
  const requests: TinkerRequest[] = [];
  const drawn = new Map<string, number>();
  const quality = (model: string): number | undefined => {
    const path = model.includes(';tinker://') ? model.slice(model.indexOf(';') + 1) : model;
    return path.startsWith('tinker://') ? opts.checkpoint(path) : opts.baseModels[model];
  };
  const server = createServer((req, res) => {
    void (async () => {
      const path = (req.url ?? '').split('?')[0]!;
      const body = await readJson(req);
      const messages = Array.isArray(body.messages) ? (body.messages as ChatMessage[]) : [{ role: 'user', content: String(body.prompt ?? '') }];
      const question = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
      const model = typeof body.model === 'string' ? body.model : undefined;
      const authorized = req.headers.authorization === `Bearer ${opts.apiKey}`;
      const record = (status: number): void => void requests.push({ path, model, authorized, status, question });
      const chat = path === '/v1/chat/completions';
      if (req.method !== 'POST' || (!chat && path !== '/v1/completions')) {
        record(404);
        return send(res, 404, openAiError(`Unknown route ${req.method} ${path}`, 'invalid_request_error', 'not_found'));
      }
      if (!authorized) {
        record(401);
        return send(res, 401, openAiError('Invalid API key', 'invalid_request_error', 'invalid_api_key'));
      }
      const q = model === undefined ? undefined : quality(model);
      if (q === undefined) {
        record(404);
        return send(res, 404, openAiError(`The model \`${model}\` does not exist or you do not have access to it.`, 'invalid_request_error', 'model_not_found'));
      }
      if (opts.stalled?.()) return record(0);
      const n = typeof body.n === 'number' && body.n > 0 ? body.n : 1;
      const prompt = opts.promptTokens ?? 60;
      const usage = { prompt_tokens: prompt, completion_tokens: 30 * n, total_tokens: prompt + 30 * n };
      requests.push({ path, model, authorized, status: 200, question, usage: { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens } });
      const answer = opts.solve(messages);
      const first = drawn.get(`${model}\n${question}`) ?? 0;
      drawn.set(`${model}\n${question}`, first + n);
      const texts = Array.from({ length: n }, (_, i) => completion(unitHash(`${question}#${first + i}`) < q, answer));
      const created = Math.floor(Date.now() / 1000);
      if (!chat) return send(res, 200, { id: `cmpl-${requests.length}`, object: 'text_completion', created, model, choices: texts.map((text, index) => ({ index, text, finish_reason: 'stop' })), usage });
      send(res, 200, {
        id: `chatcmpl-${requests.length}`,
        object: 'chat.completion',
        created,
        model,
        choices: texts.map((content, index) => ({ index, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null })),
        usage,
      });
    })().catch(() => send(res, 500, openAiError('fake endpoint error', 'server_error', 'internal_error')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    questionsOf: (model) => requests.filter((r) => r.model === model && r.status === 200).map((r) => r.question),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
