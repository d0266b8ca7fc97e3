/**
 * The campaign budget, as decisions on the ledger's window (RL_MAX_TOTAL_COST_USD over
 * RL_BUDGET_WINDOW): what is left, whether a paid action's estimate fits it, and whether the cap is
 * reached, when every active paid action stops. Pure; tested as tables in test/unit/ledger.test.ts.
 */
import { money, moneys } from '../cost/money.js';
import type { BudgetWindow, SpendKind, WindowTotals } from './entries.js';
import type { Settings } from '../../core/settings.js';

/** The window of RL_MAX_TOTAL_COST_USD (RL_BUDGET_WINDOW). */
export const budgetWindowOf = (settings: Pick<Settings, 'cost'>): BudgetWindow => (settings.cost.budgetWindowSeconds === undefined ? {} : { seconds: settings.cost.budgetWindowSeconds });

const KIND_WORDS: Record<SpendKind, string> = { run: 'runs', evaluation: 'evaluations', inference_test: 'inference tests' };

/** "all of RL_HOME" or "the last 24h". */
export function windowWords(window: BudgetWindow): string {
  if (window.seconds === undefined) return 'all of RL_HOME';
  const s = window.seconds;
  const [n, unit] = s % 86_400 === 0 ? [s / 86_400, 'd'] : s % 3600 === 0 ? [s / 3600, 'h'] : s % 60 === 0 ? [s / 60, 'm'] : [s, 's'];
  return `the last ${n}${unit}`;
}

/** "$0.4123 in all of RL_HOME: runs $0.4 (run a1b2 $0.3, ...), evaluations $0.0123": what was spent, by what. */
export function spentWords(totals: WindowTotals, window: BudgetWindow, shownIds = 3): string {
  const kinds = (Object.keys(totals.by_kind) as SpendKind[]).filter((k) => totals.by_kind[k] > 0);
  if (kinds.length === 0) return `nothing spent in ${windowWords(window)}`;
  const parts = kinds.map((k) => {
    const ids = totals.by_id.filter((s) => s.kind === k);
    const named = ids.slice(0, shownIds).map((s) => `${s.id} ${money(s.usd)}`);
    const more = ids.length > shownIds ? `, ${ids.length - shownIds} more` : '';
    return `${KIND_WORDS[k]} ${money(totals.by_kind[k])} (${named.join(', ')}${more})`;
  });
  return `${money(totals.total_usd)} spent in ${windowWords(window)}: ${parts.join(', ')}`;
}

/** What is left of the cap after the window's spend (never below 0). */
export const leftOf = (totals: WindowTotals, capUsd: number): number => Math.max(0, capUsd - totals.total_usd);

/**
 * Why a paid action of `highUsd` at most may not start: it does not fit what is left; undefined
 * when it fits or no cap is set. `highUsd` undefined: no estimate, so only a spent cap refuses.
 */
export function jobRefusal(what: string, highUsd: number | undefined, capUsd: number | undefined, totals: WindowTotals, window: BudgetWindow): string | undefined {
  if (capUsd === undefined) return undefined;
  const left = leftOf(totals, capUsd);
  if (left > 0 && (highUsd === undefined || highUsd <= left)) return undefined;
  const [cap, l, high] = moneys(capUsd, left, highUsd ?? 0);
  const asked = highUsd === undefined ? 'nothing is left' : `its high estimate ${high} does not fit what is left, ${l}`;
  return `Refused: ${what}: RL_MAX_TOTAL_COST_USD=${cap} leaves ${l} (${spentWords(totals, window)}); ${asked}. Wait for spend to leave the window, or have the operator raise the budget.`;
}

/**
 * Why every active paid action stops now: the window's spend reached the cap, or the next step of
 * the action asking (`stepUsd`, a run's) would pass it.
 */
export function capReached(totals: WindowTotals, capUsd: number | undefined, window: BudgetWindow, stepUsd = 0): string | undefined {
  if (capUsd === undefined || (totals.total_usd < capUsd && totals.total_usd + stepUsd <= capUsd)) return undefined;
  const [, cap, step] = moneys(totals.total_usd, capUsd, stepUsd);
  const how = totals.total_usd >= capUsd ? 'reached' : `and one more step of this run (${step}) would pass`;
  return `budget reached: ${spentWords(totals, window)}, which ${how} RL_MAX_TOTAL_COST_USD=${cap}, so every active paid action stops`;
}
