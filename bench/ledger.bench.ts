/**
 * The spend ledger at 10,000 entries (files in the OS cache): appending one figure, the window's
 * total as a new reader gets it (every writer's file read and parsed: a server's first budget
 * check) and as a reader that read before gets it (only what was appended since: each look of a
 * run's watchdog, each start's check), in all and over 24h. Baseline from the same run: reading
 * one run's record (RunStore.read), which every look and status answer does anyway.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LEDGER_DIR, SpendLedger } from '../src/runtime/ledger/ledger.js';
import type { LedgerEntry } from '../src/runtime/ledger/entries.js';
import { RunStore } from '../src/runtime/runs/registry/store.js';
import { writeRunDirs } from '../test/helpers/registry.js';
import type { BenchFigure } from './run.js';

const ENTRIES = 10_000;
/** Writers (servers and keepers) that wrote them, and the paid actions they count. */
const WRITERS = 20;
const IDS = 1_000;
const ROUNDS = 200;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Microseconds: an append and a record read take a fraction of a millisecond. */
function timedUs(work: () => unknown): number {
  const started = performance.now();
  work();
  return (performance.now() - started) * 1000;
}

/** 10,000 cumulative figures over the last 7 days, spread over the writers' files. */
function seed(home: string, nowMs: number): void {
  const dir = join(home, LEDGER_DIR);
  mkdirSync(dir, { recursive: true });
  const lines: string[][] = Array.from({ length: WRITERS }, () => []);
  for (let i = 0; i < ENTRIES; i++) {
    const n = i % IDS;
    const kind = n % 10 === 0 ? 'evaluation' : n % 10 === 1 ? 'inference_test' : 'run';
    const entry: LedgerEntry = { kind, id: n.toString(16).padStart(8, '0'), model: 'Qwen/Qwen3-8B', at: new Date(nowMs - 7 * 86_400_000 + i * 60_000).toISOString(), usd: (i + 1) * 0.0001, tokens: { prefill: 1000 * i, sample: 2000 * i, train: 3000 * i }, basis: 'estimate' };
    lines[i % WRITERS]!.push(JSON.stringify(entry));
  }
  lines.forEach((l, w) => writeFileSync(join(dir, `bench-${w}.jsonl`), `${l.join('\n')}\n`));
}

export default async function ledgerBench(): Promise<BenchFigure[]> {
  const root = mkdtempSync(join(tmpdir(), 'rlmcp-bench-ledger-'));
  const home = join(root, 'rl_training');
  try {
    const nowMs = Date.now();
    seed(home, nowMs);
    const [runId] = writeRunDirs(home, 1);
    const store = new RunStore(home);
    const reads: number[] = [];
    for (let i = 0; i < ROUNDS; i++) reads.push(timedUs(() => store.read(runId!)));
    const baseline = { name: "reading one run's record (RunStore.read)", value: median(reads), unit: 'µs' };

    const cold: number[] = [];
    for (let i = 0; i < 15; i++) cold.push(timedUs(() => new SpendLedger(home).totals({})));
    const ledger = new SpendLedger(home);
    ledger.totals({});
    const appends: number[] = [];
    const warm: number[] = [];
    const warmDay: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      appends.push(timedUs(() => ledger.record({ kind: 'run', id: 'benchrun', model: 'Qwen/Qwen3-8B', usd: i + 1, tokens: { prefill: i, sample: i, train: i }, basis: 'estimate' })));
      warm.push(timedUs(() => ledger.totals({})));
      warmDay.push(timedUs(() => ledger.totals({ seconds: 86_400 })));
    }
    const total = ledger.totals({});
    const note = `${ENTRIES} entries in ${WRITERS} files, ${total.by_id.length} ids`;
    return [
      { name: 'ledger append (one figure, O_APPEND)', value: median(appends), unit: 'µs', baseline },
      { name: 'window total, a reader that read before (all)', value: median(warm), unit: 'µs', baseline, note },
      { name: 'window total, a reader that read before (24h)', value: median(warmDay), unit: 'µs', baseline },
      { name: 'window total, a new reader (every file parsed)', value: median(cold), unit: 'µs', baseline, note },
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
