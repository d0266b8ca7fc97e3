/**
 * What leases and partners cost a keeper (src/core/os/lease.ts, src/runtime/runs/keeper/partner.ts):
 * - a keeper's CPU per minute while its run trains, and the share of it its lease takes (the
 *   renewals it makes in a minute, each a read of the lock and a rewrite, timed here over many);
 * - the partner's memory beside its keeper's;
 * - a keeper killed with SIGKILL until a new keeper holds the run: its partner's doing, beside the
 *   way before partners, a server's look every 2 s (keeper and partner both killed, a server alive).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileLock } from '../src/core/os/fileLock.js';
import { LEASE } from '../src/core/os/lease.js';
import { Runtime } from '../src/runtime/wiring/runtime.js';
import type { RunRecord } from '../src/runtime/runs/seams/record.js';
import { makeFakeInstall } from '../test/helpers/fakeInstall.js';
import type { BenchFigure } from './run.js';
import { fakeRunSettings } from './runSettings.js';

const ROUNDS = 5;
const CPU_WINDOW_MS = 30_000;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const TICKS = 100;

/** CPU seconds a process has used (user + system), from /proc. */
function cpuSeconds(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}

const rssMb = (pid: number): number => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

/** The partner of a keeper: its child running the shell. */
function partnerOf(keeper: number): number | undefined {
  const children = readFileSync(`/proc/${keeper}/task/${keeper}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  return children.find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('keeper-partner'));
}

async function waitFor<T>(probe: () => T | undefined, seconds = 60): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(5);
  }
}

export default async function leaseBench(): Promise<BenchFigure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'rlmcp-bench-lease-'));
  const install = await makeFakeInstall({ dir: join(dir, 'install') });
  install.trainerControl({ step_seconds: 5 });
  mkdirSync(join(dir, 'tinker'));
  const settings = await fakeRunSettings(dir, install);
  const runtime = new Runtime(settings);
  const runs = runtime.runs;
  const partnered: number[] = [];
  const byServer: number[] = [];
  let cpu = { keeperMs: NaN, renewalMs: NaN, keeperRss: NaN, partnerRss: NaN };
  try {
    const { config } = await runtime.selection.select('gsm8k');
    const { record } = await runs.start(config);
    const id = record.run_id;
    await waitFor(() => ((runs.get(id) as RunRecord).status === 'running' ? true : undefined));
    const keeper = runs.keeperOf(id)!;
    const before = cpuSeconds(keeper);
    await sleep(CPU_WINDOW_MS);
    const keeperMs = ((cpuSeconds(keeper) - before) * 1000 * 60_000) / CPU_WINDOW_MS;
    // One renewal as the keeper makes it: is the lock ours, then the rewrite; timed over many.
    const lock = new FileLock(join(dir, 'bench.lock'));
    lock.tryAcquire();
    const n = 2_000;
    const started = process.cpuUsage();
    for (let i = 0; i < n; i++) if (lock.isHeld()) lock.renew();
    const used = process.cpuUsage(started);
    const renewalMs = ((used.user + used.system) / 1000 / n) * (60_000 / LEASE.renewMs);
    const partner = partnerOf(keeper);
    cpu = { keeperMs, renewalMs, keeperRss: rssMb(keeper), partnerRss: partner === undefined ? NaN : rssMb(partner) };

    for (let round = 0; round < ROUNDS; round++) {
      const dead = runs.keeperOf(id)!;
      const killedAt = performance.now();
      process.kill(dead, 'SIGKILL');
      await waitFor(() => { const k = runs.keeperOf(id); return k !== undefined && k !== dead ? k : undefined; });
      partnered.push((performance.now() - killedAt) / 1000);
      await sleep(1_000);
      // The way before partners: keeper and partner killed, the server's look finds the run unkept.
      const next = runs.keeperOf(id)!;
      const itsPartner = await waitFor(() => partnerOf(next));
      const bothAt = performance.now();
      process.kill(itsPartner, 'SIGKILL');
      process.kill(next, 'SIGKILL');
      await waitFor(() => { const k = runs.keeperOf(id); return k !== undefined && k !== next ? k : undefined; });
      byServer.push((performance.now() - bothAt) / 1000);
      await sleep(1_000);
    }
    await runs.stop(id);
  } finally {
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return [
    {
      name: "a keeper's CPU per minute while its run trains, lease renewals included",
      value: cpu.keeperMs,
      unit: 'ms',
      baseline: { name: `the lease's share: ${60_000 / LEASE.renewMs} renewals a minute (is the lock ours, then its rewrite), timed over 2,000`, value: cpu.renewalMs, unit: 'ms' },
      note: `without renewals about ${(cpu.keeperMs - cpu.renewalMs).toFixed(1)} ms a minute; keeper RSS ${cpu.keeperRss.toFixed(1)} MB, its partner ${cpu.partnerRss.toFixed(1)} MB`,
    },
    {
      name: `a keeper killed with SIGKILL until a new keeper holds the run: its partner (median of ${ROUNDS})`,
      value: median(partnered),
      unit: 's',
      baseline: { name: "before partners: keeper and partner killed, a server's look (every 2 s) starts one", value: median(byServer), unit: 's' },
      target: '<= 10 s',
      note: `rounds ${partnered.map((s) => s.toFixed(3)).join(', ')} s; by the server ${byServer.map((s) => s.toFixed(3)).join(', ')} s`,
    },
  ];
}
