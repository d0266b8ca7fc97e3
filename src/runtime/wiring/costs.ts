/**
 * The cost estimate as the tools answer it (rl_estimate_cost, rl_start_training,
 * rl_get_current_config): the run's estimate with whether a start now fits the budgets (and, but
 * for a start, the campaign's spend so far from the ledger), and
 * whether a start must be confirmed by the user first (RL_CONFIRM_ABOVE_USD).
 */
import { UserError } from '../../core/errors.js';
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
  return `Start training ${environment} on ${estimate.model}? This is ${costSentence(settings, estimate)} These are estimates, not charges.`;
}

/** "an estimated expected cost of $87 (basis), above RL_CONFIRM_ABOVE_USD=$1. Estimated range: ...". */
function costSentence(settings: Settings, estimate: RunEstimate): string {
  const figure = budgetFigure(estimate);
  const which = estimate.total_usd.expected ? 'expected' : 'high-bound';
  const what = figure ? `an estimated ${which} cost of $${figure.usd} (${figure.basis})` : `an unknown cost (${estimate.unknown[0]})`;
  const range = estimate.total_usd.low && estimate.total_usd.high ? ` Estimated range: $${estimate.total_usd.low.usd} to $${estimate.total_usd.high.usd}.` : '';
  return `${what}, above RL_CONFIRM_ABOVE_USD=$${settings.cost.confirmAboveUsd}.${range}`;
}

/**
 * What a start over RL_CONFIRM_ABOVE_USD needs: nothing (no threshold, or under it), nothing more
 * (`confirm_cost_usd` covers the estimate's figure; with no figure, any confirms), the user's
 * answer to `question`, or a refusal (a `confirm_cost_usd` below the figure).
 */
export type StartConfirmation = { kind: 'none' } | { kind: 'confirmed' } | { kind: 'ask'; question: string } | { kind: 'too_low' };

export function startConfirmation(settings: Settings, estimate: RunEstimate, environment: string, confirmedUsd?: number): StartConfirmation {
  const question = confirmationQuestion(settings, estimate, environment);
  if (question === undefined) return { kind: 'none' };
  if (confirmedUsd === undefined) return { kind: 'ask', question };
  const figure = budgetFigure(estimate);
  return figure === undefined || confirmedUsd >= figure.usd ? { kind: 'confirmed' } : { kind: 'too_low' };
}

/** A dry run's note when its start will need the cost confirmed (a dry run spends nothing: it is never asked). */
export function dryRunConfirmationNote(settings: Settings, estimate: RunEstimate, environment: string, confirmedUsd?: number): string {
  const { kind } = startConfirmation(settings, estimate, environment, confirmedUsd);
  const figure = budgetFigure(estimate);
  return kind === 'ask' || kind === 'too_low' ? `; over RL_CONFIRM_ABOVE_USD, the start needs the user's yes or confirm_cost_usd${figure ? ` >= ${figure.usd}` : ''}` : '';
}

/**
 * Why a confirmation did not come, in words true of every client giving that answer: a client with
 * nobody to ask (headless Claude Code) answers a question at once with "decline", as a user would,
 * so a decline never says a user declined.
 */
export type NotConfirmed = 'decline' | 'cancel' | 'unsupported';
export function whyNotConfirmed(answer: NotConfirmed): string {
  if (answer === 'unsupported') return 'this client cannot ask its user: it declared no elicitation';
  if (answer === 'decline') return 'the client answered the question "decline", which a client with nobody to ask (such as headless Claude Code) also answers';
  return 'the question was cancelled or not answered';
}

/**
 * The refusal of a start over RL_CONFIRM_ABOVE_USD that was not confirmed: the figure, and the
 * argument that confirms it, so the model puts the figure to its user (or decides) and calls again.
 */
export function costNotConfirmed(settings: Settings, estimate: RunEstimate, answer: NotConfirmed | 'too_low', confirmedUsd?: number): UserError {
  const figure = budgetFigure(estimate);
  const why = answer === 'too_low' ? `confirm_cost_usd=$${confirmedUsd} is below the estimate` : whyNotConfirmed(answer);
  const value = figure ? `${figure.usd}` : 'the most the user accepts to spend (with no estimate, any figure confirms)';
  return new UserError(
    `Not started: the cost was not confirmed (${why}). This run has ${costSentence(settings, estimate)} To start it, put this to the user (or decide, if you act for them) and call rl_start_training again with the same arguments plus confirm_cost_usd: ${value}; if the user said no, do not. Nothing was started or written.`,
    { started: false, confirmation: answer, ...(figure ? { confirm_with: { confirm_cost_usd: figure.usd } } : {}), cost_estimate: estimateAnswer(settings, estimate) },
  );
}
