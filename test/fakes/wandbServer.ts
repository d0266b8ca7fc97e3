/**
 * A fake W&B GraphQL server on 127.0.0.1, modelled on W&B's own test backend (wandb/wandb's tests):
 * only `POST /graphql`; Basic auth `api:<key>` (401 `user is not logged in` otherwise, or a null
 * viewer in lenient mode); dispatch by the operation name read with the SDK fake's regex; the
 * document validated against W&B's schema and the answer projected to the selection; runs seeded
 * by the test; fault injection per operation or per nth call; every request recorded.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { GraphQLSyntaxError, parseDocument, project, validate } from './wandb/miniGraphql.js';
import { type FakeRun, FilterError, historyKeysOf, historyLinesOf, pythonJsonDumps, runMatches, type SampleSpec, sampledHistoryOf, sortRuns, summaryOf } from './wandb/model.js';

export type { FakeRun } from './wandb/model.js';

export type Fault =
  | { kind: 'unauthorized' }
  | { kind: 'forbidden'; html?: boolean }
  | { kind: 'notFound' }
  /** 429 `{"error":"rate limit exceeded"}` with RateLimit-* headers and, if given, Retry-After. */
  | { kind: 'rateLimited'; retryAfter?: string; resetSeconds?: number }
  /** 5xx; HTML body unless `html: false` (then a GraphQL errors body). */
  | { kind: 'serverError'; status?: number; html?: boolean }
  | { kind: 'badRequest'; message: string }
  | { kind: 'graphqlErrors'; messages: string[]; data?: unknown }
  | { kind: 'malformed' }
  /** Answer normally, after `ms`. */
  | { kind: 'slow'; ms: number }
  | { kind: 'hang' }
  | { kind: 'reset' };

export interface FaultRule {
  /** Operation name to match; every request when absent. */
  op?: string;
  /** Only the nth matching request (1-based). */
  nth?: number;
  /** How many matching requests get the fault (default 1; Infinity for all). Ignored with `nth`. */
  times?: number;
  fault: Fault;
}

export interface RecordedRequest {
  op?: string;
  variables: Record<string, unknown>;
  headers: IncomingMessage['headers'];
  query: string;
  /** HTTP status answered; undefined for a hang or a reset. */
  status?: number;
}

export interface FakeWandbOptions {
  apiKey: string;
  /** The key's user: its default entity (`viewer.entity`). Default `alice`. */
  viewerEntity?: string | null;
  /** How a wrong key is answered: 401 (default) or, on viewer queries, 200 with `viewer: null`. */
  badKey?: '401' | 'viewer-null';
  /** Every answer waits this long (a realistic round trip for benchmarks). */
  latencyMs?: number;
}

