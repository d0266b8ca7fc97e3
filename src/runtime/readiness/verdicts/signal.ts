/**
 * What a probe (an rl_test_inference of the environment) adds to a verdict: per model the share of
 * groups whose scores differ (the training signal), all right and all wrong, the reward range and
 * invalid rewards counted apart from zeros, with dollars at the run's shape. Pure, as verdict.ts.
 */
import { isNumber, rank, verdictOf, type Judgement, type Reason, type Score } from './verdict.js';

const pct = (part: number, whole: number): string => `${whole > 0 ? Math.round((100 * part) / whole) : 0}%`;

/** One model of an inference test: its groups' scores as written, and whether it failed. */
export interface ProbeModel {
  model: string;
  /** Every group's scores, invalid ones (None, NaN, text) kept as they were. */
  groups: Score[][];
  error?: string;
  /** Tokens per rollout it measured. */
  prompt_tokens?: number;
  completion_tokens?: number;
}

export interface SignalStats {
  model: string;
  groups: number;
  /** Share of groups whose scores differ: what GRPO learns from. */
  mixed_share: number;
  all_right_share: number;
  all_wrong_share: number;
  reward_range: [number, number] | null;
  /** None, NaN or non-numbers, counted apart from zeros. */
  invalid_rewards: number;
  rewards: number;
  error?: string;
}

/** A written group's scores as they were: numbers, null for None, anything else by its text. */
export function rawScores(group: unknown): Score[] {
  const scores = (group as { scores?: unknown } | null)?.scores;
  if (!Array.isArray(scores)) return [];
  return scores.map((value: unknown): Score => {
    if (value === null || value === undefined) return null;
    if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
    return typeof value === 'string' ? value : `<${typeof value}>`;
  });
}

const share = (n: number, d: number): number => (d > 0 ? Math.round((1000 * n) / d) / 1000 : 0);

/** A model's groups in the cookbook's terms: mixed, all right (every score equal and above 0), all wrong. */
export function signalStats(m: ProbeModel): SignalStats {
  let mixed = 0;
  let right = 0;
  let wrong = 0;
  let invalid = 0;
  let rewards = 0;
  const valid: number[] = [];
  for (const group of m.groups) {
    const numbers = group.filter(isNumber);
    invalid += group.length - numbers.length;
    rewards += group.length;
    valid.push(...numbers);
    if (numbers.length === 0) continue;
    if (new Set(numbers).size > 1) mixed++;
    else if (numbers[0]! > 0) right++;
    else wrong++;
  }
  const n = m.groups.length;
  return {
    model: m.model,
    groups: n,
    mixed_share: share(mixed, n),
    all_right_share: share(right, n),
    all_wrong_share: share(wrong, n),
    reward_range: valid.length > 0 ? [Math.min(...valid), Math.max(...valid)] : null,
    invalid_rewards: invalid,
    rewards,
    ...(m.error !== undefined ? { error: m.error } : {}),
  };
}

/** Dollars per rollout and per training step from a model's measured lengths, and the run's whole cost at that rate. */
export interface ProbeCost {
  per_rollout_usd: number;
  per_step_usd: number;
  run_usd: number;
  basis: string;
}

/** The probe's reasons: no training signal for any model is no_go; invalid rewards or failed models are check. */
export function judgeProbe(stats: readonly SignalStats[], costs: Readonly<Record<string, ProbeCost>>): Judgement {
  const reasons: Reason[] = [];
  const evidence: string[] = [];
  const ran = stats.filter((s) => s.groups > 0);
  for (const s of stats.filter((x) => x.groups === 0)) reasons.push({ verdict: 'check', code: 'probe_model_failed', message: `${s.model} produced no group: ${s.error ?? 'see its log'}` });
  if (ran.length > 0 && ran.every((s) => s.mixed_share === 0)) {
    const each = ran.map((s) => `0 of ${s.groups} groups mixed for ${s.model} (${pct(s.all_right_share * s.groups, s.groups)} all right, ${pct(s.all_wrong_share * s.groups, s.groups)} all wrong)`).join('; ');
    reasons.push({ verdict: 'no_go', code: 'no_signal', message: `no training signal: ${each}` });
  }
  for (const s of ran) {
    if (s.invalid_rewards > 0) reasons.push({ verdict: 'check', code: 'probe_invalid_rewards', message: `${s.invalid_rewards} of ${s.rewards} rewards for ${s.model} were not numbers (None, NaN), counted apart from zeros` });
    if (s.mixed_share > 0) {
      const cost = costs[s.model];
      const dollars = cost ? `; $${cost.per_rollout_usd} per rollout, $${cost.per_step_usd} per step, $${cost.run_usd} for the run (estimate: ${cost.basis})` : '';
      evidence.push(`training signal: ${pct(s.mixed_share * s.groups, s.groups)} of ${s.groups} groups mixed for ${s.model}${dollars}`);
    }
  }
  const ranked = rank(reasons);
  return { verdict: verdictOf(ranked), reasons: ranked, evidence };
}
