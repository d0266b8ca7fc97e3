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
import { planOf, spendOf, spentTokens, type CostPlan, type RunProgress } from '../../cost/spend.js';
import type { RunRecord } from '../seams/record.js';
import { UserError } from '../../../core/errors.js';
import type { RunSelection } from '../seams/framework.js';
import { frameworkFor } from '../choice/frameworks.js';
import type { Billed } from '../../tinker/billing.js';
import type { BudgetWindow, LedgerEntry, WindowTotals } from '../../ledger/entries.js';
import { budgetWindowOf, capReached, spentWords } from '../../ledger/budget.js';
import { ledgerOf, type SpendLedger } from '../../ledger/ledger.js';
import type { Logger } from '../../../core/logger.js';
import { money } from '../../cost/money.js';

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

/** What an active run is counted for against RL_MAX_TOTAL_COST_USD: its total estimate, or its spend when more (what of it is not spent yet is held for it). */
function committed(record: RunRecord): number {
  const plan = record.cost;
  if (plan?.spend_scenario === undefined) return Math.max(0, spentForBudget(record)?.usd ?? 0);
  const total = plan.total_usd[plan.spend_scenario] ?? 0;
  return Math.max(total, spentForBudget(record)?.usd ?? 0);
}

/**
 * Throws the refusal of a start whose estimate does not fit the budgets: what the ledger's window
 * holds already, and the rest of the active runs' expected totals.
 */
export function refuseOverBudget(settings: Settings, estimate: RunEstimate, active: readonly RunRecord[]): void {
  const window = budgetWindowOf(settings);
  const totals = settings.cost.maxTotalUsd === undefined ? undefined : ledgerOf(settings.home).totals(window);
  const inWindow = (id: string): number => totals?.by_id.find((s) => s.kind === 'run' && s.id === id)?.usd ?? 0;
  const spent = totals && { usd: totals.total_usd, words: spentWords(totals, window) };
  const refusal = budgetRefusal(estimate, settings.cost, active.map((r) => ({ run_id: r.run_id, usd: committed(r), spent_usd: inWindow(r.run_id) })), spent);
  if (refusal) throw refusal;
}

/** What the run's record keeps of its estimate: the rates and the lengths spend is counted with. */
export function planFor(settings: Settings, estimate: RunEstimate): CostPlan {
  const price = settings.cost.prices[estimate.shape.model];
  const scenario = estimate.total_usd.expected ? estimate.lengths?.expected : estimate.lengths?.high;
  return planOf(estimate, settings.cost.maxRunUsd, price, scenario);
}

function progressOf(record: RunRecord): RunProgress {
  const o = record.observed;
  return { steps: o?.steps_completed ?? 0, sequences: o?.sequences_trained, batches: o?.batch_tokens, total_steps: o?.total_steps, logged: o?.logged_tokens };
}

/** The run's spend by its record: the estimate from its progress, never below the most it was counted at before. */
function spendOfRecord(record: RunRecord): ReturnType<typeof spendOf> {
  const spend = record.cost && spendOf(record.cost, progressOf(record));
  const high = record.spent_high_usd;
  if (spend === undefined || high === undefined || high <= spend.spent_usd) return spend;
  return { ...spend, spent_usd: high, basis: `${spend.basis}; held at ${money(high)}, the most it was counted at (the mean over more batches came out lower: a spend never goes down)` };
}

/** Keeps in the record the most its spend estimate has been counted at: called at every write of run.json. */
export function holdSpend(record: RunRecord): void {
  const spent = spendOfRecord(record)?.spent_usd;
  if (spent !== undefined) record.spent_high_usd = spent;
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
    return { usd: billed, source: { what: 'billed spend', basis: `Tinker's billing up to ${record.tinker?.billed.as_of ?? 'now'}, ${estimated === undefined ? 'with no estimate' : `above the estimate of ${money(estimated)}`}` } };
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

/** The campaign budget a running run is held to: the cap, its window, what the ledger's window holds, the active runs. */
export interface TotalBudget {
  capUsd: number;
  window: BudgetWindow;
  totals: WindowTotals;
  activeRunIds: ReadonlySet<string>;
}

/**
 * Why the run must stop now: its spend reached its budget, or the ledger's window total reached
 * RL_MAX_TOTAL_COST_USD (said as the active runs' spend when they are all the window holds); or one
 * more step at the rate its spend is counted with would pass either, so a run stops before a step
 * that would take it over (the window's total ends at most one step of the last run over the cap:
 * runs supervised apart may each take their step).
 */
export function budgetStop(record: RunRecord, total?: TotalBudget): string | undefined {
  const spend = spentForBudget(record);
  const step = spendOfRecord(record)?.step_usd ?? 0;
  const own = spend && budgetReached(spend.usd, record.cost?.budget_usd, spend.source, step);
  if (own !== undefined || total === undefined) return own;
  const { totals, capUsd } = total;
  const mine = totals.by_id.find((s) => s.kind === 'run' && s.id === record.run_id)?.usd ?? 0;
  if (spend && totals.by_id.every((s) => s.kind === 'run' && total.activeRunIds.has(s.id))) return totalBudgetReached(mine, totals.total_usd - mine, capUsd, spend.source, step);
  const reached = capReached(totals, capUsd, total.window, step);
  return reached && `${reached} (this run ${spend ? `${spend.source.what} ${money(mine)}` : 'no spend'}; the latest checkpoint is kept)`;
}

/** The run's figure for the ledger: its spend (the estimate, or what Tinker billed when more) and the tokens counted; none without a figure. */
export function runLedgerEntry(record: RunRecord): Omit<LedgerEntry, 'at'> | undefined {
  const forBudget = spentForBudget(record);
  if (forBudget === undefined) return undefined;
  const tokens = (record.cost && spentTokens(record.cost, progressOf(record))) ?? { prefill: 0, sample: 0, train: 0 };
  return { kind: 'run', id: record.run_id, model: record.cost?.model ?? 'unknown', usd: forBudget.usd, tokens, basis: forBudget.source === ESTIMATED ? 'estimate' : 'billed' };
}

/** Writes the run's figure to the ledger when it moved; a failed write is logged and made good by the next. */
export function recordRunSpend(ledger: SpendLedger, record: RunRecord, logger?: Logger): void {
  const entry = runLedgerEntry(record);
  if (entry === undefined) return;
  try {
    ledger.record(entry);
  } catch (err) {
    logger?.warn({ err, run_id: record.run_id }, "could not write the run's spend to the ledger");
  }
}
