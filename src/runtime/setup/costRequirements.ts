/**
 * The doctor's look at the price table cost estimates use: it must price the model runs train
 * (the locked one) and not be old, since Tinker's rates change. Not required: a missing price
 * only leaves estimates without dollars (and a start refused when a budget is set).
 */
import type { ModelPrice, Settings } from '../../core/settings.js';
import { trainedModel } from '../cost/model.js';
import { met, never, type Outcome, type Requirement, unmet } from './requirement.js';

/** Older figures than this are flagged: rates rise and fall. */
export const PRICE_MAX_AGE_DAYS = 90;
const DAY_MS = 86_400_000;

const FIX = 'add or update it under prices in the RL_MCP_CONFIG file: prices: {"<model>": {prefill, sample, train, as_of: YYYY-MM-DD, source}} (dollars per million tokens, from Tinker\'s Models & Pricing page or console)';

/** Pure: the table judged for `model` at `nowMs`. */
export function priceTableOutcome(prices: Readonly<Record<string, ModelPrice>>, model: string, nowMs: number): Outcome {
  const price = prices[model];
  if (price === undefined) {
    return unmet(`no price for ${model}`, `The price table has no entry for the locked model ${model}: cost estimates give no dollars and a start is refused when a budget is set; ${FIX.replace('<model>', model)}.`, { model });
  }
  const days = Math.floor((nowMs - Date.parse(price.as_of)) / DAY_MS);
  const detail = `${model}: $${price.prefill} prefill, $${price.sample} sample, $${price.train} train per million tokens, as of ${price.as_of} (${price.source})`;
  if (days > PRICE_MAX_AGE_DAYS) {
    return unmet(`${detail}: ${days} days old`, `The price of ${model} is ${days} days old (as of ${price.as_of}, over ${PRICE_MAX_AGE_DAYS}): Tinker's rates change, so estimates may be off; ${FIX.replace('<model>', model)}.`, { model, as_of: price.as_of });
  }
  return met(detail);
}

export function lockedModel(settings: Settings): string {
  const { env, openai, tinker } = settings.locked;
  return trainedModel({ env, openai: [openai], tinker });
}

export const PRICE_TABLE: Requirement = {
  check: 'price table',
  required: never,
  atStart: false,
  evaluate: (ctx) => priceTableOutcome(ctx.settings.cost.prices, lockedModel(ctx.settings), Date.now()),
};
