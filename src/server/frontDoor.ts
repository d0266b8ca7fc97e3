/**
 * The first moments of a stdio session, before the SDK is loaded. Most of a start is the SDK's
 * module evaluation, while a client's first two requests, initialize and tools/list (2025), or
 * server/discover and tools/list (2026-07-28), have answers the build recorded (prebuilt.ts). The
 * front door reads stdin, answers those two, and asks for
 * the server as soon as anything else arrives, the tool list was sent, or SERVER_AT_THE_LATEST_MS
 * passed (the server supervises runs: it must come up even for a client that stays silent). Then
 * it hands over: every
 * byte it read is replayed, in order, to the SDK's transport, so the SDK sees the whole session
 * from its first message (the client's capabilities included); the SDK's own answers to requests
 * already answered are dropped, each checked against the one that was sent.
 * Anything it does not recognise exactly (a malformed line, an initialize the SDK would refuse, a
 * second initialize) is left to the SDK. No SDK import: this runs before the SDK is loaded.
 */
import { PassThrough, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { isDeepStrictEqual } from 'node:util';
import type { ClientCapabilities, InitializeResult, Tool } from '@modelcontextprotocol/server';

/** What the front door answers with; none (the sources run by tsx, a stale build) sends everything to the SDK. */
export interface EarlyAnswers {
  initialize(requestedVersion: string): InitializeResult;
  tools(capabilities: ClientCapabilities): Tool[];
  /** 2026-07-28 openings, when recorded: the versions, the server/discover answer, and a tools/list answer's fields beside `tools`. */
  modern?: { versions: string[]; discover: Record<string, unknown>; list: Record<string, unknown> };
}

/** An early answer beside the SDK's own to the same request: different means the recorded answers are stale. */
export interface AnswerCheck {
  id: string | number;
  same: boolean;
  sent: unknown;
  sdk: unknown;
}

/** The server is asked for this long after the start at the latest. */
export const SERVER_AT_THE_LATEST_MS = 300;

type Id = string | number;
type Message = Record<string, unknown>;

const isObject = (v: unknown): v is Message => typeof v === 'object' && v !== null && !Array.isArray(v);
const isId = (v: unknown): v is Id => typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v));

/** The initialize params the SDK accepts, in the parts the answer depends on. */
function initializeParams(params: unknown): { protocolVersion: string; capabilities: ClientCapabilities } | undefined {
  if (!isObject(params) || typeof params.protocolVersion !== 'string' || !isObject(params.capabilities)) return undefined;
  const info = params.clientInfo;
  if (!isObject(info) || typeof info.name !== 'string' || typeof info.version !== 'string') return undefined;
  return { protocolVersion: params.protocolVersion, capabilities: params.capabilities as ClientCapabilities };
}

/** A tools/list the SDK accepts: no params, or params with at most a string cursor. */
const isToolsListParams = (params: unknown): boolean => params === undefined || (isObject(params) && (params.cursor === undefined || typeof params.cursor === 'string'));

/** The reserved `_meta` keys of a 2026-07-28 request (the specification's names; no SDK import here). */
const ENVELOPE = { version: 'io.modelcontextprotocol/protocolVersion', info: 'io.modelcontextprotocol/clientInfo', capabilities: 'io.modelcontextprotocol/clientCapabilities' };
const ENVELOPE_KEYS = new Set(Object.values(ENVELOPE));

/**
 * A 2026-07-28 request's envelope in the parts the answers depend on: its version and the client's
 * capabilities. Anything beyond the plain case (another reserved key such as a log level, a
 * malformed clientInfo, params beside `_meta` and a cursor) is left to the SDK.
 */
function modernEnvelope(params: unknown, allowCursor: boolean): { version: string; capabilities: ClientCapabilities } | undefined {
  if (!isObject(params) || !isObject(params._meta)) return undefined;
  if (Object.keys(params).some((key) => key !== '_meta' && !(allowCursor && key === 'cursor' && typeof params.cursor === 'string'))) return undefined;
  const meta = params._meta;
  if (Object.keys(meta).some((key) => key.startsWith('io.modelcontextprotocol/') && !ENVELOPE_KEYS.has(key))) return undefined;
  const [version, capabilities, info] = [meta[ENVELOPE.version], meta[ENVELOPE.capabilities], meta[ENVELOPE.info]];
  if (typeof version !== 'string' || !isObject(capabilities)) return undefined;
  if (info !== undefined && !(isObject(info) && typeof info.name === 'string' && typeof info.version === 'string')) return undefined;
  return { version, capabilities: capabilities as ClientCapabilities };
}

export class StdioFrontDoor {
  /** Every chunk read before the hand-over, replayed to the SDK then. */
  private readonly read: Buffer[] = [];
  private readonly decoder = new StringDecoder('utf8');
  private partial = '';
  /** The capabilities a 2025 client declared at initialize. */
  private client?: ClientCapabilities;
  /** The version a 2026-07-28 client opened with (server/discover). */
  private modern?: string;
  /** The results sent, by request id, until the SDK's answer to the same request is dropped. */
  private readonly sent = new Map<Id, unknown>();
  private requested = false;
  private ended = false;
  private replay?: PassThrough;
  private readonly endListeners: Array<() => void> = [];
  private want!: () => void;
  private readonly latest: NodeJS.Timeout;
  /** Resolves when the server is needed: a message the front door does not answer, the tool list sent, or stdin closed. */
  readonly serverWanted = new Promise<void>((resolve) => (this.want = resolve));

