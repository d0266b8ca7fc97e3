/**
 * The server's start and its tool list, side by side with the reference server
 * @modelcontextprotocol/server-filesystem (a dev dependency) measured in the same run, the servers
 * started in turn:
 * - cold start: spawn to the answer of the first tools/list (after initialize, or 2026-07-28's
 *   server/discover), spoken as raw JSON-RPC lines so only the server's time is in it;
 * - spawn to the answer of a first tools/call right after;
 * - each also as CPU time (all the process's threads, from /proc/<pid>/task/<tid>/schedstat): the
 *   machine is shared, and CPU time moves less than wall time when others load it;
 * - ours with a 2025 and a 2026-07-28 opening;
 * - idle RSS once started;
 * - tools/list answered on a warm connection (server time plus one pipe round trip);
 * - the SDK Client's listTools() on a warm connection: what a client pays, compiling each
 *   tool's output schema included.
 * Floors, spawned with the environment the servers get (without the NODE_EXTRA_CA_CERTS a
 * developer's shell may set, which Node reads at start): a bare Node process to its first output,
 * and a server on SDK v2 with one tool and nothing of ours, bundled as ours is, measured as the
 * servers are: what any stdio server on SDK v2 pays to its first tools/call answer.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { build } from 'esbuild';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { DIST_ENTRY, REPO_ROOT } from '../test/helpers/tmp.js';
import { BUNDLE_OPTIONS } from '../scripts/bundling.js';
import type { BenchFigure } from './run.js';

const RUNS = 7;
const WARM_CALLS = 15;

interface Target {
  name: string;
  args: string[];
  /** A cheap tool call: the first useful answer after start. */
  call: { name: string; arguments: Record<string, unknown> };
  /** The client's generation: initialize (2025) or server/discover with an envelope on every request (2026-07-28). */
  opening: 'initialize' | 'discover';
}

const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '0' }, 'io.modelcontextprotocol/clientCapabilities': {} };

/** CPU time the process has used so far, all threads, in ms. */
function cpuMs(pid: number): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // A thread that ended meanwhile.
    }
  }
  return ns / 1e6;
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

interface Start {
  listMs: number;
  listCpuMs: number;
  callMs: number;
  callCpuMs: number;
  rssMiB: number;
  warmMs: number;
  bytes: number;
}

/** One start: spawn -> (initialize | server/discover) -> tools/list -> tools/call, then idle RSS and warm lists. */
async function start(target: Target, env: Record<string, string>): Promise<Start> {
  const started = performance.now();
  const child = spawn(process.execPath, target.args, { env, stdio: ['pipe', 'pipe', 'ignore'] });
  const session = new RawSession(child);
  const modern = target.opening === 'discover';
  const params = (p: object = {}): object => (modern ? { ...p, _meta: ENVELOPE } : p);
  if (modern) await session.request('server/discover', params());
  else {
    await session.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } });
    session.notify('notifications/initialized');
  }
  const answer = await session.request('tools/list', params());
  const listMs = performance.now() - started;
  const listCpuMs = cpuMs(child.pid!);
  const called = await session.request('tools/call', params(target.call));
  const callMs = performance.now() - started;
  const callCpuMs = cpuMs(child.pid!);
  if (!called.includes('"result"') || called.includes('"isError":true')) throw new Error(`${target.name}: the first call failed: ${called.slice(0, 300)}`);
  // Idle: give it a moment to finish whatever start-up work runs after the first answers.
  await new Promise((r) => setTimeout(r, 500));
  const rssMiB = rss(child.pid!);
  const warm: number[] = [];
  for (let i = 0; i < WARM_CALLS; i++) {
    const t = performance.now();
    await session.request('tools/list', params());
    warm.push(performance.now() - t);
  }
  child.kill('SIGKILL');
  return { listMs, listCpuMs, callMs, callCpuMs, rssMiB, warmMs: median(warm), bytes: Buffer.byteLength(answer) };
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

/** A bare Node process to its first output. */
const BARE = 'process.stdout.write("ready\\n"); setInterval(() => {}, 1000)';

/**
 * A stdio server on SDK v2 with one tool, bundled the way the server is (scripts/bundling.ts):
 * the SDK and zod, an McpServer, one tool with a zod input schema, and nothing of ours.
 */
async function oneToolServer(dir: string): Promise<Target> {
  const outfile = join(dir, 'one-tool-server.mjs');
  const contents = `import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';
const server = new McpServer({ name: 'one-tool', version: '0' });
server.registerTool('ping', { description: 'Answers pong.', inputSchema: z.object({}) }, async () => ({ content: [{ type: 'text', text: 'pong' }] }));
await server.connect(new StdioServerTransport());`;
  await build({ ...BUNDLE_OPTIONS, stdin: { contents, resolveDir: REPO_ROOT, loader: 'js' }, outfile, logLevel: 'error' });
  return { name: 'a one-tool server on SDK v2', args: [outfile], call: { name: 'ping', arguments: {} }, opening: 'initialize' };
}

