/**
 * Spend so far: from the tokens a trainer logged per batch where it logs them (a cookbook run's
 * metrics.jsonl); else trainer steps completed times the dollars of a step, with the lengths of the
 * batches the trainer really took (its temp.json) where the supervisor saw some, else the plan's
 * per-step figure; training counted for the sequences the trainer says it trained (`Got N Datum
 * objects`: groups with all-equal scores are skipped), else batch_size per step. Pure; an
 * estimate, never a charge.
 */
import { budgetFigure, GENERAL_UNKNOWNS, type RunEstimate, type Scenario, type ScenarioLengths, type StepTokens, stepTokens, tokensUsd } from './estimate.js';
import type { ModelPrice } from '../../core/settings.js';

/** What run.json keeps of the estimate at start: enough to count spend without the price table. */
export interface CostPlan {
  estimate: true;
  model: string;
  total_steps: number;
  batch_size: number;
  group_size: number;
  /** As the estimate's shape (estimate.ts); absent in runs started before it was kept: 1. */
  prefills_per_group?: number;
  total_usd: Partial<Record<Scenario, number>>;
  /** The rates at start; absent when the model had no price. */
  price?: ModelPrice;
  /** The scenario spend is counted in when no batch was seen (expected, else high), its prompt and completion tokens. */
  spend_scenario?: 'expected' | 'high';
  lengths?: ScenarioLengths;
  /** What this run's figures cannot know (beyond what every estimate cannot). */
  unknown: string[];
  /** RL_MAX_RUN_COST_USD when the run started. */
  budget_usd?: number;
}

/** What the run has done, as its record says. */
export interface RunProgress {
  steps: number;
  /** Sequences trained in those steps, when the trainer log said. */
  sequences?: number;
  /** Tokens of the batches seen: sequences and their prompt and completion tokens, summed. */
  batches?: { batches: number; sequences: number; prompt_tokens: number; completion_tokens: number };
  total_steps?: number;
  /** Tokens the trainer logged per batch: when there are some, spend is counted from them, not from lengths. */
  logged?: LoggedTokens;
}

/**
 * Tokens a trainer logged for its batches (a cookbook run's metrics.jsonl: env/all/total_ob_tokens
 * and total_ac_tokens per row), every row counted: a batch run again after a resume was paid twice.
 */
export interface LoggedTokens {
  rows: number;
  prompt_tokens: number;
  completion_tokens: number;
}

export interface Spend {
  spent_usd: number;
  remaining_usd: number;
  /** The dollars of one more step at the rate spend is counted with: a budget stops a run before a step that would pass it. */
  step_usd: number;
  basis: string;
}

const round4 = (x: number): number => Math.round(x * 10_000) / 10_000;

export function planOf(estimate: RunEstimate, budgetUsd: number | undefined, price: ModelPrice | undefined, lengths: ScenarioLengths | undefined): CostPlan {
  const totals = Object.fromEntries(Object.entries(estimate.total_usd).map(([k, f]) => [k, f.usd])) as Partial<Record<Scenario, number>>;
  const figure = budgetFigure(estimate);
  const { model, total_steps, batch_size, group_size } = estimate.shape;
  const { prefills_per_group } = estimate;
  return {
    estimate: true,
    model,
    total_steps,
    batch_size,
    group_size,
    ...(prefills_per_group !== undefined ? { prefills_per_group } : {}),
    total_usd: totals,
    ...(price && figure && lengths ? { price, spend_scenario: estimate.total_usd.expected ? ('expected' as const) : ('high' as const), lengths } : {}),
    unknown: estimate.unknown.filter((u) => !GENERAL_UNKNOWNS.includes(u)),
    ...(budgetUsd !== undefined ? { budget_usd: budgetUsd } : {}),
  };
}

/**
 * Spend from the tokens the run logged: every prompt token prefilled (an upper bound: Tinker may
 * cache a group's shared prompt), every completion token sampled, both trained; the rest at the
 * mean of the logged rows.
 */
function loggedSpend(plan: CostPlan, price: ModelPrice, done: RunProgress, logged: LoggedTokens): Counted {
  const tokens = { prefill: logged.prompt_tokens, sample: logged.completion_tokens, train: logged.prompt_tokens + logged.completion_tokens };
  const spent = tokensUsd(tokens, price);
  const perRow = spent / logged.rows;
  const spend = {
    spent_usd: round4(spent),
    remaining_usd: round4(Math.max(0, (done.total_steps ?? plan.total_steps) - done.steps) * perRow),
    step_usd: perRow,
    basis:
      `from the tokens the run logged (metrics.jsonl, ${logged.rows} batch rows: ${logged.prompt_tokens} prompt + ${logged.completion_tokens} sampled tokens; ` +
      'prefill = prompt tokens, sample = sampled tokens, train = both; a batch run again after a resume counted again) at the price table\'s rates; the rest at their mean per batch; an estimate, not a charge',
  };
  return { spend, tokens };
}

/** Spend and the tokens it counts. */
interface Counted {
  spend: Spend;
  tokens: StepTokens;
}

/** Dollars spent and the estimate for the rest; undefined when the plan has no price. */
export function spendOf(plan: CostPlan, done: RunProgress): Spend | undefined {
  return counted(plan, done)?.spend;
}

/** The tokens spend counts (prefilled, sampled, trained); undefined when the plan has no price. */
export function spentTokens(plan: CostPlan, done: RunProgress): StepTokens | undefined {
  return counted(plan, done)?.tokens;
}

function counted(plan: CostPlan, done: RunProgress): Counted | undefined {
  const { price, lengths } = plan;
  if (price !== undefined && done.logged !== undefined && done.logged.rows > 0 && done.logged.prompt_tokens + done.logged.completion_tokens > 0) return loggedSpend(plan, price, done, done.logged);
  if (price === undefined || lengths === undefined) return undefined;
  const seen = done.batches !== undefined && done.batches.sequences > 0 ? done.batches : undefined;
  const prompt = seen ? seen.prompt_tokens / seen.sequences : lengths.prompt;
  const completion = seen ? seen.completion_tokens / seen.sequences : lengths.completion;
  const trainedLength = seen ? prompt + completion : lengths.trained;
  const inference = stepTokens(plan, prompt, completion, trainedLength);
  const perStep = tokensUsd(inference, price);
  const trained = done.sequences ?? done.steps * plan.batch_size;
  const tokens = { prefill: done.steps * inference.prefill, sample: done.steps * inference.sample, train: trained * trainedLength };
  const spent = tokensUsd(tokens, price);
  const lengthsFrom = seen ? `mean lengths of ${seen.batches} batches the trainer took (${Math.round(prompt)} prompt + ${Math.round(completion)} completion tokens)` : `the ${plan.spend_scenario} lengths at start`;
  const trainedFor = done.sequences !== undefined ? `${done.sequences} sequences trained (trainer log)` : `${plan.batch_size} sequences per step`;
  const spend = {
    spent_usd: round4(spent),
    remaining_usd: round4(Math.max(0, (done.total_steps ?? plan.total_steps) - done.steps) * perStep),
    step_usd: perStep,
    basis: `estimate: ${done.steps} steps done (trainer log) x $${round4(perStep)}/step from ${lengthsFrom}, training counted for ${trainedFor}; the rest at the same rate`,
  };
  return { spend, tokens };
}
