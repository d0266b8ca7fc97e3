/**
 * The W&B GraphQL transport on the global fetch (no npm package reads W&B runs): one POST per
 * query to {WANDB_BASE_URL}/graphql with Basic auth `api:<key>`, a per-attempt timeout inside the
 * caller's budget, and retries with backoff for what may pass (429, 5xx, network, timeouts).
 */
import type { Logger } from '../../core/logger.js';
import type { CallBudget } from './budget.js';
import { formatSeconds, WandbError } from './errors.js';
import { backoffDelayMs, isRetryableStatus, serverRequestedDelayMs } from './retry.js';

/** A query document and its operation name (the SDK's names, so server logs and fakes match). */
export interface GraphQLDocument {
  operation: string;
  text: string;
}

export interface GraphQLClientOptions {
  endpoint: string;
  apiKey: string;
  fetch: typeof fetch;
  requestTimeoutMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  maxAttempts: number;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  logger: Logger;
}

const USER_AGENT = 'rl-training-mcp (W&B read client)';
const MAX_DETAIL = 300;

/** The error text of a GraphQL/HTTP body, as wandb-core reads it: `error`, else `errors[*].message`. */
function errorMessages(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const messageOf = (e: unknown): string =>
    typeof e === 'string' ? e : e !== null && typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string' ? (e as { message: string }).message : JSON.stringify(e);
  const { error, errors } = body as { error?: unknown; errors?: unknown };
  if (error !== undefined && error !== null) return messageOf(error);
  if (Array.isArray(errors) && errors.length > 0) return errors.map(messageOf).join('; ');
  return undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function clip(text: string): string {
  return text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL)}…` : text;
}

function httpFailure(res: Response, text: string): WandbError {
  const { status } = res;
  const messages = errorMessages(parseJson(text));
  const detail = clip(`HTTP ${status}${messages ? `: ${messages}` : res.statusText ? ` ${res.statusText}` : ''}`);
  const kind = status === 401 ? 'auth' : status === 403 ? 'forbidden' : status === 404 ? 'not_found' : status === 429 ? 'rate_limited' : status >= 500 ? 'server' : 'http';
  return new WandbError(kind, detail, { status, retryable: isRetryableStatus(status), retryAfterMs: serverRequestedDelayMs(status, res.headers) });
}

function socketProblem(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return err instanceof Error ? err.message : String(err);
}

export class GraphQLClient {
  private readonly authorization: string;

  constructor(private readonly opts: GraphQLClientOptions) {
    this.authorization = `Basic ${Buffer.from(`api:${opts.apiKey}`).toString('base64')}`;
  }

  /** The `data` of a successful answer; throws WandbError once retries and budget are used up. */
  async query<T>(doc: GraphQLDocument, variables: Record<string, unknown>, budget: CallBudget): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      let failure: WandbError;
      try {
        return await this.attempt<T>(doc, variables, budget, attempt);
      } catch (err) {
        if (!(err instanceof WandbError)) throw err;
        failure = err;
      }
      failure.attempts = attempt + 1;
      if (!failure.retryable || attempt + 1 >= this.opts.maxAttempts) throw failure;
      const wait = failure.extra.retryAfterMs ?? backoffDelayMs(attempt, this.opts.retryBaseMs, this.opts.retryMaxMs);
      // A wait the budget cannot cover only delays the answer the user gets anyway.
      if (wait >= budget.remainingMs()) throw failure;
      this.opts.logger.debug({ op: doc.operation, kind: failure.kind, attempt: attempt + 1, waitMs: Math.round(wait) }, 'wandb request will be retried');
      try {
        await this.opts.sleep(wait, budget.signal);
      } catch {
        if (budget.cancelled) throw new WandbError('aborted', 'cancelled');
        throw failure;
      }
    }
  }

  private async attempt<T>(doc: GraphQLDocument, variables: Record<string, unknown>, budget: CallBudget, attempt: number): Promise<T> {
    const attemptMs = Math.max(1, Math.min(this.opts.requestTimeoutMs, budget.remainingMs()));
    const attemptTimeout = AbortSignal.timeout(attemptMs);
    const started = Date.now();
    let res: Response;
    let text: string;
    try {
      res = await this.opts.fetch(this.opts.endpoint, {
        method: 'POST',
        headers: {
          authorization: this.authorization,
          'content-type': 'application/json',
          accept: 'application/json',
          'user-agent': USER_AGENT,
        },
        body: JSON.stringify({ query: doc.text, variables }),
        signal: AbortSignal.any([budget.signal, attemptTimeout]),
      });
      text = await res.text();
    } catch (err) {
      if (budget.cancelled) throw new WandbError('aborted', 'cancelled');
      if (budget.spent) throw new WandbError('timeout', `no answer within ${formatSeconds(budget.budgetMs)} in all`);
      if (attemptTimeout.aborted) throw new WandbError('timeout', `no answer within ${formatSeconds(attemptMs)} per request`, { retryable: true });
      throw new WandbError('unreachable', socketProblem(err), { retryable: true });
    }
    this.opts.logger.debug({ op: doc.operation, status: res.status, attempt: attempt + 1, ms: Date.now() - started }, 'wandb request');
    if (!res.ok) throw httpFailure(res, text);
    const body = parseJson(text);
    const messages = errorMessages(body);
    if (messages !== undefined) throw new WandbError('graphql', clip(messages), { status: res.status });
    const data = (body as { data?: unknown } | undefined)?.data;
    if (data === null || typeof data !== 'object') {
      throw new WandbError('bad_response', `HTTP ${res.status}, ${res.headers.get('content-type') ?? 'no content type'}`, { status: res.status });
    }
    return data as T;
  }
}