/** A process to its first output, and its RSS once idle. */
async function floor(args: string[], env: Record<string, string>): Promise<{ ms: number; rssMiB: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'ignore'] });
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
    const call = { name: 'rl_list_runs', arguments: {} };
    const ours: Target = { name: 'rl-training-mcp', args: [DIST_ENTRY], call, opening: 'initialize' };
    const targets: Target[] = [
      ours,
      { name: 'rl-training-mcp, 2026-07-28 opening', args: [DIST_ENTRY], call, opening: 'discover' },
    ];
    const reference: Target = { name: 'server-filesystem', args: [referenceServer(), home], call: { name: 'list_allowed_directories', arguments: {} }, opening: 'initialize' };
    const sdkFloor = await oneToolServer(home);
    const starts = new Map<Target, Start[]>([...targets, reference, sdkFloor].map((t) => [t, []]));
    const bare: Awaited<ReturnType<typeof floor>>[] = [];
    for (let i = 0; i < RUNS; i++) {
      for (const target of [...targets, reference, sdkFloor]) starts.get(target)!.push(await start(target, env));
      bare.push(await floor(['-e', BARE], env));
    }
    const oursClient = await clientListTools(ours, env);
    const referenceClient = await clientListTools(reference, env);
    const med = (target: Target, pick: (s: Start) => number): number => median(starts.get(target)!.map(pick));
    const ref = (name: string, value: number, unit: string) => ({ name: `server-filesystem ${name}`, value, unit });
    const ratio = (target: Target, pick: (s: Start) => number): string => (med(target, pick) / med(reference, pick)).toFixed(2);
    const bareMs = median(bare.map((b) => b.ms));
    const onSdk = (pick: (s: Start) => number): string => `${sdkFloor.name}, bundled as ours: ${med(sdkFloor, pick).toFixed(0)} ms (${ratio(sdkFloor, pick)}x)`;
    const startFigures = targets.flatMap((target): BenchFigure[] => [
      {
        name: `${target.name}: spawn to the tools/list answer (median of ${RUNS})`,
        value: med(target, (s) => s.listMs),
        unit: 'ms',
        baseline: ref('cold start', med(reference, (s) => s.listMs), 'ms'),
        target: '<= 1.0x server-filesystem',
        note: `ratio ${ratio(target, (s) => s.listMs)}; CPU ${med(target, (s) => s.listCpuMs).toFixed(0)} ms vs ${med(reference, (s) => s.listCpuMs).toFixed(0)} ms (ratio ${ratio(target, (s) => s.listCpuMs)}); bare node process to first output: ${bareMs.toFixed(0)} ms; ${onSdk((s) => s.listMs)}`,
      },
      {
        name: `${target.name}: spawn to the answer of a first tools/call right after the list (median of ${RUNS})`,
        value: med(target, (s) => s.callMs),
        unit: 'ms',
        baseline: ref('first tools/call', med(reference, (s) => s.callMs), 'ms'),
        target: '<= 1.0x server-filesystem',
        note: `ratio ${ratio(target, (s) => s.callMs)}; CPU ${med(target, (s) => s.callCpuMs).toFixed(0)} ms vs ${med(reference, (s) => s.callCpuMs).toFixed(0)} ms (ratio ${ratio(target, (s) => s.callCpuMs)}); ours: rl_list_runs, theirs: list_allowed_directories; ${onSdk((s) => s.callMs)}`,
      },
    ]);
    return [
      ...startFigures,
      {
        name: 'idle RSS after start and a first call',
        value: med(ours, (s) => s.rssMiB),
        unit: 'MiB',
        baseline: ref('idle RSS', med(reference, (s) => s.rssMiB), 'MiB'),
        target: '<= 1.0x server-filesystem',
        note: `ratio ${ratio(ours, (s) => s.rssMiB)}; bare node process: ${median(bare.map((b) => b.rssMiB)).toFixed(1)} MiB; ${sdkFloor.name}: ${med(sdkFloor, (s) => s.rssMiB).toFixed(1)} MiB`,
      },
      {
        name: `tools/list, warm connection (median of ${WARM_CALLS})`,
        value: med(ours, (s) => s.warmMs),
        unit: 'ms',
        baseline: ref('tools/list, warm', med(reference, (s) => s.warmMs), 'ms'),
        note: `answer ${(starts.get(ours)![0]!.bytes / 1024).toFixed(1)} KiB vs ${(starts.get(reference)![0]!.bytes / 1024).toFixed(1)} KiB`,
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
