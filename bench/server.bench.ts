/**
 * The server's start and its tool list, side by side with the reference server
 * @modelcontextprotocol/server-filesystem (a dev dependency) measured in the same run, the two
 * started alternately:
 * - cold start: spawn to the answer of the first tools/list (initialize first), spoken as raw
 *   JSON-RPC lines so only the server's time is in it;
 * - spawn to the answer of a first tools/call right after: what loads after the tool list is sent
 *   (src/server/frontDoor.ts) is paid here;
 * - idle RSS once started;
 * - tools/list answered on a warm connection (server time plus one pipe round trip);
 * - the SDK Client's listTools() on a warm connection: what a client pays, compiling each
 *   tool's output schema included.
 * Floor: a bare Node process to its first output, spawned with the environment the servers get
 * (without the NODE_EXTRA_CA_CERTS a developer's shell may set, which Node reads at start).
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { DIST_ENTRY } from '../test/helpers/tmp.js';
import type { BenchFigure } from './run.js';

const RUNS = 7;
const WARM_CALLS = 15;

interface Target {
  name: string;
  args: string[];
  /** A cheap tool call: the first useful answer after start. */
  call: { name: string; arguments: Record<string, unknown> };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function rss(pid: number): number {
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
}

function referenceServer(): string {
  const require = createRequire(import.meta.url);
  let manifest: string;
  try {
    manifest = require.resolve('@modelcontextprotocol/server-filesystem/package.json');
  } catch {
    throw new Error('the reference server is missing: npm ci installs @modelcontextprotocol/server-filesystem (a dev dependency)');
  }
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: Record<string, string> };
  return join(dirname(manifest), Object.values(bin)[0]!);
}

/** A JSON-RPC peer over a child's stdio, one request at a time. */
class RawSession {
  private nextId = 1;
  private readonly waiting = new Map<number, (line: string) => void>();

