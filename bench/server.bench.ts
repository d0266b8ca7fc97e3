/**
 * Server cold start: spawning `node dist/index.js` to the answer of its first tools/list, and the
 * idle RSS after it. Baseline from the same run: a bare Node process doing nothing (the floor any
 * Node server starts from), spawned the same way.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { DIST_ENTRY } from '../test/helpers/tmp.js';
import type { BenchFigure } from './run.js';

const RUNS = 7;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function rss(pid: number): number {
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
}

async function serverStart(home: string): Promise<{ ms: number; rssMiB: number }> {
  const started = performance.now();
  const transport = new StdioClientTransport({ command: process.execPath, args: [DIST_ENTRY], env: { PATH: process.env.PATH ?? '', RL_HOME: home, LOG_LEVEL: 'error' }, stderr: 'ignore' });
  const client = new Client({ name: 'bench', version: '0' });
  await client.connect(transport);
  await client.listTools();
  const ms = performance.now() - started;
  // Idle: give it a moment to finish whatever start-up work runs after the first answer.
  await new Promise((r) => setTimeout(r, 500));
  const rssMiB = rss(transport.pid!);
  await client.close();
  return { ms, rssMiB };
}

async function bareNode(): Promise<{ ms: number; rssMiB: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, ['-e', 'process.stdout.write("ready\\n"); setInterval(() => {}, 1000)'], { stdio: ['ignore', 'pipe', 'ignore'] });
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
    const server: Array<{ ms: number; rssMiB: number }> = [];
    const bare: Array<{ ms: number; rssMiB: number }> = [];
    for (let i = 0; i < RUNS; i++) {
      server.push(await serverStart(home));
      bare.push(await bareNode());
    }
    return [
      {
        name: `cold start to tools/list answer (median of ${RUNS})`,
        value: median(server.map((s) => s.ms)),
        unit: 'ms',
        baseline: { name: 'bare node process to first output', value: median(bare.map((b) => b.ms)), unit: 'ms' },
      },
      {
        name: 'idle RSS after start',
        value: median(server.map((s) => s.rssMiB)),
        unit: 'MiB',
        baseline: { name: 'bare node process', value: median(bare.map((b) => b.rssMiB)), unit: 'MiB' },
      },
    ];
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
