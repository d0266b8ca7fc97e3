/**
 * rl_list_runs over 10,000 runs (generated ended run directories, files in the OS cache): a page
 * of 50 through the MCP client once the index is warm (target < 50 ms), a filtered page and a page
 * deep in the cursor chain; a restarted server's first page (the index read from RL_HOME/cache)
 * and a first start with no index at all. Baseline from the same run: parsing every run.json, as
 * `RunStore.list()` does, which the listing did once per call (and the registry scan at start-up).
 */
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Runtime } from '../src/runtime/wiring/runtime.js';
import { runIndexPath } from '../src/core/files/home.js';
import { loadSettings } from '../src/runtime/config/settings.js';
import { RunStore } from '../src/runtime/runs/registry/store.js';
import { createServer } from '../src/server/server.js';
import { writeRunDirs } from '../test/helpers/registry.js';
import type { BenchFigure } from './run.js';

const RUNS = 10_000;
const ROUNDS = 15;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Served {
  list(args: Record<string, unknown>): Promise<Record<string, any>>;
  close(): Promise<void>;
}

/** A server process's services and an MCP client on them, as a restarted server would be. */
async function serve(home: string): Promise<Served> {
  const runtime = new Runtime(loadSettings({ PATH: process.env.PATH, HOME: process.env.HOME, RL_HOME: home, LOG_LEVEL: 'warn' }));
  const { server } = createServer(runtime);
  const client = new Client({ name: 'bench', version: '0.0.0' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await Promise.all([client.connect(clientSide), server.connect(serverSide)]);
  return {
    async list(args) {
      const result = await client.callTool({ name: 'rl_list_runs', arguments: args });
      if (result.isError) throw new Error(JSON.stringify(result.content));
      return result.structuredContent as Record<string, any>;
    },
    async close() {
      await client.close();
      await runtime.close();
      await server.close();
    },
  };
}

async function timed<T>(work: () => Promise<T> | T): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

/** From a new server (services, the start-up registry scan, the client) to the first page answered. */
async function firstPage(home: string): Promise<number> {
  const { ms, value: served } = await timed(async () => {
    const s = await serve(home);
    await s.list({});
    return s;
  });
  await served.close();
  return ms;
}

async function warmPages(served: Served, args: Record<string, unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) times.push((await timed(() => served.list(args))).ms);
  return median(times);
}

export default async function listingBench(): Promise<BenchFigure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'rlmcp-bench-listing-'));
  const home = join(dir, 'rl_training');
  try {
    writeRunDirs(home, RUNS);
    const parses: number[] = [];
    for (let i = 0; i < 5; i++) parses.push((await timed(() => new RunStore(home).list())).ms);
    const baseline = { name: `parse every run.json (RunStore.list(), median of 5)`, value: median(parses), unit: 'ms' };

    // The same start over an empty registry first: what any start costs, and the code warmed up.
    const empty = join(dir, 'empty');
    await firstPage(empty);
    const emptyStart = await firstPage(empty);
    const firstStart = await firstPage(home);
    const restarts: number[] = [];
    for (let i = 0; i < 5; i++) restarts.push(await firstPage(home));

    const served = await serve(home);
    const warm = await warmPages(served, { limit: 50 });
    const filtered = await warmPages(served, { limit: 50, status: 'failed', environment: 'gsm8k' });
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) cursor = (await served.list({ limit: 50, ...(cursor ? { cursor } : {}) })).next_cursor as string;
    const deep = await warmPages(served, { limit: 50, cursor });
    await served.close();

    return [
      { name: `rl_list_runs, a page of 50 of ${RUNS} runs, warm (median of ${ROUNDS})`, value: warm, unit: 'ms', baseline, target: '< 50 ms', note: 'no record parsed: 500 run.json stat\'ed by the rolling sweep, 50 by the page' },
      { name: 'the same, filtered (status failed, environment gsm8k)', value: filtered, unit: 'ms', baseline },
      { name: 'the same, page 101 through the cursor chain', value: deep, unit: 'ms', baseline },
      {
        name: 'a restarted server: new services, start-up scan and first page (median of 5)',
        value: median(restarts),
        unit: 'ms',
        baseline,
        note: `index read from ${runIndexPath('RL_HOME')}; before it, the start-up scan and the listing each parsed every run.json`,
      },
      { name: 'first start with no index: every run.json read once, index built', value: firstStart, unit: 'ms', baseline },
      { name: 'the same start over an empty registry (what every start costs)', value: emptyStart, unit: 'ms' },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
