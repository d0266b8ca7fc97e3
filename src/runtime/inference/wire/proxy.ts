/**
 * A recording proxy on 127.0.0.1, one per model process, between atroposlib and the model
 * endpoint: every request is forwarded as it came (its Authorization header included, which is
 * never read, logged or stored) and every answer is passed back as it comes (streams stay streams),
 * while a copy of each completion exchange is written to a JSONL file (exchanges.ts). The real text
 * and `usage` exist only there when atroposlib writes placeholders (placeholders.ts). An endpoint
 * that cannot be reached stays unreachable: the connection is dropped, so the client reports the
 * connection error it would report without the proxy.
 */
import { appendFile } from 'node:fs/promises';
import type { Agent as HttpAgent, IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { nodeHttp, nodeHttps } from '../../../core/onDemand.js';
import type { Logger } from '../../../core/logger.js';
import type { SecretRedactor } from '../../../core/redact.js';
import { isCompletionPath, requestFacts, responseFacts, type WireExchange } from './exchanges.js';

/** An answer is kept for recording up to this size; the client always gets all of it. */
const MAX_RECORDED_BYTES = 16 * 1024 * 1024;

/** Headers that belong to one connection, not to the message (RFC 9110 7.6.1), and the host, which is the endpoint's. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host']);

function forwarded(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));
}

export interface WireProxyOptions {
  /** The endpoint's base_url (http or https). */
  upstream: string;
  /** Where the exchanges are appended (0600). */
  recordFile: string;
  redactor: SecretRedactor;
  logger?: Logger;
  /** Called with each completion exchange as it is recorded (what it cost is counted from its usage). */
  onExchange?: (exchange: WireExchange) => void;
}

export interface WireProxy {
  /** The endpoint's base_url as seen through the proxy: http://127.0.0.1:<port><its path>. */
  baseUrl: string;
  /** Stops listening, drops open connections and waits until every exchange is written. */
  close(): Promise<void>;
}

/** The exchanges of one proxy, appended one at a time in the order they finish; a failure to write is logged once. */
class ExchangeLog {
  private writing = Promise.resolve();
  private warned = false;

  constructor(private readonly opts: WireProxyOptions) {}

  add(exchange: WireExchange): void {
    const line = `${this.opts.redactor.redact(JSON.stringify(exchange))}\n`;
    this.writing = this.writing
      .then(() => appendFile(this.opts.recordFile, line, { mode: 0o600 }))
      .catch((err: unknown) => {
        if (!this.warned) this.opts.logger?.warn({ err, file: this.opts.recordFile }, 'could not record an exchange with the model endpoint');
        this.warned = true;
      });
  }

  flushed(): Promise<void> {
    return this.writing;
  }
}

/** Passes the endpoint's answer back as it comes, keeping a copy of a completion's answer for the log. */
function relay(answer: IncomingMessage, res: ServerResponse, onEnd: ((body: Buffer) => void) | undefined): void {
  res.writeHead(answer.statusCode ?? 502, forwarded(answer.headers));
  const kept: Buffer[] = [];
  let keptBytes = 0;
  answer.on('data', (chunk: Buffer) => {
    if (keptBytes < MAX_RECORDED_BYTES) kept.push(chunk);
    keptBytes += chunk.length;
  });
  answer.on('end', () => onEnd?.(Buffer.concat(kept)));
  answer.on('error', () => res.destroy());
  answer.pipe(res);
}

interface Upstream {
  url: URL;
  /** Its own connections, closed with the proxy. */
  agent: HttpAgent;
}

/** Forwards one request to the endpoint and its answer back; a completion exchange goes to `log`. */
async function forward(req: IncomingMessage, res: ServerResponse, { url: upstream, agent }: Upstream, seq: number, log: ExchangeLog, opts: WireProxyOptions): Promise<void> {
  const { logger, onExchange } = opts;
  const at = new Date().toISOString();
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const target = new URL(req.url ?? '/', upstream.origin);
  const recorded = req.method === 'POST' && isCompletionPath(target.pathname);
  // Asked for unencoded, so the copy can be read; a client accepts that whatever it offered.
  const headers = { ...forwarded(req.headers), host: upstream.host, 'accept-encoding': 'identity', 'content-length': String(body.length) };
  const send = upstream.protocol === 'https:' ? nodeHttps().request : nodeHttp().request;
  const out = send(target, { method: req.method, headers, agent }, (answer) => {
    const record = (kept: Buffer): void => {
      const facts = responseFacts(kept, answer.headers['content-type'], answer.headers['content-encoding']);
      const exchange = { seq, at, path: target.pathname, status: answer.statusCode ?? 0, ...requestFacts(body), ...facts };
      log.add(exchange);
      onExchange?.(exchange);
    };
    relay(answer, res, recorded ? record : undefined);
  });
  let clientGone = false;
  out.on('error', (err: NodeJS.ErrnoException) => {
    if (clientGone) return;
    logger?.warn({ code: err.code, endpoint: upstream.origin }, 'recording proxy: the model endpoint could not be reached');
    // Dropped, not answered: the client sees the connection error it would see without the proxy.
    if (res.headersSent) res.destroy();
    else req.socket.destroy();
  });
  res.on('close', () => {
    if (res.writableFinished) return;
    // The client went away (a stopped process): so does its request to the endpoint.
    clientGone = true;
    out.destroy();
  });
  out.end(body);
}

export async function startWireProxy(opts: WireProxyOptions): Promise<WireProxy> {
  const url = new URL(opts.upstream);
  const upstream = { url, agent: url.protocol === 'https:' ? new (nodeHttps().Agent)({ keepAlive: true }) : new (nodeHttp().Agent)({ keepAlive: true }) };
  const log = new ExchangeLog(opts);
  let nextSeq = 0;
  const server = nodeHttp().createServer((req, res) => void forward(req, res, upstream, nextSeq++, log, opts).catch(() => req.socket.destroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${url.pathname.replace(/\/+$/, '')}`,
    close: async () => {
      server.closeAllConnections();
      upstream.agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await log.flushed();
    },
  };
}
