/**
 * From each model's per-item scores to the answer: score and interval per model, difference to
 * the baseline and its interval (paired when both saw exactly the same items), and a verdict.
 * Pure; the methods are named in the answer (statistics.ts).
 */
import type { ItemScore } from './rollouts.js';
import { METHOD_TEXT, pairedDifference, summarizeScores, unpairedDifference, verdictOf, type Difference, type Interval, type ScoreSummary, type Verdict } from './statistics.js';

export interface ModelOutcome {
  /** `base` or `step_N`. */
  label: string;
  model: string;
  role: 'baseline' | 'checkpoint';
  step?: number;
  /** Undefined when the model produced nothing usable. */
  items?: ItemScore[];
}

export interface DifferenceAnswer {
  diff: number;
  ci: [number, number] | null;
  method: Difference['method'];
  items: number;
  verdict: Verdict;
}

export interface ModelScoreAnswer {
  label: string;
  model: string;
  role: 'baseline' | 'checkpoint';
  step?: number;
  items: number;
  /** Accuracy (0/1 scores) or mean score; null when the model failed. */
  score: number | null;
  ci: [number, number] | null;
  interval?: ScoreSummary['method'];
  vs_baseline?: DifferenceAnswer;
}

export interface Comparison {
  models: ModelScoreAnswer[];
  /** Every model that produced items saw exactly the baseline's items. */
  same_items: boolean;
  /** The latest checkpoint against the baseline. */
  verdict?: { checkpoint: string; verdict: Verdict; summary: string };
  methods: Record<string, string>;
}

const r4 = (x: number): number => Math.round(x * 10000) / 10000;
const pair = (ci: Interval | null): [number, number] | null => (ci ? [r4(ci.low), r4(ci.high)] : null);

function sameKeys(a: readonly ItemScore[], b: readonly ItemScore[]): boolean {
  if (a.length !== b.length) return false;
  const keys = new Set(a.map((i) => i.key));
  return b.every((i) => keys.has(i.key));
}

function difference(baseline: readonly ItemScore[], other: readonly ItemScore[]): Difference {
  if (!sameKeys(baseline, other)) return unpairedDifference(baseline.map((i) => i.score), other.map((i) => i.score));
  const byKey = new Map(other.map((i) => [i.key, i.score]));
  return pairedDifference(baseline.map((i) => i.score), baseline.map((i) => byKey.get(i.key)!));
}

const VERDICT_TEXT: Record<Verdict, string> = { better: 'better than', no_clear_difference: 'not clearly different from', worse: 'worse than' };

function verdictSummary(base: ModelScoreAnswer, latest: ModelScoreAnswer): string {
  const d = latest.vs_baseline!;
  const ci = d.ci ? `[${d.ci[0]}, ${d.ci[1]}]` : '(too few items for an interval)';
  const what = VERDICT_TEXT[d.verdict];
  return (
    `${latest.label} scored ${latest.score} vs ${base.score} for the base model (${base.model}): ${what} the baseline. ` +
    `Difference ${d.diff >= 0 ? '+' : ''}${d.diff}, 95% CI ${ci}, ${d.method} over ${d.items} items.`
  );
}

export function compareModels(outcomes: readonly ModelOutcome[]): Comparison {
  const methods: Record<string, string> = {};
  const baseline = outcomes.find((o) => o.role === 'baseline' && o.items !== undefined);
  let same = true;
  const models = outcomes.map((o): ModelScoreAnswer => {
    const head = { label: o.label, model: o.model, role: o.role, ...(o.step !== undefined ? { step: o.step } : {}) };
    if (o.items === undefined) return { ...head, items: 0, score: null, ci: null };
    const s = summarizeScores(o.items.map((i) => i.score));
    methods[s.method] = METHOD_TEXT[s.method];
    const answer: ModelScoreAnswer = { ...head, items: s.n, score: r4(s.mean), ci: pair(s.ci), interval: s.method };
    if (o.role === 'checkpoint' && baseline?.items !== undefined) {
      if (!sameKeys(baseline.items, o.items)) same = false;
      const d = difference(baseline.items, o.items);
      methods[d.method] = METHOD_TEXT[d.method];
      answer.vs_baseline = { diff: r4(d.diff), ci: pair(d.ci), method: d.method, items: d.n, verdict: verdictOf(d.ci) };
    }
    return answer;
  });
  const base = models.find((m) => m.role === 'baseline' && m.score !== null);
  const latest = models.filter((m) => m.vs_baseline !== undefined).sort((a, b) => (b.step ?? 0) - (a.step ?? 0))[0];
  return {
    models,
    same_items: same,
    ...(base && latest ? { verdict: { checkpoint: latest.label, verdict: latest.vs_baseline!.verdict, summary: verdictSummary(base, latest) } } : {}),
    methods,
  };
}
