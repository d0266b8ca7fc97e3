/**
 * The campaign budget for sampling jobs on Tinker (evaluations, inference tests): refused at start
 * when the ledger's window leaves nothing, metered while they sample, and cancelled, with their
 * partial results, by the server that runs them once the window's total reaches
 * RL_MAX_TOTAL_COST_USD (jobs/registry.ts looks every second).
 */
import { UserError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { Settings } from '../../core/settings.js';
import { budgetWindowOf, capReached, jobRefusal } from './budget.js';
import type { SpendKind } from './entries.js';
import { ledgerOf } from './ledger.js';
import { SamplingMeter } from './meter.js';

/** Throws the refusal of a paid sampling job that does not fit what the window leaves. */
export function refuseSampling(settings: Settings, what: string, highUsd?: number): void {
  const cap = settings.cost.maxTotalUsd;
  if (cap === undefined) return;
  const window = budgetWindowOf(settings);
  const totals = ledgerOf(settings.home).totals(window);
  const refusal = jobRefusal(what, highUsd, cap, totals, window);
  if (refusal) throw new UserError(refusal, { total_budget_usd: cap, window_spent_usd: totals.total_usd, left_usd: Math.max(0, cap - totals.total_usd), spent_by_kind: totals.by_kind });
}

/** Why every paid job stops now: the window's total reached the cap; undefined otherwise. */
export function samplingStop(settings: Settings): string | undefined {
  const cap = settings.cost.maxTotalUsd;
  if (cap === undefined) return undefined;
  const window = budgetWindowOf(settings);
  const reached = capReached(ledgerOf(settings.home).totals(window), cap, window);
  return reached && `${reached} (partial results kept)`;
}

/** The meter of a job sampling on Tinker; a checkpoint (tinker://) is priced as `pricedAs`, its base model. */
export function samplingMeter(settings: Settings, job: { kind: Exclude<SpendKind, 'run'>; id: string; model: string }, pricedAs: string | undefined, logger?: Logger): SamplingMeter {
  const { prices } = settings.cost;
  return new SamplingMeter(ledgerOf(settings.home), job, (model) => prices[model] ?? (pricedAs !== undefined ? prices[pricedAs] : undefined), logger);
}
