/**
 * Tail of a 1 GiB run log through resources/read, against the built server over stdio (so its
 * memory is its own): time per read and the server's RSS growth (peak, from /proc), targets
 * < 50 ms and < 20 MiB. Baseline from the same run: reading the whole file with fs.readFile
 * (what a naive tail does), 1 GiB when free memory allows, else the first 100 MiB.
 */
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { freemem, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIST_ENTRY } from '../test/helpers/tmp.js';
import type { BenchFigure } from './run.js';

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;
const RUN_ID = 'be4c0001';
const READS = 20;

/** kB figures of /proc/<pid>/status, in bytes. */
function procMemory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

/** Makes VmHWM start again from the current RSS (Linux clear_refs), so the peak is that of the reads. */
function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

function sparseFile(path: string, size: number): string {
  writeFileSync(path, '');
  truncateSync(path, size);
  return path;
}

/** A sparse 1 GiB log whose last 2 MiB are real lines (what the tail shows). */
function writeLog(path: string): void {
  const lines: string[] = [];
  for (let i = 0, size = 0; size < 2 * MIB; i++) {
    const line = `Step ${i}: reward/mean=0.${i % 997} train/loss=${(i * 13) % 101} tokens=${i * 4096}\n`;
    lines.push(line);
    size += line.length;
  }
  const tail = lines.join('');
  sparseFile(path, GIB - Buffer.byteLength(tail));
  appendFileSync(path, tail);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export default async function resourcesBench(): Promise<BenchFigure[]> {
  const home = mkdtempSync(join(tmpdir(), 'rlmcp-bench-resources-'));
  const runDir = join(home, 'runs', RUN_ID);
  mkdirSync(runDir, { recursive: true });
  const log = join(runDir, 'trainer.log');
  writeLog(log);
  writeFileSync(join(runDir, 'run.json'), JSON.stringify({ run_id: RUN_ID, environment: 'bench', status: 'running', created_at: new Date().toISOString() }));

  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [DIST_ENTRY],
    env: { RL_HOME: home, LOG_LEVEL: 'warn', PATH: process.env.PATH ?? '' },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'bench', version: '0.0.0' });
  try {
    await client.connect(transport);
    const pid = transport.pid!;
    const uri = `rl://runs/${RUN_ID}/logs/trainer`;
    // One read to load the code paths, then the server's memory as the reference.
    await client.readResource({ uri: `rl://runs/${RUN_ID}` });
    resetPeak(pid);
    const before = procMemory(pid);
    const times: number[] = [];
    let shown = 0;
    for (let i = 0; i < READS; i++) {
      const started = performance.now();
      const result = await client.readResource({ uri });
      times.push(performance.now() - started);
      const content = result.contents[0];
      shown = content && 'text' in content ? content.text.length : 0;
    }
    const after = procMemory(pid);

    const baselineLog = freemem() > 3 * GIB ? log : sparseFile(join(home, 'baseline.log'), 100 * MIB);
    const rssBefore = process.memoryUsage().rss;
    const started = performance.now();
    const whole = await readFile(baselineLog);
    const baselineMs = performance.now() - started;
    const baselineRss = process.memoryUsage().rss - rssBefore;
    const baselineName = `fs.readFile of the whole ${whole.length / MIB} MiB log`;

    return [
      {
        name: `resources/read tail of a 1 GiB log (median of ${READS}, ${shown} chars shown)`,
        value: median(times),
        unit: 'ms',
        baseline: { name: baselineName, value: baselineMs, unit: 'ms' },
        target: '< 50 ms',
        note: `max ${Math.max(...times).toFixed(1)} ms`,
      },
      {
        name: 'server RSS growth over those reads (peak VmHWM after - VmRSS before)',
        value: (after.peak - before.rss) / MIB,
        unit: 'MiB',
        baseline: { name: `${baselineName}: RSS growth of this process`, value: baselineRss / MIB, unit: 'MiB' },
        target: '< 20 MiB',
        note: `server RSS ${(before.rss / MIB).toFixed(1)} -> ${(after.rss / MIB).toFixed(1)} MiB`,
      },
    ];
  } finally {
    await client.close().catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  }
}
