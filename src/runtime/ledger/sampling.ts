/**
 * The campaign budget for sampling jobs on Tinker (evaluations, inference tests): refused at start
 * when their high estimate does not fit what the ledger's window leaves, metered while they
 * sample, and cancelled, with their partial results, by the server that runs them once the
 * window's total reaches RL_MAX_TOTAL_COST_USD (jobs/registry.ts looks every second).
 */
import { UserError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { Settings } from '../../core/settings.js';
import { budgetWindowOf, capReached, jobRefusal } from './budget.js';
import type { SpendKind } from './entries.js';
import { ledgerOf } from './ledger.js';
import { measuredRollouts } from '../cost/lengthStore.js';
import { tokensUsd } from '../cost/estimate.js';
import { money } from '../cost/money.js';
import { SamplingMeter } from './meter.js';

/** What a sampling job may sample on Tinker: its models (each priced as itself, or as `pricedAs`), rollouts per model, the environment whose measured prompts it sends. */
export interface SamplingShape {
  models: readonly string[];
  rollouts: number;
  environment: string;
  pricedAs?: string;
  /** The completion cap the models sample up to (verifiers' max_tokens); else the environment's max_token_length. */
  maxTokens?: number;
}

/** A prompt's tokens when no inference test measured the environment's. */
export const UNMEASURED_PROMPT_TOKENS = 1024;
/** atroposlib's max_token_length when neither the operator nor the job sets it (BaseEnvConfig). */
const DEFAULT_MAX_TOKENS = 2048;

/**
 * A sampling job's high estimate: every rollout of every model with a prompt as long as the
 * longest the environment's inference test measured (else 1024 tokens) and a completion at its
 * cap, priced as sampling; undefined when a model has no price.
 */
export function samplingHigh(settings: Settings, shape: SamplingShape): { usd: number; basis: string } | undefined {
  const measured = Object.values(measuredRollouts(settings.home, shape.environment)?.models ?? {});
  const prompt = measured.length > 0 ? Math.max(...measured.map((m) => m.prompt_tokens.max)) : UNMEASURED_PROMPT_TOKENS;
  const completion = shape.maxTokens ?? Number(settings.locked.env.max_token_length ?? DEFAULT_MAX_TOKENS);
  const { prices } = settings.cost;
  let usd = 0;
  for (const model of shape.models) {
    const price = prices[model] ?? (shape.pricedAs !== undefined ? prices[shape.pricedAs] : undefined);
    if (price === undefined) return undefined;
    usd += tokensUsd({ prefill: shape.rollouts * prompt, sample: shape.rollouts * completion, train: 0 }, price);
  }
  const promptFrom = measured.length > 0 ? `the longest measured prompt, ${prompt} tokens` : `${prompt}-token prompts (no inference test measured them)`;
  return { usd, basis: `estimate: ${shape.models.length} model(s) x ${shape.rollouts} rollouts, each ${promptFrom} and ${completion} completion tokens, priced as sampling: ${money(usd)}` };
}

/** Throws the refusal of a paid sampling job whose high estimate (when it has one) does not fit what the window leaves. */
export function refuseSampling(settings: Settings, what: string, shape?: SamplingShape): void {
  const cap = settings.cost.maxTotalUsd;
  if (cap === undefined) return;
  const window = budgetWindowOf(settings);
  const totals = ledgerOf(settings.home).totals(window);
  const high = shape && samplingHigh(settings, shape);
  const refusal = jobRefusal(what, high?.usd, cap, totals, window);
  if (refusal) {
    throw new UserError(refusal, { total_budget_usd: cap, window_spent_usd: totals.total_usd, left_usd: Math.max(0, cap - totals.total_usd), spent_by_kind: totals.by_kind, ...(high ? { high_estimate_usd: high.usd, high_basis: high.basis } : {}) });
  }
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
