/**
 * What Tinker says a run used, as its record keeps it (run.json `tinker`): the billed dollars and
 * the storage its checkpoints hold, from one question to python/tinker_api.py (`usage`), each
 * part with its own failure (billing without the billing-view role while the checkpoints list).
 */
import * as z from 'zod';
import { zString, zNumber } from '../../core/schemaLeaves.js';
import type { ModelPrice } from '../../core/settings.js';
import { BILLING_ANSWER, billedUnavailable, billedUsage, type Billed } from './billing.js';
import { CHECKPOINTS_ANSWER, storageOf, type StorageSummary } from './checkpoints.js';
import { failureSentence, type TinkerFailure, type TinkerFailureKind } from './helper.js';

const FAILURE = z.object({ error: z.object({ kind: zString, status: zNumber.nullable(), message: zString }) });
export const USAGE_ANSWER = z.object({ billing: z.union([FAILURE, BILLING_ANSWER]), checkpoints: z.union([FAILURE, CHECKPOINTS_ANSWER]) });
export type UsageAnswer = z.output<typeof USAGE_ANSWER>;

/** What run.json keeps of Tinker's word on the run; asked again after RL_BILLING_REFRESH_SECONDS. */
export interface RunTinkerUsage {
  checked_at: string;
  /** The Tinker training runs the run's tinker:// paths name (their sessions are what is billed). */
  training_run_ids: string[];
  billed: Billed;
  storage?: StorageSummary;
  /** Why the checkpoints (and so the storage) could not be listed. */
  storage_error?: string;
}

const asFailure = (e: z.output<typeof FAILURE>['error']): TinkerFailure => ({ kind: e.kind as TinkerFailureKind, status: e.status, message: e.message });

/** Why billing could not be read, in the words a user acts on. */
export function billingFailure(error: TinkerFailure): string {
  if (error.kind === 'permission') {
    return `TINKER_API_KEY lacks the billing-view role in its Tinker organization, which reading billed usage needs (Tinker answered ${error.status ?? 403}: ${error.message}); an organization admin can grant it`;
  }
  return `Tinker's billing could not be read: ${failureSentence(error)}`;
}

/** The record's usage from the helper's answer (or the failure of the whole question). */
export function usageOf(answer: { ok: true; value: UsageAnswer } | { ok: false; error: TinkerFailure }, ids: string[], priceOf: (model: string | null) => ModelPrice | undefined, nowMs: number): RunTinkerUsage {
  const head = { checked_at: new Date(nowMs).toISOString(), training_run_ids: ids };
  if (!answer.ok) return { ...head, billed: billedUnavailable(billingFailure(answer.error)), storage_error: failureSentence(answer.error) };
  const { billing, checkpoints } = answer.value;
  const listing = 'error' in checkpoints ? { storage_error: failureSentence(asFailure(checkpoints.error)) } : { storage: storageOf(checkpoints.checkpoints, nowMs) };
  const billed = 'error' in billing ? billedUnavailable(billingFailure(asFailure(billing.error))) : billedUsage(billing, priceOf, listing.storage);
  return { ...head, billed, ...listing };
}

/** No tinker:// path yet: nothing names the run's Tinker session, so nothing is asked. */
export function usageBeforeCheckpoints(nowMs: number): RunTinkerUsage {
  return {
    checked_at: new Date(nowMs).toISOString(),
    training_run_ids: [],
    billed: billedUnavailable("the run has saved no Tinker checkpoint yet, and its tinker:// paths are what name its Tinker training run and session (billing is per session)"),
  };
}
