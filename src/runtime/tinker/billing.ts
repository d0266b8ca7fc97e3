/**
 * A run's billed usage in dollars: Tinker's billing rows of the run's sessions summed per usage
 * type (tokens, counts; Tinker reports no dollars) and priced with the price table, cached
 * prefill at its own rate; storage computed from the checkpoints' sizes, since Tinker's storage
 * rows carry no session. Pure: the figures are checked by hand in test/unit/tinker-usage.test.ts.
 */
import * as z from 'zod';
import { zString, zNumber } from '../../core/schemaLeaves.js';
import type { ModelPrice } from '../../core/settings.js';
import { STORAGE_USD_PER_GB_MONTH, type StorageSummary } from './checkpoints.js';

const QUANTITIES = {
  training: zNumber,
  sampling_prefill: zNumber,
  sampling_prefill_cached: zNumber,
  sampling_sample: zNumber,
  checkpoint: zNumber,
  storage_gigabyte_hours: zNumber,
};

/** python/tinker_api.py `billing`, the parts used here. */
export const BILLING_ANSWER = z.object({
  window: z.object({ start: zString, end: zString }),
  session_ids: z.array(zString).nullable(),
  as_of: zString.nullable(),
  totals: z.array(z.object({ base_model: zString.nullable(), ...QUANTITIES })),
});
export type BillingAnswer = z.output<typeof BILLING_ANSWER>;

/** Tinker bills prefill served from its cache at a fifth of the prefill rate (since 2026-07-17). */
export const CACHED_PREFILL_SHARE = 0.2;

export const USAGE_TYPES = ['training', 'sampling_prefill', 'sampling_prefill_cached', 'sampling_sample', 'checkpoint', 'storage'] as const;
export type UsageType = (typeof USAGE_TYPES)[number];

export interface BilledLine {
  amount: number;
  unit: 'tokens' | 'checkpoints' | 'GB-hours';
  /** null: not priced (no price for the model, or a type Tinker's price list has no rate for). */
  usd: number | null;
}

export interface Billed {
  /** Dollars of the priced lines; null when Tinker's billing could not be read (the note says why). */
  usd: number | null;
  /** The end of the newest hour Tinker's billing data covers (it lags real time by hours). */
  as_of: string | null;
  by_type: Partial<Record<UsageType, BilledLine>>;
  note: string;
}

const MILLION = 1_000_000;
const round6 = (x: number): number => Math.round(x * 1e6) / 1e6;

export function cachedPrefillRate(price: ModelPrice): number {
  return price.cached_prefill ?? price.prefill * CACHED_PREFILL_SHARE;
}

/** The per-million-token rate of a token type, from a model's price. */
const RATE: Record<'training' | 'sampling_prefill' | 'sampling_prefill_cached' | 'sampling_sample', (p: ModelPrice) => number> = {
  training: (p) => p.train,
  sampling_prefill: (p) => p.prefill,
  sampling_prefill_cached: cachedPrefillRate,
  sampling_sample: (p) => p.sample,
};

/** Per type: the amount, and the dollars of the priced part of it (null when no part was priced). */
class Lines {
  private readonly lines = new Map<UsageType, { amount: number; unit: BilledLine['unit']; usd: number; priced: boolean }>();

  add(type: UsageType, amount: number, unit: BilledLine['unit'], usd: number | null): void {
    const line = this.lines.get(type) ?? { amount: 0, unit, usd: 0, priced: false };
    line.amount += amount;
    if (usd !== null) {
      line.usd += usd;
      line.priced = true;
    }
    this.lines.set(type, line);
  }

  byType(): Billed['by_type'] {
    return Object.fromEntries([...this.lines].map(([type, l]) => [type, { amount: round6(l.amount), unit: l.unit, usd: l.priced ? round6(l.usd) : null }]));
  }
}

/** What the run was billed: `totals` per base model priced by `priceOf`, plus storage from the checkpoints. */
export function billedUsage(billing: BillingAnswer, priceOf: (model: string | null) => ModelPrice | undefined, storage: StorageSummary | undefined): Billed {
  const lines = new Lines();
  const unpriced = new Set<string>();
  const rates = new Set<string>();
  for (const total of billing.totals) {
    const price = priceOf(total.base_model);
    if (price === undefined) unpriced.add(total.base_model ?? 'an unnamed base model');
    else rates.add(`${total.base_model}: ${price.prefill} prefill, ${round6(cachedPrefillRate(price))} cached prefill, ${price.sample} sample, ${price.train} train per million tokens (${price.source}, as of ${price.as_of})`);
    for (const type of ['training', 'sampling_prefill', 'sampling_prefill_cached', 'sampling_sample'] as const) {
      if (total[type] > 0) lines.add(type, total[type], 'tokens', price ? (total[type] * RATE[type](price)) / MILLION : null);
    }
    if (total.checkpoint > 0) lines.add('checkpoint', total.checkpoint, 'checkpoints', null);
  }
  if (storage) lines.add('storage', storage.gigabyte_hours, 'GB-hours', storage.accrued_usd);
  const byType = lines.byType();
  const usd = round6(Object.values(byType).reduce((sum, l) => sum + (l.usd ?? 0), 0));
  return { usd, as_of: billing.as_of, by_type: byType, note: billedNote(billing, [...rates], [...unpriced], storage) };
}

function billedNote(billing: BillingAnswer, rates: string[], unpriced: string[], storage: StorageSummary | undefined): string {
  const sessions = billing.session_ids?.length ?? 0;
  const horizon = billing.as_of
    ? `Tinker's billing rows of the run's ${sessions} session(s) up to ${billing.as_of} (its billing lags real time by up to a few hours: later usage is not in yet)`
    : `Tinker's billing has no rows for the run's ${sessions} session(s) yet (it lags real time by up to a few hours)`;
  const parts = [`Billed: ${horizon}, in tokens and counts, priced with the price table`];
  if (rates.length) parts.push(`rates: ${rates.join('; ')}`);
  if (unpriced.length) parts.push(`no price for ${unpriced.join(', ')}: its usage is listed without dollars and not in usd (add it under prices in the RL_MCP_CONFIG file)`);
  parts.push('checkpoint saves are counted, not priced');
  parts.push(
    storage
      ? `storage is computed from the sizes and ages of the ${storage.checkpoints} checkpoints Tinker lists now at $${STORAGE_USD_PER_GB_MONTH}/GB-month (Tinker's storage rows name no session; deleted checkpoints are not counted)`
      : 'storage is not included: the checkpoints could not be listed',
  );
  return `${parts.join('; ')}.`;
}

/** The billed figure when Tinker's billing could not be read: why, and that the estimate stands. */
export function billedUnavailable(reason: string): Billed {
  return { usd: null, as_of: null, by_type: {}, note: `No billed figure: ${reason}. The estimate (spent_usd) stands.` };
}