/** The operation name as W&B's test backend reads it: skip whitespace and comments, then `query Name`. */
const OPERATION = /^(?:\s+|#[^\n]*(?:\n|$))*(mutation|query)\s+(\w+)\s*[({]/;

class Answer {
  constructor(
    readonly status: number,
    readonly body: string,
    readonly headers: Record<string, string> = { 'content-type': 'application/json' },
  ) {}

  static json(status: number, body: unknown, headers: Record<string, string> = {}): Answer {
    return new Answer(status, JSON.stringify(body), { 'content-type': 'application/json', ...headers });
  }

  static errors(status: number, messages: string[], data?: unknown): Answer {
    return Answer.json(status, { ...(data !== undefined ? { data } : {}), errors: messages.map((message) => ({ message })) });
  }

  static html(status: number, title: string): Answer {
    return new Answer(status, `<html><head><title>${status} ${title}</title></head><body><center><h1>${status} ${title}</h1></center></body></html>`, { 'content-type': 'text/html' });
  }
}

const HTTP_TITLES: Record<number, string> = { 403: 'Forbidden', 500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout' };

function relayId(...parts: string[]): string {
  return Buffer.from(parts.join(':')).toString('base64');
}

const cursorOf = (index: number): string => Buffer.from(`cursor:${index}`).toString('base64');

function indexOfCursor(cursor: unknown): number {
  if (cursor === undefined || cursor === null) return -1;
  const m = /^cursor:(\d+)$/.exec(Buffer.from(String(cursor), 'base64').toString('utf8'));
  if (!m) throw Answer.errors(200, [`invalid cursor ${JSON.stringify(cursor)}`]);
  return Number(m[1]);
}

interface ProjectData {
  internalId: string;
  runs: FakeRun[];
}

export class FakeWandb {
  readonly requests: RecordedRequest[] = [];
  /** Base URL to give the client as WANDB_BASE_URL, e.g. http://127.0.0.1:5678 */
  url = '';
  private readonly projects = new Map<string, ProjectData>();
  private readonly rules: (FaultRule & { seen: number; applied: number })[] = [];
  private createdCounter = 0;
  private readonly server: Server;

  private constructor(readonly options: FakeWandbOptions) {
    this.server = createServer((req, res) => void this.handle(req, res));
  }

  static async start(options: FakeWandbOptions): Promise<FakeWandb> {
    const fake = new FakeWandb(options);
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    fake.url = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
    return fake;
  }

  /** Creates the project if needed and adds the run; returns the stored run (mutable). */
  addRun(entity: string, projectName: string, run: FakeRun): FakeRun {
    const stored: FakeRun = { ...run, createdAt: run.createdAt ?? new Date(Date.UTC(2026, 0, 1, 0, 0, ++this.createdCounter)).toISOString().slice(0, 19) };
    this.project(entity, projectName).runs.push(stored);
    return stored;
  }

  project(entity: string, projectName: string): ProjectData {
    const key = `${entity}/${projectName}`;
    let data = this.projects.get(key);
    if (!data) this.projects.set(key, (data = { internalId: String(1000 + this.projects.size), runs: [] }));
    return data;
  }

  inject(rule: FaultRule): void {
    this.rules.push({ ...rule, seen: 0, applied: 0 });
  }

  clearFaults(): void {
    this.rules.length = 0;
  }

  /** Requests recorded so far, of one operation when named. */
  count(op?: string): number {
    return this.requests.filter((r) => op === undefined || r.op === op).length;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST' || req.url?.split('?')[0] !== '/graphql') return send(res, Answer.json(404, { error: 'not found' }));
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: { query?: unknown; variables?: unknown };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
    } catch {
      return send(res, Answer.errors(400, ['POST body sent invalid JSON.']));
    }
    const query = typeof body?.query === 'string' ? body.query : '';
    const variables = body?.variables !== null && typeof body?.variables === 'object' ? (body.variables as Record<string, unknown>) : {};
    const record: RecordedRequest = { op: OPERATION.exec(query)?.[2], variables, headers: req.headers, query };
    this.requests.push(record);

    const fault = this.faultFor(record.op);
    if (fault?.kind === 'hang') return;
    if (fault?.kind === 'reset') return void req.socket.destroy();
    if (fault?.kind === 'slow') await delay(fault.ms);
    if (this.options.latencyMs) await delay(this.options.latencyMs);
    const answer = fault && fault.kind !== 'slow' ? faultAnswer(fault) : this.answer(query, record.op, variables, req.headers.authorization);
    record.status = answer.status;
    send(res, answer);
  }

  private faultFor(op: string | undefined): Fault | undefined {
    for (const rule of this.rules) {
      if (rule.op !== undefined && rule.op !== op) continue;
      rule.seen++;
      const applies = rule.nth !== undefined ? rule.seen === rule.nth : rule.applied < (rule.times ?? 1);
      if (applies) {
        rule.applied++;
        return rule.fault;
      }
    }
    return undefined;
  }

  private answer(query: string, op: string | undefined, variables: Record<string, unknown>, authorization: string | undefined): Answer {
    if (!query) return Answer.errors(400, ['Must provide query string.']);
    let doc;
    try {
      doc = parseDocument(query);
    } catch (err) {
      if (err instanceof GraphQLSyntaxError) return Answer.errors(400, [err.message]);
      throw err;
    }
    const authorized = authorization === `Basic ${Buffer.from(`api:${this.options.apiKey}`).toString('base64')}`;
    const isViewerOp = op === 'GetDefaultEntity' || op === 'Viewer';
    if (!authorized && !(isViewerOp && this.options.badKey === 'viewer-null')) return Answer.errors(401, ['user is not logged in']);
    const problems = validate(doc);
    if (problems.length > 0) return Answer.errors(200, problems);
    try {
      const data = authorized ? this.resolve(op, variables) : { viewer: null };
      return Answer.json(200, { data: project(doc, data) });
    } catch (err) {
      if (err instanceof Answer) return err;
      if (err instanceof FilterError) return Answer.errors(400, [`invalid filters: ${err.message}`]);
      throw err;
    }
  }

  /** The full answer of an operation, before projection to the selection. */
  private resolve(op: string | undefined, v: Record<string, unknown>): Record<string, unknown> {
    switch (op) {
      case 'GetDefaultEntity':
      case 'Viewer': {
        const entity = this.options.viewerEntity === undefined ? 'alice' : this.options.viewerEntity;
        return { viewer: { id: relayId('User', '1'), entity, username: entity, name: entity } };
      }
      case 'Runs':
        return { project: this.runsOf(v) };
      case 'Run':
      case 'RunState':
      case 'RunHistoryKeys':
      case 'RunSampledHistory':
      case 'RunFullHistory':
      case 'SampledHistoryPage':
      case 'HistoryPage':
        return { project: this.oneRun(v) };
      default:
        throw Answer.errors(200, [`fake W&B: unsupported operation ${op ?? '(anonymous)'}`]);
    }
  }

  private projectOf(v: Record<string, unknown>): ProjectData | undefined {
    return this.projects.get(`${String(v.entity)}/${String(v.project)}`);
  }

  private runView(v: Record<string, unknown>, data: ProjectData, run: FakeRun): Record<string, unknown> {
    const config = Object.fromEntries(Object.entries(run.config ?? {}).map(([k, value]) => [k, { value, desc: null }]));
    return {
      projectId: data.internalId,
      id: relayId('Run:v1', run.name, String(v.project), String(v.entity)),
      name: run.name,
      displayName: run.displayName ?? run.name,
      state: run.state ?? 'running',
      tags: run.tags ?? [],
      group: run.group ?? null,
      jobType: run.jobType ?? null,
      createdAt: run.createdAt,
      heartbeatAt: run.heartbeatAt ?? run.createdAt,
      readOnly: false,
      config: pythonJsonDumps(config),
      summaryMetrics: pythonJsonDumps(summaryOf(run)),
      systemMetrics: '{}',
      historyKeys: historyKeysOf(run),
      historyLineCount: run.history?.length ?? 0,
      user: run.user ?? { name: 'Alice', username: 'alice' },
    };
  }

  private runsOf(v: Record<string, unknown>): Record<string, unknown> | null {
    const data = this.projectOf(v);
    if (!data) return null;
    if (v.filters !== undefined && v.filters !== null && typeof v.filters !== 'string') {
      throw Answer.errors(400, [`Variable "$filters" got invalid value ${JSON.stringify(v.filters)}; Expected type JSONString.`]);
    }
    let filter: unknown = {};
    if (typeof v.filters === 'string') {
      try {
        filter = JSON.parse(v.filters);
      } catch {
        throw Answer.errors(400, [`Variable "$filters" got invalid value ${JSON.stringify(v.filters)}; not a JSON string.`]);
      }
    }
    const matching = sortRuns(data.runs.filter((run) => runMatches(run, filter)), v.order);
    const start = indexOfCursor(v.cursor) + 1;
    const perPage = typeof v.perPage === 'number' ? v.perPage : 50;
    const page = matching.slice(start, start + perPage);
    const edges = page.map((run, i) => ({ node: this.runView(v, data, run), cursor: cursorOf(start + i) }));
    return {
      internalId: data.internalId,
      readOnly: false,
      runCount: matching.length,
      runs: {
        totalCount: matching.length,
        edges,
        pageInfo: {
          startCursor: edges[0]?.cursor ?? null,
          endCursor: edges.at(-1)?.cursor ?? null,
          hasNextPage: start + page.length < matching.length,
          hasPreviousPage: start > 0,
        },
      },
    };
  }

  private oneRun(v: Record<string, unknown>): Record<string, unknown> | null {
    const data = this.projectOf(v);
    if (!data) return null;
    const name = v.name ?? v.run;
    const run = data.runs.find((r) => r.name === name);
    if (!run) return { internalId: data.internalId, run: null };
    const view = this.runView(v, data, run);
    const specs = v.specs ?? (v.spec !== undefined ? [v.spec] : undefined);
    if (specs !== undefined) view.sampledHistory = parseSpecs(specs).map((spec) => sampledHistoryOf(run, spec));
    if (v.samples !== undefined || v.pageSize !== undefined) view.history = historyLinesOf(run, v.samples ?? v.pageSize, v.minStep, v.maxStep);
    return { internalId: data.internalId, run: view };
  }
}

/** `specs: [JSONString!]!`: a list of JSON *strings*, each with `keys`. */
function parseSpecs(specs: unknown): SampleSpec[] {
  if (!Array.isArray(specs) || !specs.every((s) => typeof s === 'string')) {
    throw Answer.errors(400, [`Variable "$specs" got invalid value ${JSON.stringify(specs)}; Expected type [JSONString!]!.`]);
  }
  return specs.map((text) => {
    let spec: unknown;
    try {
      spec = JSON.parse(text);
    } catch {
      throw Answer.errors(400, [`Variable "$specs" got invalid value ${JSON.stringify(text)}; not a JSON string.`]);
    }
    const keys = (spec as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys) || !keys.every((k) => typeof k === 'string')) throw Answer.errors(200, ['sampledHistory spec needs "keys": [string]']);
    return spec as SampleSpec;
  });
}

