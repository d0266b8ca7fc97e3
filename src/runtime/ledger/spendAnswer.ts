/**
 * What the answers say of the campaign's spend (rl_estimate_cost, rl_get_current_config,
 * rl_list_runs, the dashboard): the ledger's window total by kind and by id, and what
 * RL_MAX_TOTAL_COST_USD leaves of it. Figures exact; the ledger is their one source.
 */
import type { Settings } from '../../core/settings.js';
import { budgetWindowOf, windowWords } from './budget.js';
import type { SpendKind } from './entries.js';
import { ledgerOf } from './ledger.js';

/** The ids listed, the largest first; the rest are in the totals by kind. */
const LISTED = 10;

export interface SpendAnswer {
  /** "all of RL_HOME" or "the last 24h" (RL_BUDGET_WINDOW), and since when (null: all). */
  window: string;
  since: string | null;
  total_usd: number;
  by_kind: Record<SpendKind, number>;
  /** The largest spenders of the window. */
  by_id: Array<{ kind: SpendKind; id: string; usd: number; basis: 'estimate' | 'billed' }>;
  /** Ids with spend in the window past those listed. */
  more?: number;
  max_total_usd?: number;
  left_usd?: number;
  note: string;
}

export function spendAnswer(settings: Settings, nowMs = Date.now()): SpendAnswer {
  const window = budgetWindowOf(settings);
  const totals = ledgerOf(settings.home).totals(window, nowMs);
  const cap = settings.cost.maxTotalUsd;
  return {
    window: windowWords(window),
    since: totals.since,
    total_usd: totals.total_usd,
    by_kind: totals.by_kind,
    by_id: totals.by_id.slice(0, LISTED).map(({ kind, id, usd, basis }) => ({ kind, id, usd, basis })),
    ...(totals.by_id.length > LISTED ? { more: totals.by_id.length - LISTED } : {}),
    ...(cap !== undefined ? { max_total_usd: cap, left_usd: Math.max(0, cap - totals.total_usd) } : {}),
    note: "From the spend ledger (RL_HOME/ledger): runs at their estimate, or Tinker's billed figure when more; evaluations and inference tests on Tinker from the tokens the endpoint reported, priced as sampling. Estimates, not charges; storage is not counted.",
  };
}

/**
 * A listing's runs with each one's spend as the ledger holds it (its highest figure: the estimate,
 * or what Tinker billed when that was more), so a listing says what budgets count.
 */
export function withLedgerSpend<R extends { run_id: string; cost?: { spent_usd: number; basis: string } }>(settings: Settings, runs: readonly R[]): R[] {
  const figures = new Map(ledgerOf(settings.home).totals({}).by_id.filter((s) => s.kind === 'run').map((s) => [s.id, s]));
  return runs.map((run) => {
    const figure = figures.get(run.run_id);
    if (run.cost === undefined || figure === undefined) return run;
    const basis = figure.basis === 'billed' ? "Tinker's billing (spend ledger), above the estimate" : `${run.cost.basis}; spend ledger`;
    return { ...run, cost: { ...run.cost, spent_usd: figure.usd, basis } };
  });
}
