/**
 * What a training run will cost on Tinker, as an estimate from numbers the server can see: the
 * run's shape (total_steps, batch_size, group_size, max_token_length), the price of its base model
 * and the rollout lengths its environment's latest inference test measured. Pure; the figures are
 * checked by hand in test/unit/cost.test.ts.
 *
 * Per trainer step (tinker-atropos): the Atropos API hands the trainer batch_size sequences, made of
 * batch_size / group_size groups; each group is one prompt sampled group_size times in one call
 * (one prefill of the prompt, group_size completions sampled), and every sequence (prompt +
 * completion) is trained once.
 */
import type { ModelPrice } from '../../core/settings.js';
import type { RolloutLengths } from './lengths.js';
import { money } from './money.js';

export interface RunShape {
  model: string;
  total_steps: number;
  batch_size: number;
  group_size: number;
  max_token_length: number;
}

export interface StepTokens {
  prefill: number;
  sample: number;
  train: number;
}

export const SCENARIOS = ['low', 'expected', 'high'] as const;
export type Scenario = (typeof SCENARIOS)[number];

export interface Figure {
  usd: number;
  per_step_usd: number;
  basis: string;
}

/** Where the measured lengths came from, for the basis. */
export interface LengthsInfo {
  lengths: RolloutLengths;
  test_id: string;
  measured_at: string;
  /** The tested model the lengths are from, or how several were pooled. */
  models: string;
}

/** Prompt lengths an offline check rendered (rl_check_environment): no completion was sampled. */
export interface PromptLengthsInfo {
  prompts: { mean: number; max: number; count: number };
  checked_at: string;
  counted_by: string;
}

export type MeasuredLengths = LengthsInfo | PromptLengthsInfo;

export interface RunEstimate {
  estimate: true;
  model: string;
  shape: RunShape;
  total_usd: Partial<Record<Scenario, Figure>>;
  price_source?: { source: string; as_of: string };
  /** What the figures rest on (one line each). */
  assumptions: string[];
  /** What they cannot know. */
  unknown: string[];
  /** Tokens per sequence behind each figure: spend is counted with them until real batches are seen. */
  lengths?: Partial<Record<Scenario, ScenarioLengths>>;
  /** Prompts prefilled per group, when not 1: spend counts them the same way. */
  prefills_per_group?: number;
}

export interface ScenarioLengths {
  prompt: number;
  completion: number;
  /** Tokens trained per sequence (prompt + completion, at most max_token_length in the high bound). */
  trained: number;
}

const MILLION = 1_000_000;
const round4 = (x: number): number => Math.round(x * 10_000) / 10_000;

/** Tokens of one step with prompts of `prompt` tokens and completions of `completion` tokens. */
/**
 * Prompts prefilled per group: 1 when a group is one sampling call of group_size samples
 * (tinker-atropos: num_samples=group_size), group_size when each sequence is its own call
 * (tinker-cookbook: every trajectory samples with num_samples=1). Unset: 1.
 */
export interface Prefills {
  prefills_per_group?: number;
}

export function stepTokens(shape: Pick<RunShape, 'batch_size' | 'group_size'> & Prefills, prompt: number, completion: number, trainedLength = prompt + completion): StepTokens {
  const groups = shape.batch_size / shape.group_size;
  return { prefill: groups * (shape.prefills_per_group ?? 1) * prompt, sample: shape.batch_size * completion, train: shape.batch_size * trainedLength };
}

export function tokensUsd(tokens: StepTokens, price: ModelPrice): number {
  return (tokens.prefill * price.prefill + tokens.sample * price.sample + tokens.train * price.train) / MILLION;
}

function figure(shape: RunShape, price: ModelPrice, tokens: StepTokens, basis: string): Figure {
  const perStep = tokensUsd(tokens, price);
  return { usd: round4(perStep * shape.total_steps), per_step_usd: round4(perStep), basis: `estimate: ${shape.total_steps} steps x ${money(perStep)}/step; ${basis}` };
}

type Scenarios = Partial<Record<Scenario, { lengths: ScenarioLengths; basis: string }>>;

const of = (prompt: number, completion: number, trained = prompt + completion): ScenarioLengths => ({ prompt, completion, trained });

/**
 * How long a framework's sequences can be: an Atropos run's trained sequences are at most
 * max_token_length (atroposlib drops longer ones) and so are its prompts; a cookbook run sends
 * whole prompts, which nothing drops, and trains prompt + completion.
 */
export interface LengthBounds {
  /** The longest trained sequence, or undefined when nothing caps it. */
  trainedCap?: number;
  /** The prompt the high bound assumes when no inference test measured any, and what that rests on. */
  unmeasuredPrompt: { tokens: number; basis: string };
  /** Prompts prefilled per group (Prefills); unset: 1. */
  prefillsPerGroup?: number;
}

/** tinker-atropos through atroposlib: everything within max_token_length. */
export const atroposBounds = (shape: Pick<RunShape, 'max_token_length'>): LengthBounds => ({
  trainedCap: shape.max_token_length,
  unmeasuredPrompt: { tokens: shape.max_token_length, basis: `every prompt and completion at max_token_length ${shape.max_token_length} (trained sequences are at most ${shape.max_token_length}: atroposlib drops longer ones)` },
});

