/**
 * Discovery over a generated tree of 1000 environment files (bench/discoveryTree.ts): a cold
 * listing (fresh catalog, empty RL_HOME), a warm one (nothing changed), a restarted server (parse
 * cache persisted under RL_HOME/cache/), and a cold listing held to one helper process (what the
 * split over cores buys). Baseline from the same run: the seed's method, a Python `ast` scan of the
 * same tree (bench/seed_scan.py). Python start-up is inside every figure that runs Python.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { EnvironmentCatalog } from '../src/runtime/environments/catalog.js';
import { Runtime } from '../src/runtime/wiring/runtime.js';
import { loadSettings } from '../src/runtime/config/settings.js';
import { generateTree } from './discoveryTree.js';
import type { BenchFigure } from './run.js';

const FILES = 1000;
const COLD_RUNS = 3;
const WARM_RUNS = 30;
const SEED_SCAN = join(dirname(fileURLToPath(import.meta.url)), 'seed_scan.py');

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await fn();
  return { ms: performance.now() - started, value };
}

export default async function discoveryBench(): Promise<BenchFigure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'rlmcp-bench-discovery-'));
  const runtimes: Runtime[] = [];
  try {
    const root = join(dir, 'root');
    const envDir = join(root, 'tinker_atropos', 'environments');
    const tree = generateTree(envDir, FILES);
    const runtimeWith = (home: string): Runtime => {
      const runtime = new Runtime(loadSettings({ PATH: process.env.PATH, HOME: process.env.HOME, TINKER_ATROPOS_ROOT: root, RL_HOME: join(dir, home), LOG_LEVEL: 'error' }));
      runtimes.push(runtime);
      return runtime;
    };

    const seed: number[] = [];
    let seedFound = '';
    for (let i = 0; i < COLD_RUNS; i++) {
      const run = await timed(() => execa('python3', [SEED_SCAN, envDir]));
      seed.push(run.ms);
      seedFound = run.value.stdout.trim().split(' ')[0]!;
    }

    const cold: number[] = [];
    const single: number[] = [];
    const restart: number[] = [];
    let warm: number[] = [];
    let found = { environments: 0, abstract: 0, skipped: 0 };
    for (let i = 0; i < COLD_RUNS; i++) {
      const runtime = runtimeWith(`home-${i}`);
      const first = await timed(() => runtime.environments.scan());
      cold.push(first.ms);
      found = { environments: first.value.environments.length, abstract: first.value.abstract.length, skipped: first.value.skipped.length };
      if (i === 0) {
        for (let w = 0; w < WARM_RUNS; w++) warm.push((await timed(() => runtime.environments.scan())).ms);
      }
      restart.push((await timed(() => runtimeWith(`home-${i}`).environments.scan())).ms);
      single.push((await timed(() => new EnvironmentCatalog(runtimeWith(`single-${i}`), { maxProcesses: 1 }).scan())).ms);
    }
    warm = warm.slice(1); // the first warm listing still pays for JIT warm-up of the stat path

    const baseline = { name: 'seed method: python ast scan of the same tree', value: median(seed), unit: 'ms' };
    const mib = (tree.bytes / 1024 / 1024).toFixed(1);
    return [
      {
        name: `discovery cold, ${FILES} files (${mib} MiB), fresh catalog`,
        value: median(cold),
        unit: 'ms',
        baseline,
        target: '<= baseline',
        note: `${found.environments} environments + ${found.abstract} abstract bases + ${found.skipped} unparseable reported; the seed method finds ${seedFound} (direct BaseEnv bases only); median of ${COLD_RUNS}`,
      },
      { name: 'discovery cold, one helper process', value: median(single), unit: 'ms', baseline, note: 'the same listing without the split over cores' },
      { name: 'discovery warm, nothing changed', value: median(warm), unit: 'ms', target: '< 50 ms', note: `median of ${warm.length}; max ${Math.max(...warm).toFixed(1)} ms` },
      { name: 'discovery after a server restart (persisted parse cache)', value: median(restart), unit: 'ms', baseline, note: `median of ${COLD_RUNS}` },
    ];
  } finally {
    await Promise.all(runtimes.map((r) => r.close()));
    rmSync(dir, { recursive: true, force: true });
  }
}
