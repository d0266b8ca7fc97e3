/**
 * The built server over real stdio: protocol-only stdout, fast exit, clear start-up failures, and
 * the tool list of the bundle the same as the one the tool modules give.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { ClientCapabilities } from '@modelcontextprotocol/client';
import { listedTool } from '../src/tools/catalog.js';
import { ALL_TOOLS } from '../src/tools/index.js';
import { APPS_CLIENT_CAPABILITIES, callTool } from './helpers/client.js';
import { DIST_ENTRY, REPO_ROOT, tempDir, testEnv } from './helpers/tmp.js';

function rpc(id: number, method: string, params: Record<string, unknown> = {}): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n';
}

test('stdout carries only JSON-RPC; closing stdin ends the process within 2 s', async () => {
  const child = spawn(process.execPath, [DIST_ENTRY], { env: testEnv({ LOG_LEVEL: 'debug' }), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.resume();
  const answered = (id: number) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (stdout.split('\n').some((l) => l.includes(`"id":${id}`))) {
          child.stdout.off('data', check);
          resolve();
        }
      };
      child.stdout.on('data', check);
      check();
    });
  child.stdin.write(rpc(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } }));
  await answered(1);
  child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
  child.stdin.write(rpc(2, 'tools/list'));
  await answered(2);
  child.stdin.write(rpc(3, 'tools/call', { name: 'no_such_tool', arguments: {} }));
  await answered(3);

  const started = Date.now();
  child.stdin.end();
  const [code] = (await once(child, 'exit')) as [number | null];
  const elapsed = Date.now() - started;
  assert.ok(elapsed < 2000, `exited after ${elapsed} ms`);
  assert.equal(code, 0);

  const lines = stdout.split('\n').filter((l) => l.trim() !== '');
  assert.ok(lines.length >= 3);
  for (const line of lines) {
    const msg = JSON.parse(line) as { jsonrpc?: string };
    assert.equal(msg.jsonrpc, '2.0', `not a JSON-RPC line: ${line}`);
  }
});

test('SIGTERM ends the process promptly', async () => {
  const child = spawn(process.execPath, [DIST_ENTRY], { env: testEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdout.resume();
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin.write(rpc(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } }));
  await new Promise((r) => child.stdout.once('data', r));
  const started = Date.now();
  child.kill('SIGTERM');
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.ok(Date.now() - started < 2000);
  assert.equal(code, 0, stderr);
});

test('a bad setting stops the server at start with one line on stderr and a non-zero exit', async () => {
  for (const env of [{ RL_API_PORT: 'abc' }, { RL_MCP_CONFIG: '/nonexistent/rl.yaml' }]) {
    const child = spawn(process.execPath, [DIST_ENTRY], { env: testEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.notEqual(code, 0);
    assert.equal(stdout, '');
    const lines = stderr.trim().split('\n');
    assert.equal(lines.length, 1, stderr);
    assert.match(lines[0]!, /^rl-training-mcp: /);
  }
});

test('--version and --help answer on stdout, as a command line tool does', async () => {
  const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  for (const [flag, expected] of [['--version', new RegExp(`^${version.replace(/\./g, '\\.')}\\n$`)], ['--help', /^Usage: rl-training-mcp/]] as const) {
    const child = spawn(process.execPath, [DIST_ENTRY, flag], { env: testEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 0);
    assert.match(stdout, expected);
  }
});

test('the bundle lists the tools the tool modules give (app-only ones to Apps clients only) and answers a first call', async () => {
  const expected = JSON.parse(JSON.stringify(ALL_TOOLS.map(listedTool))) as Array<{ name: string; _meta?: { ui?: { visibility?: string[] } } }>;
  const appOnly = expected.filter((t) => t._meta?.ui?.visibility?.includes('model') === false).map((t) => t.name);
  assert.ok(appOnly.length > 0, 'some tool is app-only');
  const env = testEnv({ RL_HOME: join(tempDir('rlmcp-stdio-'), 'rl_training') });
  for (const capabilities of [{}, APPS_CLIENT_CAPABILITIES] as ClientCapabilities[]) {
    const client = new Client({ name: 'stdio-test', version: '0.0.0' }, { capabilities });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [DIST_ENTRY], env, stderr: 'ignore' }));
    try {
      const { tools } = await client.listTools();
      const shown = 'extensions' in capabilities ? expected : expected.filter((t) => !appOnly.includes(t.name));
      assert.deepEqual(JSON.parse(JSON.stringify(tools)), shown);
      const answer = await callTool(client, 'rl_list_runs', {});
      assert.equal(answer.isError, false, JSON.stringify(answer.json));
    } finally {
      await client.close();
    }
  }
});
