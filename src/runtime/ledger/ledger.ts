/**
 * The spend ledger: one record of every dollar our paid actions cost, under RL_HOME/ledger/. Each
 * writing process (a server, a run's keeper) appends to a file of its own, `<host>-<pid>.jsonl`,
 * one JSON line per write with O_APPEND, so writers never share a file: nothing interleaves or
 * is lost, whatever the file system (NFS included). A reader reads every file, each from where it
 * last stopped, up to its last whole line. What an entry means and how a window totals is
 * entries.ts's.
 */
import { appendFileSync, mkdirSync, openSync, readSync, closeSync, fstatSync, readdirSync } from 'node:fs';
import { THIS_HOST } from '../../core/os/host.js';
import { join } from 'node:path';
import { isMissing } from '../../core/files/safePath.js';
import { parseEntry, windowTotals, type BudgetWindow, type LedgerEntry, type WindowTotals } from './entries.js';

export const LEDGER_DIR = 'ledger';

/** One file as read so far: where reading stopped (past its last whole line) and what it held. */
interface ReadFile {
  offset: number;
  entries: LedgerEntry[];
}

export class SpendLedger {
  readonly dir: string;
  private readonly file: string;
  private readonly files = new Map<string, ReadFile>();
  /** What this process last wrote per id, so an unchanged figure is not written again. */
  private readonly written = new Map<string, number>();

  constructor(home: string) {
    this.dir = join(home, LEDGER_DIR);
    this.file = join(this.dir, `${THIS_HOST.hostname.replace(/[^A-Za-z0-9._-]/g, '_')}-${process.pid}.jsonl`);
  }

  /** Appends the action's figure, unless this process wrote the same one last; returns whether it wrote. */
  record(entry: Omit<LedgerEntry, 'at'> & { at?: string }): boolean {
    const key = `${entry.kind}/${entry.id}`;
    if (this.written.get(key) === entry.usd) return false;
    const line = `${JSON.stringify({ ...entry, at: entry.at ?? new Date().toISOString() })}\n`;
    mkdirSync(this.dir, { recursive: true });
    appendFileSync(this.file, line, { mode: 0o600 });
    this.written.set(key, entry.usd);
    return true;
  }

  /** Every entry of every writer, as far as written. */
  entries(): LedgerEntry[] {
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((n) => n.endsWith('.jsonl'));
    } catch (err) {
      if (isMissing(err)) return [];
      throw err;
    }
    for (const name of names) this.readNew(name);
    return [...this.files.values()].flatMap((f) => f.entries);
  }

  /** The window's spend by now: by kind and by id. */
  totals(window: BudgetWindow, nowMs = Date.now()): WindowTotals {
    return windowTotals(this.entries(), window, nowMs);
  }

  private readNew(name: string): void {
    const seen = this.files.get(name) ?? { offset: 0, entries: [] };
    this.files.set(name, seen);
    const fd = openSync(join(this.dir, name), 'r');
    try {
      const size = fstatSync(fd).size;
      if (size <= seen.offset) return;
      const buffer = Buffer.alloc(size - seen.offset);
      const got = readSync(fd, buffer, 0, buffer.length, seen.offset);
      const text = buffer.subarray(0, got).toString('utf8');
      const end = text.lastIndexOf('\n');
      if (end < 0) return;
      for (const line of text.slice(0, end).split('\n')) {
        const entry = parseEntry(line);
        if (entry) seen.entries.push(entry);
      }
      seen.offset += Buffer.byteLength(text.slice(0, end + 1));
    } finally {
      closeSync(fd);
    }
  }
}

const ledgers = new Map<string, SpendLedger>();

/** The ledger of RL_HOME `home`, one per process. */
export function ledgerOf(home: string): SpendLedger {
  let ledger = ledgers.get(home);
  if (!ledger) ledgers.set(home, (ledger = new SpendLedger(home)));
  return ledger;
}
