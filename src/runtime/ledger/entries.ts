/**
 * The spend ledger's entries and what a window of them totals. Pure; tested as tables in
 * test/unit/ledger.test.ts.
 *
 * An entry is what one paid action (a run, an evaluation, an inference test) had cost in all by its
 * time: a cumulative figure per id, and the highest figure of an id counts. A writer appends a new
 * figure whenever it moved, so several writers of one id (a run's keeper, a server that asked
 * Tinker's billing, a keeper that took the run over) never need to know what the others wrote: a
 * figure written twice, or late, or lower (an estimate next to a billed figure) changes nothing,
 * and a lost write is made good by the next. Deltas would count twice whatever two writers both saw.
 * A window's spend of an id is its highest figure by now less its highest figure before the window
 * began, so spend leaves the window as time passes.
 */

export const SPEND_KINDS = ['run', 'evaluation', 'inference_test'] as const;
export type SpendKind = (typeof SPEND_KINDS)[number];

import type { StepTokens } from '../cost/estimate.js';

/** Tokens behind a figure, priced at the price table's rates. */
export type SpendTokens = StepTokens;

export interface LedgerEntry {
  kind: SpendKind;
  id: string;
  model: string;
  /** When the figure was written (ISO). */
  at: string;
  /** Dollars spent by the action in all, by `at`. */
  usd: number;
  tokens: SpendTokens;
  /** An estimate from our own counts, or Tinker's billing priced with the price table. */
  basis: 'estimate' | 'billed';
}

/** A budget window: its length, or undefined for the whole ledger. */
export interface BudgetWindow {
  seconds?: number;
}

export interface SpendOfId {
  kind: SpendKind;
  id: string;
  model: string;
  usd: number;
  basis: LedgerEntry['basis'];
}

export interface WindowTotals {
  /** Since when spend counts (ISO), or null for the whole ledger. */
  since: string | null;
  total_usd: number;
  by_kind: Record<SpendKind, number>;
  /** Each id with spend in the window, the largest first. */
  by_id: SpendOfId[];
}

const KEYS = new Set<string>(SPEND_KINDS);
const number = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** One line of a ledger file; undefined for anything else (a line cut by a crash). */
export function parseEntry(line: string): LedgerEntry | undefined {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const e = v as Partial<LedgerEntry>;
  if (!KEYS.has(e.kind as string) || typeof e.id !== 'string' || typeof e.at !== 'string' || !number(e.usd) || Number.isNaN(Date.parse(e.at))) return undefined;
  return e as LedgerEntry;
}

/** What the entries total over the window ending at `nowMs`. */
export function windowTotals(entries: Iterable<LedgerEntry>, window: BudgetWindow, nowMs: number): WindowTotals {
  const startMs = window.seconds === undefined ? undefined : nowMs - window.seconds * 1000;
  const ids = new Map<string, { latest: LedgerEntry; top: number; before: number }>();
  for (const e of entries) {
    const at = Date.parse(e.at);
    if (at > nowMs) continue;
    const key = `${e.kind}/${e.id}`;
    const seen = ids.get(key) ?? { latest: e, top: 0, before: 0 };
    if (e.usd >= seen.top) seen.latest = e;
    seen.top = Math.max(seen.top, e.usd);
    if (startMs !== undefined && at < startMs) seen.before = Math.max(seen.before, e.usd);
    ids.set(key, seen);
  }
  const byKind: Record<SpendKind, number> = { run: 0, evaluation: 0, inference_test: 0 };
  const byId: SpendOfId[] = [];
  for (const { latest, top, before } of ids.values()) {
    const usd = top - before;
    if (usd <= 0) continue;
    byKind[latest.kind] += usd;
    byId.push({ kind: latest.kind, id: latest.id, model: latest.model, usd, basis: latest.basis });
  }
  byId.sort((a, b) => b.usd - a.usd);
  return { since: startMs === undefined ? null : new Date(startMs).toISOString(), total_usd: byId.reduce((n, s) => n + s.usd, 0), by_kind: byKind, by_id: byId };
}
