/**
 * A client that declares the tasks extension (`io.modelcontextprotocol/tasks`) the way a host does:
 * the SDK Client speaking 2026-07-28 to the built server, driven by `@modelcontextprotocol/ext-tasks`'
 * task session (it sends tools/call with the extension declared on the request, polls tasks/get,
 * sends tasks/cancel). The SDK Client's codec refuses that traffic (a `resultType: "task"` result,
 * tasks/* methods), so the session sends it through a raw request path: this transport wrapper
 * writes those requests itself and takes their answers before the Client would see them.
 */
import { Client, type JSONRPCMessage, type Transport, type TransportSendOptions } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createTaskSessionFromClient, type RawClientDispatch, type TaskEnabledSession } from '@modelcontextprotocol/ext-tasks/client';
import { closedAfterFile } from './client.js';
import { DIST_ENTRY, testEnv } from './tmp.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

type Raw = { id?: string | number; method?: string; result?: unknown; error?: { code: number; message: string; data?: unknown } };

/** Passes everything through, but the answers to the raw requests it sent (ids "raw-N"). */
export class RawRequests implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private next = 0;
  private readonly waiting = new Map<string, (message: Raw) => void>();

  constructor(readonly inner: StdioClientTransport) {}

  async start(): Promise<void> {
    this.inner.onmessage = (message: JSONRPCMessage) => {
      const raw = message as Raw;
      const waiter = typeof raw.id === 'string' && raw.method === undefined ? this.waiting.get(raw.id) : undefined;
      if (waiter === undefined) return this.onmessage?.(message);
      this.waiting.delete(raw.id as string);
      waiter(raw);
    };
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (error) => this.onerror?.(error);
    await this.inner.start();
  }

  send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** A request of our own, answered as a result or an error. */
  request(body: { method: string; params?: Record<string, unknown> }): Promise<Raw> {
    const id = `raw-${++this.next}`;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      void this.inner.send({ jsonrpc: '2.0', id, ...body } as JSONRPCMessage);
    });
  }

  readonly dispatch: RawClientDispatch = async (request) => {
    const answer = await this.request(request as { method: string });
    return answer.error !== undefined ? { kind: 'error', error: answer.error as never } : { kind: 'result', result: answer.result as never };
  };
}

export interface TaskClient {
  client: Client;
  raw: RawRequests;
  session: TaskEnabledSession;
  /** The envelope a 2026-07-28 request carries, with or without the tasks extension declared. */
  envelope(declareTasks: boolean): Record<string, unknown>;
  close(): Promise<void>;
}

export async function connectTaskClient(env: Record<string, string | undefined>): Promise<TaskClient> {
  const clientInfo = { name: 'task-client', version: '0.0.0' };
  const capabilities = { extensions: { [TASKS_EXTENSION]: {} } };
  const client = new Client(clientInfo, { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities });
  const raw = new RawRequests(new StdioClientTransport({ command: process.execPath, args: [DIST_ENTRY], env: testEnv(env), stderr: 'ignore' }));
  await client.connect(raw);
  const session = createTaskSessionFromClient(client, {
    endpointId: 'rl-training-mcp',
    rawDispatch: raw.dispatch,
    v2RequestFraming: { protocolVersion: '2026-07-28', clientInfo, clientCapabilities: capabilities },
  });
  const close = closedAfterFile(async () => {
    await session.close();
    await client.close();
  });
  const envelope = (declareTasks: boolean): Record<string, unknown> => ({
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': clientInfo,
    'io.modelcontextprotocol/clientCapabilities': declareTasks ? capabilities : {},
  });
  return { client, raw, session, envelope, close };
}