function scenarioLengths(shape: RunShape, measured: MeasuredLengths | undefined, bounds: LengthBounds): Scenarios {
  const L = shape.max_token_length;
  const capped = (n: number): number => (bounds.trainedCap === undefined ? n : Math.min(n, bounds.trainedCap));
  const cap = bounds.trainedCap === undefined ? 'trained sequences whole (prompt + completion: nothing drops longer ones)' : `trained sequences at ${bounds.trainedCap} (atroposlib drops longer ones)`;
  if (measured === undefined) {
    const p = bounds.unmeasuredPrompt.tokens;
    return { high: { lengths: of(p, L, capped(p + L)), basis: bounds.unmeasuredPrompt.basis } };
  }
  if ('prompts' in measured) {
    const p = capped(measured.prompts.max);
    return { high: { lengths: of(p, L, capped(p + L)), basis: `longest prompt ${measured.prompts.max} tokens of ${measured.prompts.count} rendered by the offline check (${measured.checked_at}, counted by ${measured.counted_by}), every completion at max_token_length ${L}, ${cap}` } };
  }
  const { prompt_tokens: p, completion_tokens: c } = measured.lengths;
  const from = `inference test ${measured.test_id} (${measured.measured_at}, ${measured.lengths.rollouts} rollouts of ${measured.models}, counted by ${measured.lengths.source})`;
  return {
    low: { lengths: of(p.mean, c.p25), basis: `mean prompt ${p.mean} tokens, completions at the 25th percentile ${c.p25} tokens, from ${from}` },
    expected: { lengths: of(p.mean, c.mean), basis: `mean prompt ${p.mean} and mean completion ${c.mean} tokens, from ${from}` },
    high: { lengths: of(p.max, L, capped(p.max + L)), basis: `longest measured prompt ${p.max} tokens, every completion at max_token_length ${L}, ${cap}` },
  };
}

const ASSUMPTIONS = (shape: RunShape & Prefills): string[] => [
  `per step: ${shape.batch_size} sequences (batch_size) in ${shape.batch_size / shape.group_size} groups of ${shape.group_size} (group_size)`,
  (shape.prefills_per_group ?? 1) === 1
    ? 'prefill: each group\'s prompt once (one sampling call with group_size samples); sample: every completion; train: every sequence, prompt + completion'
    : 'prefill: every sequence\'s prompt (each is its own sampling call; Tinker may serve a repeated prompt from its cache at a fifth of the rate: not counted); sample: every completion; train: every sequence, prompt + completion',
];

/** What no estimate of this server can know; said in full answers, left out of status and listings. */
export const GENERAL_UNKNOWNS = [
  'groups the environment drops (all scores equal, too long) are sampled and paid for but not trained: not counted',
  'off-policy batches (max_batches_offpolicy) and evaluation sampling (steps_per_eval) are not counted',
  'checkpoint storage (billed per GB-month) is not counted',
  'Tinker bills with a few hours\' delay and reports tokens, not dollars: these are estimates, not charges',
];

/** The run's estimate; without a price, no dollar figure and the reason. */
export function estimateRun(shape: RunShape, price: ModelPrice | undefined, measured: MeasuredLengths | undefined, extraUnknown: string[] = [], bounds: LengthBounds = atroposBounds(shape)): RunEstimate {
  const unknown = [...extraUnknown];
  if (measured === undefined || 'prompts' in measured) unknown.push('rollout lengths: no inference test measured this environment yet, so only the high bound is given; run rl_test_inference to get low and expected figures');
  const prefills = bounds.prefillsPerGroup !== undefined && bounds.prefillsPerGroup !== 1 ? { prefills_per_group: bounds.prefillsPerGroup } : {};
  const base = { estimate: true as const, model: shape.model, shape, assumptions: ASSUMPTIONS({ ...shape, ...prefills }), ...prefills };
  if (price === undefined) {
    return { ...base, total_usd: {}, unknown: [`price: the price table has no entry for ${shape.model}; add it under prices in the RL_MCP_CONFIG file (dollars per million prefill, sample and train tokens, with as_of and source)`, ...unknown, ...GENERAL_UNKNOWNS] };
  }
  const total_usd: Partial<Record<Scenario, Figure>> = {};
  const scenarios = scenarioLengths(shape, measured, bounds);
  const lengths: Partial<Record<Scenario, ScenarioLengths>> = {};
  for (const name of SCENARIOS) {
    const s = scenarios[name];
    if (!s) continue;
    lengths[name] = s.lengths;
    total_usd[name] = figure(shape, price, stepTokens({ ...shape, ...prefills }, s.lengths.prompt, s.lengths.completion, s.lengths.trained), `${s.basis}; $ per million tokens ${price.prefill} prefill, ${price.sample} sample, ${price.train} train (${price.source}, as of ${price.as_of})`);
  }
  return { ...base, total_usd, price_source: { source: price.source, as_of: price.as_of }, unknown: [...unknown, ...GENERAL_UNKNOWNS], lengths };
}

/** The figure a budget is held to: expected, else the high bound. */
export function budgetFigure(estimate: RunEstimate): Figure | undefined {
  return estimate.total_usd.expected ?? estimate.total_usd.high;
}
