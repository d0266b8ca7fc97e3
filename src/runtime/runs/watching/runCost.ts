/**
 * A run's cost, from the runs side: the measured rollout lengths an estimate uses, the estimate of
 * a selection (its framework reads the run's shape from its config), the budget checks of a start
 * against the active runs, and what status answers and listings say of a run's spend: the estimate,
 * and beside it what Tinker billed (run.json `tinker`, runs/usage.ts); budgets hold a run to the
 * larger of the two (docs/architecture.md, "Cost and budgets").
 */
import type { Settings } from '../../../core/settings.js';
import { budgetReached, budgetRefusal, ESTIMATED, type SpendSource, totalBudgetReached } from '../../cost/budget.js';
import type { RunEstimate } from '../../cost/estimate.js';
import { planOf, spendOf, type CostPlan } from '../../cost/spend.js';
import type { RunRecord } from '../seams/record.js';
import { UserError } from '../../../core/errors.js';
import type { RunSelection } from '../seams/framework.js';
import { frameworkFor } from '../choice/frameworks.js';
import type { Billed } from '../../tinker/billing.js';

export interface SelectionEstimate {
  estimate: RunEstimate;
  /** Why a start would be refused over the budgets now. */
  refusal?: UserError;
}

/** The estimate of a run of `selection` before it starts (the config as a start would build it), and the budget check against `active`. */
export function estimateSelection(settings: Settings, selection: RunSelection, active: readonly RunRecord[]): SelectionEstimate {
  const estimate = frameworkFor(selection).estimate(settings, selection);
  try {
    refuseOverBudget(settings, estimate, active);
    return { estimate };
  } catch (err) {
    if (err instanceof UserError) return { estimate, refusal: err };
    throw err;
  }
}

/** What an active run is counted for against RL_MAX_TOTAL_COST_USD: its total estimate, or its spend when more. */
function committed(record: RunRecord): number {
  const plan = record.cost;
  if (plan?.spend_scenario === undefined) return Math.max(0, spentForBudget(record)?.usd ?? 0);
  const total = plan.total_usd[plan.spend_scenario] ?? 0;
  return Math.max(total, spentForBudget(record)?.usd ?? 0);
}

/** Throws the refusal of a start whose estimate does not fit the budgets left by `active`. */
export function refuseOverBudget(settings: Settings, estimate: RunEstimate, active: readonly RunRecord[]): void {
  const refusal = budgetRefusal(estimate, settings.cost, active.map((r) => ({ run_id: r.run_id, usd: committed(r) })));
  if (refusal) throw refusal;
}

/** What the run's record keeps of its estimate: the rates and the lengths spend is counted with. */
export function planFor(settings: Settings, estimate: RunEstimate): CostPlan {
  const price = settings.cost.prices[estimate.shape.model];
  const scenario = estimate.total_usd.expected ? estimate.lengths?.expected : estimate.lengths?.high;
  return planOf(estimate, settings.cost.maxRunUsd, price, scenario);
}

function spendOfRecord(record: RunRecord): ReturnType<typeof spendOf> {
  const o = record.observed;
  return record.cost && spendOf(record.cost, { steps: o?.steps_completed ?? 0, sequences: o?.sequences_trained, batches: o?.batch_tokens, total_steps: o?.total_steps, logged: o?.logged_tokens });
}

/** What Tinker billed, as answers show it beside the estimate: when it was asked. */
export type BilledAnswer = Billed & { checked_at: string };

/** The `cost` of a status answer and of rl_get_results. */
export interface RunCost {
  estimate: true;
  basis: string;
  spent_usd?: number;
  remaining_usd?: number;
  total_usd: CostPlan['total_usd'];
  budget_usd?: number;
  unknown: string[];
  price_source?: { source: string; date: string };
  /** What Tinker billed so far, once asked (never instead of spent_usd). */
  billed?: BilledAnswer;
}

const billedOf = (record: RunRecord): { billed?: BilledAnswer } => (record.tinker ? { billed: { ...record.tinker.billed, checked_at: record.tinker.checked_at } } : {});

/** The spend a budget holds the run to: its estimate, or what Tinker billed when that is more. */
function spentForBudget(record: RunRecord): { usd: number; source: SpendSource } | undefined {
  const estimated = spendOfRecord(record)?.spent_usd;
  const billed = record.tinker?.billed.usd ?? undefined;
  if (billed !== undefined && (estimated === undefined || billed > estimated)) {
    return { usd: billed, source: { what: 'billed spend', basis: `Tinker's billing up to ${record.tinker?.billed.as_of ?? 'now'}, ${estimated === undefined ? 'with no estimate' : `above the estimate of $${estimated}`}` } };
  }
  return estimated === undefined ? undefined : { usd: estimated, source: ESTIMATED };
}

export function runCost(record: RunRecord): RunCost | undefined {
  const plan = record.cost;
  if (plan === undefined) return undefined;
  const spend = spendOfRecord(record);
  return {
    estimate: true,
    basis: spend?.basis ?? `estimate: no dollar figure (${plan.unknown[0] ?? 'no price'})`,
    ...(spend ? { spent_usd: spend.spent_usd, remaining_usd: spend.remaining_usd } : {}),
    total_usd: plan.total_usd,
    ...(plan.budget_usd !== undefined ? { budget_usd: plan.budget_usd } : {}),
    unknown: plan.unknown,
    ...(plan.price ? { price_source: { source: plan.price.source, date: plan.price.as_of } } : {}),
    ...billedOf(record),
  };
}

export interface ListedCost {
  spent_usd: number;
  expected_total_usd: number;
  basis: string;
  /** What Tinker billed as last asked (null: it could not be read), and up to when. */
  billed_usd?: number | null;
  billed_as_of?: string | null;
}

/** What a listing says of a run's cost: spend and expected total, one basis, and the billed figure once asked. */
export function listedCost(record: RunRecord): ListedCost | undefined {
  const plan = record.cost;
  const spend = spendOfRecord(record);
  if (plan?.spend_scenario === undefined || spend === undefined) return undefined;
  const billed = record.tinker?.billed;
  return {
    spent_usd: spend.spent_usd,
    expected_total_usd: plan.total_usd[plan.spend_scenario]!,
    basis: `estimate (${plan.spend_scenario} figures, price as of ${plan.price?.as_of ?? '?'})`,
    ...(billed ? { billed_usd: billed.usd, billed_as_of: billed.as_of } : {}),
  };
}

/** Why the run must stop now: its spend reached its budget, or with `othersUsd` (the other active runs' spend) the total budget. */
export function budgetStop(record: RunRecord, othersUsd: number, maxTotalUsd: number | undefined): string | undefined {
  const spend = spentForBudget(record);
  return spend && (budgetReached(spend.usd, record.cost?.budget_usd, spend.source) ?? totalBudgetReached(spend.usd, othersUsd, maxTotalUsd, spend.source));
}

/** What the active runs other than `runId` spent so far: each one's estimate, or its billed spend when more. */
export function spentByOthers(active: readonly RunRecord[], runId: string): number {
  return active.reduce((sum, r) => sum + (r.run_id === runId ? 0 : (spentForBudget(r)?.usd ?? 0)), 0);
}
