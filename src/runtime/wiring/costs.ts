/**
 * The cost estimate as the tools answer it (rl_estimate_cost, rl_start_training,
 * rl_get_current_config): the run's estimate with whether a start now fits the budgets (and, but
 * for a start, the campaign's spend so far from the ledger), and
 * whether a start must be confirmed by the user first (RL_CONFIRM_ABOVE_USD).
 */
import type { UserError } from '../../core/errors.js';
import type { Settings } from '../../core/settings.js';
import { budgetFigure, type RunEstimate } from '../cost/estimate.js';
import type { RunSelection } from '../runs/seams/framework.js';
import type { Runtime } from './runtime.js';
import { spendAnswer, type SpendAnswer } from '../ledger/spendAnswer.js';

export type EstimateAnswer = Omit<RunEstimate, 'lengths' | 'prefills_per_group'> & {
  budget?: { fits: boolean; max_run_usd?: number; max_total_usd?: number; refusal?: string };
  /** The campaign's spend so far: the ledger's window, by kind and by id, and what is left. */
  spend?: SpendAnswer;
};

/** The estimate without what only spend counting uses, with the budget check when a budget is set. */
export function estimateAnswer(settings: Settings, estimate: RunEstimate, refusal?: UserError): EstimateAnswer {
  const { lengths: _internal, prefills_per_group: _counted, ...answer } = estimate;
  const { maxRunUsd, maxTotalUsd } = settings.cost;
  if (maxRunUsd === undefined && maxTotalUsd === undefined) return answer;
  return {
    ...answer,
    budget: {
      fits: refusal === undefined,
      ...(maxRunUsd !== undefined ? { max_run_usd: maxRunUsd } : {}),
      ...(maxTotalUsd !== undefined ? { max_total_usd: maxTotalUsd } : {}),
      ...(refusal ? { refusal: refusal.message } : {}),
    },
  };
}

/** rl_estimate_cost and rl_get_current_config: the estimate of a run of `selection` if it started now. */
export function costEstimate(runtime: Runtime, selection: RunSelection): EstimateAnswer {
  const { estimate, refusal } = runtime.runs.estimate(selection);
  return { ...estimateAnswer(runtime.settings, estimate, refusal), spend: spendAnswer(runtime.settings) };
}

/**
 * The question put to the user before a start over RL_CONFIRM_ABOVE_USD, or undefined when none
 * is needed. An estimate without a dollar figure (no price) is asked about too, when a threshold is set.
 */
export function confirmationQuestion(settings: Settings, estimate: RunEstimate, environment: string): string | undefined {
  const threshold = settings.cost.confirmAboveUsd;
  if (threshold === undefined) return undefined;
  const figure = budgetFigure(estimate);
  if (figure !== undefined && figure.usd <= threshold) return undefined;
  const which = estimate.total_usd.expected ? 'expected' : 'high-bound';
  const what = figure ? `an estimated ${which} cost of $${figure.usd} (${figure.basis})` : `an unknown cost (${estimate.unknown[0]})`;
  const range = estimate.total_usd.low && estimate.total_usd.high ? ` Estimated range: $${estimate.total_usd.low.usd} to $${estimate.total_usd.high.usd}.` : '';
  return `Start training ${environment} on ${estimate.model}? This is ${what}, above RL_CONFIRM_ABOVE_USD=$${threshold}.${range} These are estimates, not charges.`;
}
