/**
 * A run's checkpoints as Tinker lists them (python/tinker_api.py `checkpoints`), what keeping them
 * costs, and which of them an action on the "intermediate" ones touches. Tinker bills storage per
 * GB-month and its billing rows for storage carry no session, so a run's storage is computed from
 * its checkpoints' sizes and ages. Pure.
 */
import * as z from 'zod';
import { zString, zNumber, zBoolean } from '../../core/schemaLeaves.js';
import { parseTinkerPath, type CheckpointKind } from './paths.js';

/** Tinker's storage rate (Models & Pricing), dollars per GB kept for a month. */
export const STORAGE_USD_PER_GB_MONTH = 0.1;
/** A GB as storage is billed (10^9 bytes) and a month as 730 hours (8760 / 12). */
const BYTES_PER_GB = 1e9;
export const HOURS_PER_MONTH = 730;

export const CHECKPOINT_JSON = z.object({
  path: zString,
  training_run_id: zString,
  name: zString,
  kind: z.enum(['state', 'sampler']),
  size_bytes: zNumber.nullable(),
  created_at: zString.nullable(),
  expires_at: zString.nullable(),
  public: zBoolean,
});
export type TinkerCheckpoint = z.output<typeof CHECKPOINT_JSON>;

export const CHECKPOINTS_ANSWER = z.object({ checkpoints: z.array(CHECKPOINT_JSON), not_found: z.array(zString) });

const round6 = (x: number): number => Math.round(x * 1e6) / 1e6;

export function monthlyUsd(sizeBytes: number | null): number {
  return round6(((sizeBytes ?? 0) / BYTES_PER_GB) * STORAGE_USD_PER_GB_MONTH);
}

/** What a run's checkpoints hold and cost: now per month, and accrued since each was saved. */
export interface StorageSummary {
  checkpoints: number;
  size_bytes: number;
  monthly_cost_usd: number;
  /** GB-hours kept so far (each checkpoint from its creation to now or its expiry) and their dollars. */
  gigabyte_hours: number;
  accrued_usd: number;
}

export function storageOf(checkpoints: readonly TinkerCheckpoint[], nowMs: number): StorageSummary {
  let bytes = 0;
  let gbHours = 0;
  for (const c of checkpoints) {
    const size = c.size_bytes ?? 0;
    bytes += size;
    const from = Date.parse(c.created_at ?? '');
    const until = Math.min(nowMs, c.expires_at ? Date.parse(c.expires_at) : nowMs);
    if (Number.isFinite(from) && until > from) gbHours += (size / BYTES_PER_GB) * ((until - from) / 3_600_000);
  }
  return {
    checkpoints: checkpoints.length,
    size_bytes: bytes,
    monthly_cost_usd: monthlyUsd(bytes),
    gigabyte_hours: round6(gbHours),
    accrued_usd: round6((gbHours / HOURS_PER_MONTH) * STORAGE_USD_PER_GB_MONTH),
  };
}

/** One checkpoint as rl_checkpoints lists it. */
export interface ListedCheckpoint {
  step: number | null;
  kind: CheckpointKind;
  path: string;
  size_bytes: number | null;
  expires_at: string | null;
  monthly_cost_usd: number;
}

export function listed(c: TinkerCheckpoint): ListedCheckpoint {
  return { step: parseTinkerPath(c.path)?.step ?? null, kind: c.kind, path: c.path, size_bytes: c.size_bytes, expires_at: c.expires_at, monthly_cost_usd: monthlyUsd(c.size_bytes) };
}

/**
 * The run's trained weights among its checkpoints: the sampler checkpoint its training record
 * names last (rl_get_results' `latest`: a cookbook run's `final`, else the newest by step) and the
 * state saved under the same name beside it. Whatever they are called, they are the newest and no
 * rule deletes them.
 */
export function trainedWeights(latest: string | null): string[] {
  const parsed = latest === null ? undefined : parseTinkerPath(latest);
  if (parsed === undefined) return [];
  const sibling = `tinker://${parsed.training_run_id}/${parsed.kind === 'sampler' ? 'weights' : 'sampler_weights'}/${parsed.name}`;
  return [latest!, sibling];
}

/** Oldest first: by step, then by when it was saved; the run's trained weights (`trained`) last. */
export function inOrder(checkpoints: readonly TinkerCheckpoint[], trained: readonly string[] = []): TinkerCheckpoint[] {
  const step = (c: TinkerCheckpoint): number => parseTinkerPath(c.path)?.step ?? -1;
  const last = (c: TinkerCheckpoint): number => (trained.includes(c.path) ? 1 : 0);
  return [...checkpoints].sort((a, b) => last(a) - last(b) || step(a) - step(b) || (a.created_at ?? '').localeCompare(b.created_at ?? ''));
}

/** What an action on the intermediate checkpoints keeps. */
export interface KeepRules {
  /** The newest checkpoint of each kind (for a resumable run its latest state too). */
  latest: boolean;
  /** The best checkpoint by rl_evaluate, when one was evaluated. */
  best?: string;
  /** Steps kept whatever their kind. */
  steps: readonly number[];
  /** The run's trained weights (trainedWeights): kept by every action, whatever the other rules say. */
  trained?: readonly string[];
}

export interface ActionPlan {
  targets: TinkerCheckpoint[];
  kept: { path: string; why: string }[];
}

/** The checkpoints an action touches (all but those kept, within `only` steps when given), and those it keeps and why. */
export function planAction(checkpoints: readonly TinkerCheckpoint[], keep: KeepRules, only?: readonly number[]): ActionPlan {
  const ordered = inOrder(checkpoints, keep.trained);
  const why = new Map<string, string>();
  for (const c of ordered) if (keep.trained?.includes(c.path)) why.set(c.path, "the run's trained weights (rl_get_results names them): never removed");
  if (keep.latest) {
    for (const kind of ['sampler', 'state'] as const) {
      const newest = ordered.filter((c) => c.kind === kind).at(-1);
      if (newest && !why.has(newest.path)) why.set(newest.path, `the latest ${kind} checkpoint`);
    }
  }
  if (keep.best !== undefined && ordered.some((c) => c.path === keep.best)) why.set(keep.best, why.has(keep.best) ? `${why.get(keep.best)}, and the best by rl_evaluate` : 'the best by rl_evaluate');
  for (const c of ordered) {
    const step = parseTinkerPath(c.path)?.step;
    if (step !== undefined && keep.steps.includes(step) && !why.has(c.path)) why.set(c.path, `step ${step} was named in keep`);
  }
  const targets = ordered.filter((c) => {
    if (why.has(c.path)) return false;
    const step = parseTinkerPath(c.path)?.step;
    return only === undefined || (step !== undefined && only.includes(step));
  });
  return { targets, kept: [...why.entries()].map(([path, reason]) => ({ path, why: reason })) };
}

/** python/tinker_api.py's answer to set_ttl, delete, publish and archive_url: one result per path, in order. */
export const RESULTS_ANSWER = z.object({
  results: z.array(
    z.object({
      path: zString,
      ok: zBoolean,
      error: z.object({ kind: zString, status: zNumber.nullable(), message: zString }).optional(),
      url: zString.optional(),
      expires: zString.nullable().optional(),
      already_public: zBoolean.optional(),
    }),
  ),
});
export type PathResult = z.output<typeof RESULTS_ANSWER>['results'][number];
