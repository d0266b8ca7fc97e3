/**
 * One readiness verdict for an environment: `go`, `no_go` or `check`, with its reasons ranked and
 * each with its evidence. Pure: it reads what python/check_environment.py observed (the offline
 * checks, against a stand-in model answering completions chosen for them) and, when given, what an
 * inference test's models scored (the probe: signal.ts). Tested as tables in test/unit/readiness-logic.test.ts.
 */

export type Verdict = 'go' | 'no_go' | 'check';

/** A score as the helper reports it: a finite number, null (None), or what it was instead ("NaN", "inf", "<str>"). */
export type Score = number | null | string;

export interface Probe {
  kind: 'empty' | 'garbage' | 'reference' | 'reference_again';
  completion: string;
  scores?: Score[];
  /** The environment dropped the group (collect_trajectories returned None). */
  dropped?: boolean;
  /** The scoring raised: its last line and where. */
  error?: string;
  /** Scored inside a group mixed with garbage (the environment drops groups whose scores are all equal). */
  mixed_with_garbage?: boolean;
}

export interface CheckedItem {
  index: number;
  reference?: { key: string; text: string };
  probes: Probe[];
}

type Step = { ok: boolean; error?: string };

/** What python/check_environment.py answers. */
export interface OfflineObservations {
  framework: string;
  steps: Partial<Record<'import' | 'config' | 'data' | 'prompts', Step>>;
  items_count?: number;
  items_note?: string;
  sample?: string | null;
  max_token_length?: number;
  group_size?: number | null;
  prompt_tokens: number[];
  prompt_tokens_counted_by?: string;
  items: CheckedItem[];
  unchecked: string[];
  stand_in?: { url: string; requests: number };
  error?: string;
}

export interface Reason {
  verdict: Exclude<Verdict, 'go'>;
  code: string;
  message: string;
}

/** What a `go` rests on, said beside it. */
export interface Judgement {
  verdict: Verdict;
  reasons: Reason[];
  evidence: string[];
}

export const isNumber = (s: Score): s is number => typeof s === 'number' && Number.isFinite(s);
const fmt = (x: number): string => String(Math.round(x * 1000) / 1000);
const KIND_TEXT: Record<Probe['kind'], string> = { empty: 'an empty completion', garbage: 'a garbage completion', reference: 'the reference answer', reference_again: 'the reference answer (second time)' };

function ofItems(count: number, total: number): string {
  return total === 1 ? '' : ` on ${count} of ${total} items`;
}

/** The best score an item's reference answer got (over the forms tried), or undefined when none scored. */
function referenceBest(item: CheckedItem): number | undefined {
  const scores = item.probes.filter((p) => p.kind === 'reference').flatMap((p) => (p.scores ?? []).filter(isNumber));
  return scores.length > 0 ? Math.max(...scores) : undefined;
}

const probeScores = (item: CheckedItem, kind: Probe['kind']): number[] => item.probes.filter((p) => p.kind === kind).flatMap((p) => (p.scores ?? []).filter(isNumber));

function stepReasons(o: OfflineObservations): Reason[] {
  const steps: [keyof OfflineObservations['steps'], string][] = [
    ['import', 'the environment does not import'],
    ['config', 'its config does not resolve'],
    ['data', 'its data does not load'],
  ];
  const reasons: Reason[] = [];
  if (o.error !== undefined) reasons.push({ verdict: 'no_go', code: 'check_failed', message: `the check itself failed: ${o.error}` });
  for (const [step, text] of steps) {
    const s = o.steps[step];
    if (s !== undefined && !s.ok) reasons.push({ verdict: 'no_go', code: `${step}_failed`, message: `${text}: ${s.error ?? 'unknown error'}` });
  }
  if (o.steps.data?.ok === true && o.items_count === 0) reasons.push({ verdict: 'no_go', code: 'no_items', message: 'its data has no items' });
  const prompts = o.steps.prompts;
  if (prompts !== undefined && !prompts.ok) reasons.push({ verdict: 'check', code: 'no_prompt', message: `no prompt was rendered: ${prompts.error ?? 'unknown'}` });
  return reasons;
}