  constructor(
    input: NodeJS.ReadableStream,
    private readonly output: NodeJS.WritableStream,
    private readonly answers: EarlyAnswers | undefined,
  ) {
    input.on('data', (chunk: Buffer) => this.onData(chunk));
    const onEnd = (): void => {
      if (this.ended) return;
      this.ended = true;
      this.replay?.end();
      this.requestServer();
      for (const listener of this.endListeners.splice(0)) listener();
    };
    input.on('end', onEnd);
    input.on('close', onEnd);
    this.latest = setTimeout(() => this.requestServer(), SERVER_AT_THE_LATEST_MS);
    if (answers === undefined) this.requestServer();
  }

  /** Calls `listener` once stdin has ended (at once when it already has). */
  onInputEnd(listener: () => void): void {
    if (this.ended) listener();
    else this.endListeners.push(listener);
  }

  /**
   * Hands the session to the SDK's transport: the input replays everything read so far, then
   * carries stdin on; the output drops the SDK's answers to the requests answered here.
   */
  handOver(onChecked: (check: AnswerCheck) => void): { input: PassThrough; output: Writable } {
    const input = new PassThrough();
    for (const chunk of this.read.splice(0)) input.write(chunk);
    if (this.ended) input.end();
    this.replay = input;
    const output = new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        if (this.dropped(chunk, onChecked)) return done();
        if (this.output.write(chunk)) done();
        else this.output.once('drain', () => done());
      },
    });
    return { input, output };
  }

  private dropped(chunk: Buffer, onChecked: (check: AnswerCheck) => void): boolean {
    if (this.sent.size === 0) return false;
    let message: unknown;
    try {
      message = JSON.parse(chunk.toString('utf8'));
    } catch {
      return false;
    }
    if (!isObject(message) || !isId(message.id) || !this.sent.has(message.id) || 'method' in message) return false;
    const sent = this.sent.get(message.id);
    this.sent.delete(message.id);
    const sdk = 'result' in message ? message.result : message;
    onChecked({ id: message.id, same: isDeepStrictEqual(JSON.parse(JSON.stringify(sent)), sdk), sent, sdk });
    return true;
  }

  private onData(chunk: Buffer): void {
    if (this.replay !== undefined) {
      this.replay.write(chunk);
      return;
    }
    this.read.push(chunk);
    if (this.requested) return;
    this.partial += this.decoder.write(chunk);
    for (let nl = this.partial.indexOf('\n'); nl !== -1 && !this.requested; nl = this.partial.indexOf('\n')) {
      const line = this.partial.slice(0, nl).replace(/\r$/, '');
      this.partial = this.partial.slice(nl + 1);
      if (!this.answer(line)) this.requestServer();
    }
  }

  /** Answers `line` when it is one of the requests answered here; false leaves it to the SDK. */
  private answer(line: string): boolean {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return false;
    }
    if (!isObject(message) || message.jsonrpc !== '2.0') return false;
    if (message.method === 'notifications/initialized' && !('id' in message)) return true;
    if (!isId(message.id) || this.sent.has(message.id)) return false;
    if (message.method === 'server/discover' && this.client === undefined && this.modern === undefined) return this.discover(message.id, message.params);
    if (message.method === 'tools/list' && this.modern !== undefined) return this.modernList(message.id, message.params);
    if (message.method === 'initialize' && this.client === undefined && this.modern === undefined) {
      const params = initializeParams(message.params);
      if (params === undefined) return false;
      this.client = params.capabilities;
      this.send(message.id, this.answers!.initialize(params.protocolVersion));
      return true;
    }
    if (message.method === 'tools/list' && this.client !== undefined && isToolsListParams(message.params)) {
      this.send(message.id, { tools: this.answers!.tools(this.client) });
      // The client has what it asked for at start: load the server while it reads the list.
      setImmediate(() => this.requestServer());
      return true;
    }
    return false;
  }

  private discover(id: Id, params: unknown): boolean {
    const envelope = modernEnvelope(params, false);
    const modern = this.answers!.modern;
    if (envelope === undefined || modern === undefined || !modern.versions.includes(envelope.version)) return false;
    this.modern = envelope.version;
    this.send(id, modern.discover);
    return true;
  }

  private modernList(id: Id, params: unknown): boolean {
    const envelope = modernEnvelope(params, true);
    if (envelope === undefined || envelope.version !== this.modern) return false;
    this.send(id, { tools: this.answers!.tools(envelope.capabilities), ...this.answers!.modern!.list });
    setImmediate(() => this.requestServer());
    return true;
  }

  private send(id: Id, result: unknown): void {
    this.sent.set(id, result);
    this.output.write(`${JSON.stringify({ result, jsonrpc: '2.0', id })}\n`);
  }

  private requestServer(): void {
    if (this.requested) return;
    this.requested = true;
    clearTimeout(this.latest);
    this.want();
  }
}