function faultAnswer(fault: Exclude<Fault, { kind: 'slow' | 'hang' | 'reset' }>): Answer {
  switch (fault.kind) {
    case 'unauthorized':
      return Answer.errors(401, ['user is not logged in']);
    case 'forbidden':
      return fault.html ? Answer.html(403, HTTP_TITLES[403]!) : Answer.errors(403, ['permission denied']);
    case 'notFound':
      return Answer.errors(404, ['project not found']);
    case 'rateLimited':
      return Answer.json(429, { error: 'rate limit exceeded' }, {
        'ratelimit-limit': '1000',
        'ratelimit-remaining': '0',
        'ratelimit-reset': String(fault.resetSeconds ?? 1),
        ...(fault.retryAfter !== undefined ? { 'retry-after': fault.retryAfter } : {}),
      });
    case 'serverError': {
      const status = fault.status ?? 500;
      return fault.html === false ? Answer.errors(status, ['run not found for history loading']) : Answer.html(status, HTTP_TITLES[status] ?? 'Error');
    }
    case 'badRequest':
      return Answer.errors(400, [fault.message]);
    case 'graphqlErrors':
      return Answer.errors(200, fault.messages, fault.data);
    case 'malformed':
      return new Answer(200, '{"data": {"project": ');
  }
}

function send(res: ServerResponse, answer: Answer): void {
  if (res.destroyed) return;
  res.writeHead(answer.status, answer.headers);
  res.end(answer.body);
}