/** Crashes and rewards that are not numbers, per kind of completion. */
function invalidReasons(items: readonly CheckedItem[]): Reason[] {
  const reasons: Reason[] = [];
  for (const kind of ['empty', 'garbage', 'reference'] as const) {
    const crashed = items.filter((i) => i.probes.some((p) => p.kind === kind && p.error !== undefined));
    const probed = items.filter((i) => i.probes.some((p) => p.kind === kind));
    if (crashed.length > 0) {
      const error = crashed[0]!.probes.find((p) => p.kind === kind && p.error !== undefined)!.error!;
      reasons.push({ verdict: 'no_go', code: `crash_${kind}`, message: `rewards crashed on ${KIND_TEXT[kind]}${ofItems(crashed.length, probed.length)}: ${error}` });
    }
    const invalid = items.flatMap((i) => i.probes.filter((p) => p.kind === kind).flatMap((p) => (p.scores ?? []).filter((s) => !isNumber(s))));
    if (invalid.length > 0) {
      const shown = [...new Set(invalid.map((s) => (s === null ? 'None' : String(s))))].join(', ');
      reasons.push({ verdict: 'no_go', code: `invalid_${kind}`, message: `rewards were not numbers for ${KIND_TEXT[kind]}: ${shown} (${invalid.length} rewards), counted apart from zeros` });
    }
  }
  return reasons;
}

/** The same completion scored differently: in one group of identical completions, or the reference twice. */
function determinismReason(items: readonly CheckedItem[]): Reason | undefined {
  for (const item of items) {
    for (const probe of item.probes) {
      const scores = (probe.scores ?? []).filter(isNumber);
      if (scores.length > 1 && new Set(scores).size > 1) {
        return { verdict: 'no_go', code: 'not_deterministic', message: `the same completion scored differently: ${KIND_TEXT[probe.kind]} got ${[...new Set(scores)].map(fmt).join(', ')} within one group (item ${item.index + 1}); rewards look random` };
      }
    }
    const again = probeScores(item, 'reference_again');
    const best = referenceBest(item);
    if (again.length > 0 && best !== undefined && again[0] !== best) {
      return { verdict: 'no_go', code: 'not_deterministic', message: `the same completion scored differently: the reference answer got ${fmt(best)}, then ${fmt(again[0]!)} (item ${item.index + 1}); rewards look random` };
    }
  }
  return undefined;
}

/** Where the items' reference answers were read: `answer`, `get_reference_answer()`, ... */
const keysOf = (items: readonly CheckedItem[]): string => [...new Set(items.map((i) => (i.reference ? `\`${i.reference.key}\`` : '?')))].join(', ');

function rangeReasons(items: readonly CheckedItem[], evidence: string[]): Reason[] {
  const all = items.flatMap((i) => i.probes.flatMap((p) => (p.scores ?? []).filter(isNumber)));
  if (all.length === 0) return [];
  const top = Math.max(...all);
  const bottom = Math.min(...all);
  const withReference = items.filter((i) => referenceBest(i) !== undefined);
  const reasons: Reason[] = [];
  if (top === bottom) {
    // Nothing rewarded (0 for all: the right answer is not recognised) or everything rewarded alike.
    if (withReference.length > 0 && top <= 0) {
      reasons.push({ verdict: 'no_go', code: 'reference_not_top', message: `the reference answer scored ${fmt(top)} on ${withReference.length} of ${withReference.length} items, as empty and garbage completions do: the grader or the items' answers (${keysOf(withReference)}) are wrong` });
    } else if (withReference.length > 0) {
      reasons.push({ verdict: 'no_go', code: 'always_alike', message: `every completion scored ${fmt(top)}: the reference answer, empty and garbage completions alike on all ${items.length} items, so every group will score alike (no training signal)` });
    }
    return reasons;
  }
  evidence.push(`rewards seen offline from ${fmt(bottom)} to ${fmt(top)}`);
  if (withReference.length > 0) {
    const short = withReference.filter((i) => referenceBest(i)! < top);
    if (short.length > 0) {
      const values = [...new Set(short.map((i) => fmt(referenceBest(i)!)))].join(', ');
      reasons.push({
        verdict: short.length * 2 >= withReference.length ? 'no_go' : 'check',
        code: 'reference_not_top',
        message: `the reference answer scored ${values} on ${short.length} of ${withReference.length} items (the top seen is ${fmt(top)}): the grader or the items' answers (${keysOf(short)}) are wrong`,
      });
    } else {
      evidence.push(`the reference answer scored the top (${fmt(top)}) on ${withReference.length} of ${withReference.length} items`);
    }
  }
  for (const kind of ['empty', 'garbage'] as const) {
    const probed = items.filter((i) => probeScores(i, kind).length > 0);
    const above = probed.filter((i) => Math.max(...probeScores(i, kind)) > bottom);
    if (above.length === 0) {
      if (probed.length > 0) evidence.push(`${KIND_TEXT[kind]} scored the bottom (${fmt(bottom)})${ofItems(probed.length, probed.length)}`);
      continue;
    }
    const asHigh = above.filter((i) => referenceBest(i) !== undefined && Math.max(...probeScores(i, kind)) >= referenceBest(i)!);
    const worst = Math.max(...above.map((i) => Math.max(...probeScores(i, kind))));
    reasons.push(
      asHigh.length > 0
        ? { verdict: 'no_go', code: `${kind}_rewarded`, message: `${KIND_TEXT[kind]} scored as high as the reference answer${ofItems(asHigh.length, probed.length)} (${fmt(worst)}): a model is rewarded for it` }
        : { verdict: 'check', code: `${kind}_rewarded`, message: `${KIND_TEXT[kind]} scored ${fmt(worst)}${ofItems(above.length, probed.length)}, above the bottom of the range (${fmt(bottom)})` },
    );
  }
  const dropped = items.filter((i) => i.probes.some((p) => p.kind === 'empty' && p.dropped === true)).length;
  if (dropped > 0) evidence.push(`an empty completion's group was dropped (scored None)${ofItems(dropped, items.length)}: not trained on`);
  return reasons;
}

