/**
 * Talks to the server the way a client does: the SDK Client over the in-memory transport (with
 * the runtime at hand for assertions), or over stdio against the built dist/index.js.
 */
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult, ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { after } from 'node:test';
import { Runtime } from '../../src/runtime/wiring/runtime.js';
import { loadSettings } from '../../src/runtime/config/settings.js';
import { createServer } from '../../src/server/server.js';
import { DIST_ENTRY, testEnv } from './tmp.js';

export interface ToolAnswer {
  isError: boolean;
  /** The JSON of the text block (for errors: `{error, ...hints}`). */
  json: Record<string, any>;
  raw: CallToolResult;
}

/** Calls a tool and checks the invariant of every answer: structuredContent equals the text JSON. */
export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}, options?: Parameters<Client['callTool']>[2]): Promise<ToolAnswer> {
  const raw = (await client.callTool({ name, arguments: args }, undefined, options)) as CallToolResult;
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
  call(name: string, args?: Record<string, unknown>, options?: Parameters<Client['callTool']>[2]): Promise<ToolAnswer>;
  close(): Promise<void>;
}

/** What a client that renders MCP Apps declares at `initialize` (Claude Desktop, VS Code, ...). */
export const APPS_CLIENT_CAPABILITIES: ClientCapabilities = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };

/** A server over the in-memory transport with settings from `testEnv(env)`; closed after the file. */
export async function connectInMemory(env: Record<string, string | undefined> = {}, cwd?: string, capabilities: ClientCapabilities = {}): Promise<InMemoryHarness> {
  const runtime = new Runtime(loadSettings(testEnv(env), cwd));
  const server = createServer(runtime);
  const client = new Client({ name: 'test-client', version: '0.0.0' }, { capabilities });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await Promise.all([client.connect(clientTransport), server.connect(serverTransport)]);
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await client.close();
    await runtime.close();
    await server.close();
  };
  after(close);
  return { client, runtime, call: (name, args, options) => callTool(client, name, args, options), close };
}

export interface StdioHarness {
  client: Client;
  transport: StdioClientTransport;
  stderr: () => string;
  close(): Promise<void>;
}

/** Spawns `node dist/index.js` (run `npm run build` first; `npm test` does). */
export async function connectStdio(env: Record<string, string | undefined> = {}, cwd?: string): Promise<StdioHarness> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [DIST_ENTRY], env: testEnv(env), cwd, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'test-client', version: '0.0.0' });
  await client.connect(transport);
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await client.close();
  };
  after(close);
  return { client, transport, stderr: () => stderr, close };
}
