/**
 * Talks to the server the way a client does: the SDK Client over the in-memory transport (with
 * the runtime at hand for assertions; 2025 protocol only), or over stdio against the built
 * dist/index.js, speaking the protocol version asked for.
 */
import assert from 'node:assert/strict';
import { Client, InMemoryTransport, type CallToolRequestOptions, type CallToolResult, type ClientCapabilities, type ClientOptions } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { after } from 'node:test';
import { Runtime } from '../../src/runtime/wiring/runtime.js';
import { loadSettings } from '../../src/runtime/config/settings.js';
import { createServer } from '../../src/server/server.js';
import { SessionTap } from '../../src/server/sessionTap.js';
import { DIST_ENTRY, testEnv } from './tmp.js';

export interface ToolAnswer {
  isError: boolean;
  /** The JSON of the text block (for errors: `{error, ...hints}`). */
  json: Record<string, any>;
  raw: CallToolResult;
}

/** Calls a tool and checks the invariant of every answer: structuredContent equals the text JSON. */
export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}, options?: CallToolRequestOptions): Promise<ToolAnswer> {
  return toolAnswer(name, await client.callTool({ name, arguments: args }, options));
}

/** A tool's answer as any client received it, checked: a text block of JSON, and structuredContent equal to it. */
export function toolAnswer(name: string, raw: CallToolResult): ToolAnswer {
  const text = raw.content.find((c) => c.type === 'text');
  assert.ok(text && text.type === 'text', `${name} answered without a text block`);
  let json: Record<string, any>;
  try {
    json = JSON.parse(text.text) as Record<string, any>;
  } catch {
    // Every answer of ours is JSON, argument errors included; any other text is kept as the error.
    json = { error: text.text };
  }
  const isError = raw.isError === true;
  if (!isError) assert.deepEqual(raw.structuredContent, json, `${name}: structuredContent and text differ`);
  return { isError, json, raw };
}

export interface InMemoryHarness {
  client: Client;
  runtime: Runtime;
  call(name: string, args?: Record<string, unknown>, options?: CallToolRequestOptions): Promise<ToolAnswer>;
  close(): Promise<void>;
}

/** What a client that renders MCP Apps declares at `initialize` (Claude Desktop, VS Code, ...). */
export const APPS_CLIENT_CAPABILITIES: ClientCapabilities = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };

/** `close` run once, by whichever comes first: a test's call or the end of the test file. */
export function closedAfterFile(close: () => Promise<void>): () => Promise<void> {
  let closed = false;
  const once = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await close();
  };
  after(once);
  return once;
}

/** A server over the in-memory transport with settings from `testEnv(env)`; closed after the file. */
export async function connectInMemory(env: Record<string, string | undefined> = {}, cwd?: string, capabilities: ClientCapabilities = {}): Promise<InMemoryHarness> {
  const runtime = new Runtime(loadSettings(testEnv(env), cwd));
  const { server, resources } = createServer(runtime);
  const client = new Client({ name: 'test-client', version: '0.0.0' }, { capabilities });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  // The transport under the server as in production (src/server/stdio.ts).
  const tap = new SessionTap(serverTransport, runtime.logger);
  tap.follow(resources);
  await Promise.all([client.connect(clientTransport), server.connect(tap)]);
  const close = closedAfterFile(async () => {
    await client.close();
    await runtime.close();
    await server.close();
  });
  return { client, runtime, call: (name, args, options) => callTool(client, name, args, options), close };
}

export interface StdioHarness {
  client: Client;
  transport: StdioClientTransport;
  stderr: () => string;
  close(): Promise<void>;
}

/** The protocol versions test clients speak: two of the 2025 generation (initialize) and 2026-07-28 (server/discover, per-request envelope). */
export const PROTOCOL_VERSIONS = ['2025-06-18', '2025-11-25', '2026-07-28'] as const;
export type ProtocolVersion = (typeof PROTOCOL_VERSIONS)[number];

/** The SDK Client's options that make it speak `version`. */
export function speaking(version: ProtocolVersion): ClientOptions {
  return version === '2026-07-28' ? { versionNegotiation: { mode: { pin: version } } } : { supportedProtocolVersions: [version] };
}

export interface StdioOptions {
  cwd?: string;
  /** A command the server is started under, e.g. nsenter into another "host" (test/helpers/hosts.ts). */
  prefix?: string[];
  protocol?: ProtocolVersion;
  capabilities?: ClientCapabilities;
}

/** Spawns `node dist/index.js` (run `npm run build` first; `npm test` does); the client speaks 2025-11-25 unless told. */
export async function connectStdio(env: Record<string, string | undefined> = {}, options: StdioOptions = {}): Promise<StdioHarness> {
  const [command, ...args] = [...(options.prefix ?? []), process.execPath, DIST_ENTRY];
  const transport = new StdioClientTransport({ command: command!, args, env: testEnv(env), cwd: options.cwd, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'test-client', version: '0.0.0' }, { ...speaking(options.protocol ?? '2025-11-25'), capabilities: options.capabilities ?? {} });
  await client.connect(transport);
  const close = closedAfterFile(() => client.close());
  return { client, transport, stderr: () => stderr, close };
}
