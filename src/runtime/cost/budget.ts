/**
 * The budgets, as decisions: a start is refused when the figure it is held to (expected, else the
 * high bound) exceeds RL_MAX_RUN_COST_USD, or what RL_MAX_TOTAL_COST_USD leaves after the spend
 * the ledger's window holds and the rest of the active runs' own figures (each counted at its
 * expected total, or its spend so far when that is more);
 * a running run is stopped once its spend reaches its budget, or the active runs' together reach the
 * total. A run's spend is the larger of its estimate and what Tinker billed (runs/watching/runCost.ts). Pure.
 */
import { UserError } from '../../core/errors.js';
import type { CostSettings } from '../../core/settings.js';
import { budgetFigure, type RunEstimate } from './estimate.js';
import { money, moneys } from './money.js';

/** What an active run is counted for against the total budget, and what of it the window's spend holds already. */
export interface Committed {
  run_id: string;
  usd: number;
  spent_usd?: number;
}

/** What the ledger's window holds: its total, and the words naming what was spent by what. */
export interface WindowSpent {
  usd: number;
  words: string;
}

/** The refusal of a start over budget, with the figures; undefined when it fits or no budget is set. */
export function budgetRefusal(estimate: RunEstimate, cost: Pick<CostSettings, 'maxRunUsd' | 'maxTotalUsd'>, active: readonly Committed[], spent?: WindowSpent): UserError | undefined {
  const { maxRunUsd, maxTotalUsd } = cost;
  if (maxRunUsd === undefined && maxTotalUsd === undefined) return undefined;
  const figure = budgetFigure(estimate);
  if (figure === undefined) {
    return new UserError(`Cannot check the budget: ${estimate.unknown[0]}. A budget is set, so a run of unknown cost is not started.`, { model: estimate.model });
  }
  const which = estimate.total_usd.expected ? 'expected' : 'high (no inference test measured this environment: run rl_test_inference for an expected figure)';
  const figures = { estimate_usd: figure.usd, figure: which, basis: figure.basis };
  if (maxRunUsd !== undefined && figure.usd > maxRunUsd) {
    const [est, max] = moneys(figure.usd, maxRunUsd);
    return new UserError(`Refused: this run's ${which} cost estimate is ${est}, over RL_MAX_RUN_COST_USD=${max}. Train fewer steps or smaller batches (an Atropos run: total_steps, batch_size, group_size; a cookbook run: max_steps, groups_per_batch, group_size; a locked one is the operator's), or have the operator raise the budget.`, { ...figures, budget_usd: maxRunUsd });
  }
  if (maxTotalUsd !== undefined) {
    const committed = active.reduce((n, r) => n + r.usd, 0);
    // The active runs' spend so far is in the window's; what is held for them is the rest of their totals.
    const held = active.reduce((n, r) => n + Math.max(0, r.usd - (r.spent_usd ?? 0)), 0);
    const left = Math.max(0, maxTotalUsd - (spent?.usd ?? 0) - held);
    if (figure.usd > left) {
      const [est, max, l] = moneys(figure.usd, maxTotalUsd, left);
      const windowSpend = spent ? ` and the ledger's window (${spent.words})` : '';
      return new UserError(`Refused: this run's ${which} cost estimate is ${est}, but RL_MAX_TOTAL_COST_USD=${max} leaves ${l} after the ${active.length} active runs (estimated ${money(committed)}, ${money(held)} of it not spent yet)${windowSpend}. Wait for a run to end or spend to leave the window, stop one, or lower this run's size.`, {
        ...figures,
        total_budget_usd: maxTotalUsd,
        left_usd: Math.round(left * 1e6) / 1e6,
        ...(spent ? { window_spent_usd: spent.usd } : {}),
        active_runs: active.map((r) => ({ run_id: r.run_id, estimate_usd: r.usd })),
      });
    }
  }
  return undefined;
}

/** Which spend a budget was held to: the estimate from steps done, or Tinker's billed figure when that is higher. */
export interface SpendSource {
  /** "estimated spend" or "billed spend". */
  what: string;
  basis: string;
}

export const ESTIMATED: SpendSource = { what: 'estimated spend', basis: 'an estimate from steps done' };

/**
 * The reason a running run must stop: its spend reached its budget, or one more step at the rate its
 * spend is counted with (`stepUsd`) would pass it, so it never ends above its budget.
 */
export function budgetReached(spentUsd: number, budgetUsd: number | undefined, source: SpendSource = ESTIMATED, stepUsd = 0): string | undefined {
  if (budgetUsd === undefined || (spentUsd < budgetUsd && spentUsd + stepUsd <= budgetUsd)) return undefined;
  if (spentUsd >= budgetUsd) {
    const [spent, budget] = moneys(spentUsd, budgetUsd);
    return `budget reached: ${source.what} ${spent} reached RL_MAX_RUN_COST_USD=${budget} (${source.basis}; the latest checkpoint is kept)`;
  }
  const [spent, step, budget] = moneys(spentUsd, stepUsd, budgetUsd);
  return `budget reached: ${source.what} ${spent} and one more step (${step}) would pass RL_MAX_RUN_COST_USD=${budget}, so the run stops before it (${source.basis}; the latest checkpoint is kept)`;
}

/**
 * The reason a running run must stop once the active runs together spent RL_MAX_TOTAL_COST_USD, or
 * one more step of this run (`stepUsd`) would pass it: each one's further steps would be spent
 * over it, so every active run stops, whichever server supervises it.
 */
export function totalBudgetReached(spentUsd: number, othersUsd: number, totalUsd: number | undefined, source: SpendSource = ESTIMATED, stepUsd = 0): string | undefined {
  const all = spentUsd + othersUsd;
  if (totalUsd === undefined || (all < totalUsd && all + stepUsd <= totalUsd)) return undefined;
  const [a, mine, step, total] = moneys(all, spentUsd, stepUsd, totalUsd);
  const how = all >= totalUsd ? 'reached' : `and one more step of this run (${step}) would pass`;
  return `budget reached: ${source.what} of the active runs ${a} (this run ${mine}) ${how} RL_MAX_TOTAL_COST_USD=${total}, so every active run stops (${source.basis}; the latest checkpoint is kept)`;
}
