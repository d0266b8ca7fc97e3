/** Schema pieces of the cost estimates (rl_estimate_cost, rl_start_training, rl_get_current_config, rl_check_status, rl_list_runs, rl_get_results). */
import * as z from 'zod';
import { zString, zNumber, zBoolean } from '../core/schemaLeaves.js';

const totals = z.object({ low: zNumber.optional(), expected: zNumber.optional(), high: zNumber.optional() });

const billedLine = z.object({ amount: zNumber, unit: z.enum(['tokens', 'checkpoints', 'GB-hours']), usd: zNumber.nullable().describe('null: not priced') });

/** What Tinker billed the run (its own usage rows, priced here), beside the estimate. */
export const billedSchema = z
  .object({
    usd: zNumber.nullable().describe('Dollars of the billed usage so far; null when Tinker\'s billing could not be read (note says why)'),
    as_of: zString.nullable().describe("The newest hour Tinker's billing covers: it lags real time by up to a few hours"),
    by_type: z
      .object({ training: billedLine.optional(), sampling_prefill: billedLine.optional(), sampling_prefill_cached: billedLine.optional(), sampling_sample: billedLine.optional(), checkpoint: billedLine.optional(), storage: billedLine.optional() })
      .describe('Per usage type: tokens (cached prefill at its own rate), checkpoint saves (not priced), storage GB-hours computed from checkpoint sizes'),
    note: zString.describe('Where the figures come from, and why there is none when usd is null'),
    checked_at: zString.describe('When Tinker was last asked (at most every RL_BILLING_REFRESH_SECONDS)'),
  })
  .describe("BILLED by Tinker so far: its usage rows for the run's sessions, priced with the price table; never replaces spent_usd");

/** A run's spend so far and the rest: `cost` of rl_check_status and rl_get_results. */
export const runCostSchema = z
  .object({
    estimate: z.literal(true),
    basis: zString.describe('How spent_usd was counted (steps done x dollars per step, from which figures)'),
    spent_usd: zNumber.optional().describe('Estimated dollars spent so far; absent when the model has no price'),
    remaining_usd: zNumber.optional().describe('Estimated dollars for the steps left'),
    total_usd: totals.describe('The whole run as estimated at its start'),
    budget_usd: zNumber.optional().describe('RL_MAX_RUN_COST_USD at start: the run stops before a step that would take spent_usd past it'),
    unknown: z.array(zString),
    price_source: z.object({ source: zString, date: zString }).optional(),
    billed: billedSchema.optional(),
  })
  .describe('An ESTIMATE of what the run costs on Tinker, each figure saying from what, and beside it (billed) what Tinker billed; budgets hold a run to the larger');

export const listedCostSchema = z
  .object({
    spent_usd: zNumber.describe("The run's figure in the spend ledger: its estimate, or what Tinker billed when more"),
    expected_total_usd: zNumber,
    basis: zString,
    billed_usd: zNumber.nullable().optional().describe('What Tinker billed, as last asked (null: its billing could not be read; rl_check_status says why)'),
    billed_as_of: zString.nullable().optional(),
  })
  .describe('Estimated dollars spent so far and for the whole run, and what Tinker billed once asked (rl_check_status has the detail)');

const kinds = z.object({ run: zNumber, evaluation: zNumber, inference_test: zNumber });

/** The campaign's spend so far: the ledger's window. */
export const spendSchema = z
  .object({
    window: zString,
    since: zString.nullable(),
    total_usd: zNumber,
    by_kind: kinds,
    by_id: z.array(z.object({ kind: z.enum(['run', 'evaluation', 'inference_test']), id: zString, usd: zNumber, basis: z.enum(['estimate', 'billed']) })).describe('The largest spenders, largest first'),
    more: zNumber.optional(),
    max_total_usd: zNumber.optional().describe('RL_MAX_TOTAL_COST_USD: caps total_usd'),
    left_usd: zNumber.optional(),
    note: zString,
  })
  .describe('SPENT so far in the budget window (RL_BUDGET_WINDOW), from the spend ledger: every run, evaluation and inference test on Tinker');

const figure = z.object({ usd: zNumber, per_step_usd: zNumber, basis: zString.describe('Where the figure comes from') });

/** A run's estimate before it starts. */
export const estimateSchema = z
  .object({
    estimate: z.literal(true),
    model: zString.describe('The Tinker base model priced'),
    shape: z.object({ model: zString, total_steps: zNumber, batch_size: zNumber, group_size: zNumber, max_token_length: zNumber }),
    total_usd: z
      .object({ low: figure.optional(), expected: figure.optional(), high: figure.optional() })
      .describe('Dollars for the whole run: low and expected from the measured rollout lengths, high with completions at max_token_length; empty without a price'),
    price_source: z.object({ source: zString, as_of: zString }).optional(),
    assumptions: z.array(zString),
    unknown: z.array(zString).describe('What the estimate cannot know'),
    budget: z
      .object({ fits: zBoolean, max_run_usd: zNumber.optional(), max_total_usd: zNumber.optional(), refusal: zString.optional() })
      .optional()
      .describe('Whether a start now fits RL_MAX_RUN_COST_USD and RL_MAX_TOTAL_COST_USD'),
    spend: spendSchema.optional(),
  })
  .describe('An ESTIMATE of what the run will cost on Tinker, each figure with its basis');