function promptReasons(o: OfflineObservations, evidence: string[]): Reason[] {
  const lengths = o.prompt_tokens;
  if (lengths.length === 0) return [];
  const longest = Math.max(...lengths);
  const mean = lengths.reduce((a, b) => a + b, 0) / lengths.length;
  evidence.push(`prompts: ${lengths.length} rendered, mean ${fmt(mean)} and longest ${longest} tokens (${o.prompt_tokens_counted_by ?? 'counted'})`);
  const limit = o.max_token_length;
  if (limit === undefined || limit <= 0) return [];
  const over = lengths.filter((n) => n >= limit);
  if (over.length > 0) {
    return [{ verdict: 'no_go', code: 'prompts_too_long', message: `prompts longer than max_token_length: ${over.length} of ${lengths.length} prompts reach ${limit} tokens (longest ${longest}); their groups are dropped or truncated` }];
  }
  if (longest * 2 > limit) {
    return [{ verdict: 'check', code: 'prompts_long', message: `the longest prompt (${longest} tokens) leaves ${limit - longest} of max_token_length ${limit} tokens for the completion` }];
  }
  return [];
}

const RANK: Record<Reason['verdict'], number> = { no_go: 0, check: 1 };

/** no_go first, then check; within each, in the order the checks ran (setup, crashes, randomness, range, lengths). */
export function rank(reasons: readonly Reason[]): Reason[] {
  return reasons.map((r, i) => ({ r, i })).sort((a, b) => RANK[a.r.verdict] - RANK[b.r.verdict] || a.i - b.i).map(({ r }) => r);
}

export function verdictOf(reasons: readonly Reason[]): Verdict {
  if (reasons.some((r) => r.verdict === 'no_go')) return 'no_go';
  return reasons.length > 0 ? 'check' : 'go';
}

/** The offline checks' reasons and evidence; `go` only when the reward was shown to reach its top on the reference answer. */
export function judgeOffline(o: OfflineObservations): Judgement {
  const evidence: string[] = [];
  const reasons = stepReasons(o);
  if (o.steps.data?.ok === true) {
    if (o.items_count !== undefined) evidence.push(`${o.items_count} items (${o.items_note ?? 'counted'})`);
    reasons.push(...invalidReasons(o.items));
    const random = determinismReason(o.items);
    if (random !== undefined) reasons.push(random);
    else reasons.push(...rangeReasons(o.items, evidence));
    reasons.push(...promptReasons(o, evidence));
    const shownTop = o.items.some((i) => referenceBest(i) !== undefined);
    if (!shownTop && !reasons.some((r) => r.verdict === 'no_go')) {
      const why = o.unchecked.find((u) => u.startsWith('reference') || u.startsWith('scoring')) ?? 'no reference answer was scored';
      reasons.push({ verdict: 'check', code: 'top_not_shown', message: `the reward's top was not shown offline (${why}); run rl_test_inference and check again with its test_id` });
    }
  }
  const ranked = rank(reasons);
  return { verdict: verdictOf(ranked), reasons: ranked, evidence };
}

/**
 * Offline and probe together. A probe that shows signal answers what the offline checks could not
 * (the reward's top): that reason is dropped; every other reason stands.
 */
export function combine(offline: Judgement, probe: Judgement | undefined): Judgement {
  if (probe === undefined) return offline;
  const signal = probe.evidence.some((e) => e.startsWith('training signal'));
  const kept = offline.reasons.filter((r) => !(signal && r.code === 'top_not_shown'));
  const reasons = rank([...kept, ...probe.reasons]);
  return { verdict: verdictOf(reasons), reasons, evidence: [...offline.evidence, ...probe.evidence] };
}