  constructor(readonly child: ChildProcessByStdio<Writable, Readable, null>) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const id = (JSON.parse(line) as { id?: number }).id;
      if (id !== undefined) this.waiting.get(id)?.(line);
    });
  }

  request(method: string, params: object = {}): Promise<string> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  }

  notify(method: string): void {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`);
  }
}

async function coldStart(target: Target, env: Record<string, string>): Promise<{ ms: number; rssMiB: number; warmMs: number; bytes: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, target.args, { env, stdio: ['pipe', 'pipe', 'ignore'] });
  const session = new RawSession(child);
  await session.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } });
  session.notify('notifications/initialized');
  const answer = await session.request('tools/list');
  const ms = performance.now() - started;
  // Idle: give it a moment to finish whatever start-up work runs after the first answer.
  await new Promise((r) => setTimeout(r, 500));
  const rssMiB = rss(child.pid!);
  const warm: number[] = [];
  for (let i = 0; i < WARM_CALLS; i++) {
    const t = performance.now();
    await session.request('tools/list');
    warm.push(performance.now() - t);
  }
  child.kill('SIGKILL');
  return { ms, rssMiB, warmMs: median(warm), bytes: Buffer.byteLength(answer) };
}

/** Spawn to the answer of a first tools/call right after the tool list: start-up work deferred past tools/list shows here. */
async function firstCall(target: Target, env: Record<string, string>): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, target.args, { env, stdio: ['pipe', 'pipe', 'ignore'] });
  const session = new RawSession(child);
  await session.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } });
  session.notify('notifications/initialized');
  await session.request('tools/list');
  const answer = await session.request('tools/call', target.call);
  const ms = performance.now() - started;
  child.kill('SIGKILL');
  if (!answer.includes('"result"') || answer.includes('"isError":true')) throw new Error(`${target.name}: the first call failed: ${answer.slice(0, 300)}`);
  return ms;
}

async function clientListTools(target: Target, env: Record<string, string>): Promise<{ firstMs: number; warmMs: number }> {
  const client = new Client({ name: 'bench', version: '0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: target.args, env, stderr: 'ignore' }));
  try {
    let t = performance.now();
    await client.listTools();
    const firstMs = performance.now() - t;
    const warm: number[] = [];
    for (let i = 0; i < WARM_CALLS; i++) {
      t = performance.now();
      await client.listTools();
      warm.push(performance.now() - t);
    }
    return { firstMs, warmMs: median(warm) };
  } finally {
    await client.close();
  }
}

async function bareNode(env: Record<string, string>): Promise<{ ms: number; rssMiB: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, ['-e', 'process.stdout.write("ready\\n"); setInterval(() => {}, 1000)'], { env, stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise((resolve) => child.stdout.once('data', resolve));
  const ms = performance.now() - started;
  await new Promise((r) => setTimeout(r, 500));
  const rssMiB = rss(child.pid!);
  child.kill('SIGKILL');
  return { ms, rssMiB };
}

export default async function serverBench(): Promise<BenchFigure[]> {
  const home = mkdtempSync(join(tmpdir(), 'rlmcp-bench-server-'));
  try {
    const env = { PATH: process.env.PATH ?? '', HOME: home, RL_HOME: join(home, 'rl_training'), LOG_LEVEL: 'error' };
    const ours: Target = { name: 'rl-training-mcp', args: [DIST_ENTRY], call: { name: 'rl_list_runs', arguments: {} } };
    const reference: Target = { name: 'server-filesystem', args: [referenceServer(), home], call: { name: 'list_allowed_directories', arguments: {} } };
    const runs = { ours: [] as Awaited<ReturnType<typeof coldStart>>[], reference: [] as Awaited<ReturnType<typeof coldStart>>[], bare: [] as Awaited<ReturnType<typeof bareNode>>[] };
    const calls = { ours: [] as number[], reference: [] as number[] };
    for (let i = 0; i < RUNS; i++) {
      runs.ours.push(await coldStart(ours, env));
      runs.reference.push(await coldStart(reference, env));
      runs.bare.push(await bareNode(env));
      calls.ours.push(await firstCall(ours, env));
      calls.reference.push(await firstCall(reference, env));
    }
    const oursClient = await clientListTools(ours, env);
    const referenceClient = await clientListTools(reference, env);
    const med = <T>(list: T[], pick: (x: T) => number): number => median(list.map(pick));
    const ref = (name: string, value: number, unit: string) => ({ name: `server-filesystem ${name}`, value, unit });
    const coldOurs = med(runs.ours, (r) => r.ms);
    const coldRef = med(runs.reference, (r) => r.ms);
    return [
      {
        name: `cold start: spawn to the tools/list answer (median of ${RUNS})`,
        value: coldOurs,
        unit: 'ms',
        baseline: ref('cold start', coldRef, 'ms'),
        target: '<= 0.5x server-filesystem',
        note: `ratio ${(coldOurs / coldRef).toFixed(2)}; bare node process to first output: ${med(runs.bare, (b) => b.ms).toFixed(0)} ms`,
      },
      {
        name: `spawn to the answer of a first tools/call after the list (median of ${RUNS})`,
        value: median(calls.ours),
        unit: 'ms',
        baseline: ref('first tools/call', median(calls.reference), 'ms'),
        note: 'ours: rl_list_runs, whose answer waits for the SDK, the runtime and the tool modules to load; theirs: list_allowed_directories',
      },
      {
        name: 'idle RSS after start',
        value: med(runs.ours, (r) => r.rssMiB),
        unit: 'MiB',
        baseline: ref('idle RSS', med(runs.reference, (r) => r.rssMiB), 'MiB'),
        target: '< server-filesystem',
        note: `bare node process: ${med(runs.bare, (b) => b.rssMiB).toFixed(1)} MiB`,
      },
      {
        name: `tools/list, warm connection (median of ${WARM_CALLS})`,
        value: med(runs.ours, (r) => r.warmMs),
        unit: 'ms',
        baseline: ref('tools/list, warm', med(runs.reference, (r) => r.warmMs), 'ms'),
        note: `answer ${(runs.ours[0]!.bytes / 1024).toFixed(1)} KiB vs ${(runs.reference[0]!.bytes / 1024).toFixed(1)} KiB`,
      },
      {
        name: `SDK Client listTools(), warm connection (median of ${WARM_CALLS})`,
        value: oursClient.warmMs,
        unit: 'ms',
        baseline: ref('listTools(), warm', referenceClient.warmMs, 'ms'),
        note: `first call: ${oursClient.firstMs.toFixed(1)} ms vs ${referenceClient.firstMs.toFixed(1)} ms`,
      },
    ];
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
