/**
 * An OpenAI-compatible chat-completions endpoint on 127.0.0.1 for inference tests: checks the
 * bearer key like OpenRouter (401 otherwise), answers each model by its configured behaviour
 * (right, wrong, half right, failing with 500, hanging), optionally after a delay or until a
 * promise settles, honours `n`, and records every request.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ChatMessage = { role: string; content: string };

export interface ModelBehaviour {
  /** right: every choice correct; wrong: none; half: even choices correct; empty: empty contents; fail: HTTP 500; hang: never answers. */
  mode: 'right' | 'wrong' | 'half' | 'empty' | 'fail' | 'hang';
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
}

export interface FakeOpenAIOptions {
  apiKey: string;
  models: Record<string, ModelBehaviour>;
  /** The correct final answer text for a conversation (undefined: the question is unknown). */
  solve: (messages: ChatMessage[]) => string | undefined;
  /** Path prefix of the API (default /v1). */
  basePath?: string;
}

export interface FakeOpenAI {
  /** The base_url to give clients, e.g. http://127.0.0.1:1234/v1 */
  baseUrl: string;
  requests: RecordedRequest[];
  /** Requests that reached a model (authorized, known model). */
  requestsFor(model: string): RecordedRequest[];
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
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
function completion(correct: boolean, answer: string | undefined): string {
  const value = answer === undefined ? 'unknown' : correct ? answer : String(Number(answer) + 7);
  return `Let me work through this step by step.\nAfter computing each part, the result follows.\n\\boxed{${value}}`;
}

export async function startFakeOpenAI(opts: FakeOpenAIOptions): Promise<FakeOpenAI> {
  const basePath = (opts.basePath ?? '/v1').replace(/\/+$/, '');
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const path = (req.url ?? '').split('?')[0]!;
      const body = await readJson(req);
      const authorized = req.headers.authorization === `Bearer ${opts.apiKey}`;
      const messages = Array.isArray(body.messages) ? (body.messages as ChatMessage[]) : [];
      const model = typeof body.model === 'string' ? body.model : undefined;
      const n = typeof body.n === 'number' && body.n > 0 ? body.n : 1;
      requests.push({ path, model, n, authorized, messages });
      if (req.method !== 'POST' || path !== `${basePath}/chat/completions`) {
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
      const choices = Array.from({ length: n }, (_, index) => ({
        index,
        message: {
          role: 'assistant',
          content: behaviour.mode === 'empty' ? '' : completion(behaviour.mode === 'right' || (behaviour.mode === 'half' && index % 2 === 0), answer),
        },
        finish_reason: 'stop',
        logprobs: null,
      }));
      send(res, 200, {
        id: `chatcmpl-${requests.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model,
        choices,
        usage: { prompt_tokens: 50, completion_tokens: 30 * n, total_tokens: 50 + 30 * n },
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
