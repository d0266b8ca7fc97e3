/**
 * The cost settings: the budgets (RL_MAX_RUN_COST_USD, RL_MAX_TOTAL_COST_USD over RL_BUDGET_WINDOW,
 * RL_CONFIRM_ABOVE_USD) and the price table, the shipped one with the RL_MCP_CONFIG file's
 * `prices` entries merged in by model id (an entry replaces the shipped one of its model whole).
 */
import { SettingsError } from '../../core/errors.js';
import type { CostSettings, ModelPrice } from '../../core/settings.js';
import { DEFAULT_PRICES } from './defaultPrices.js';

export const COST_KEYS = ['RL_MAX_RUN_COST_USD', 'RL_MAX_TOTAL_COST_USD', 'RL_BUDGET_WINDOW', 'RL_CONFIRM_ABOVE_USD', 'RL_BILLING_REFRESH_SECONDS'] as const;
/** Tinker's billing lags by hours: asking it more often than every few minutes learns nothing. */
const DEFAULT_BILLING_REFRESH_SECONDS = 300;
type CostKey = (typeof COST_KEYS)[number];

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const RATES = ['prefill', 'sample', 'train'] as const;
const OPTIONAL_RATES = ['cached_prefill'] as const;

function dollars(key: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw.trim());
  if (raw.trim() === '' || !Number.isFinite(n) || n < 0) throw new SettingsError(`${key}=${JSON.stringify(raw)} is not an amount of dollars >= 0 (e.g. 25 or 12.50)`);
  return n;
}

function refreshSeconds(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_BILLING_REFRESH_SECONDS;
  const n = Number(raw.trim());
  if (raw.trim() === '' || !Number.isFinite(n) || n < 1) throw new SettingsError(`RL_BILLING_REFRESH_SECONDS=${JSON.stringify(raw)} is not a number of seconds >= 1`);
  return n;
}

const WINDOW_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** RL_BUDGET_WINDOW: `all` (undefined), or a length such as 24h, 7d, 30m, 90s. */
function budgetWindow(raw: string | undefined): number | undefined {
  const text = raw?.trim().toLowerCase();
  if (text === undefined || text === '' || text === 'all') return undefined;
  const m = /^(\d+(?:\.\d+)?)([smhd])$/.exec(text);
  if (!m || Number(m[1]) <= 0) throw new SettingsError(`RL_BUDGET_WINDOW=${JSON.stringify(raw)} is not a window: use all, or a length such as 24h, 7d, 30m or 90s`);
  return Number(m[1]) * WINDOW_UNITS[m[2]!]!;
}

/** A YAML date may arrive as a Date (YAML 1.1 timestamps) or a string. */
function dateText(value: unknown): string | undefined {
  if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString().slice(0, 10);
  return typeof value === 'string' && DATE.test(value) && !Number.isNaN(Date.parse(value)) ? value : undefined;
}

function priceEntry(model: string, value: unknown, where: string): ModelPrice {
  const at = `RL_MCP_CONFIG ${where}: prices.${model}`;
  const example = `e.g. prices: {"${model}": {prefill: 0.2, sample: 0.6, train: 0.45, as_of: 2026-11-01, source: <url>}} (dollars per million tokens; cached_prefill optional, default 20% of prefill)`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new SettingsError(`${at} must be a mapping of prefill, sample, train, as_of, source; ${example}`);
  const entry = value as Record<string, unknown>;
  const unknown = Object.keys(entry).filter((k) => ![...RATES, ...OPTIONAL_RATES, 'as_of', 'source'].includes(k));
  if (unknown.length > 0) throw new SettingsError(`${at}: unknown key ${unknown.join(', ')}; use prefill, sample, train, cached_prefill, as_of, source`);
  const rate = (name: string): number => {
    const n = entry[name];
    if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) throw new SettingsError(`${at}.${name} must be dollars per million tokens (a number >= 0); ${example}`);
    return n;
  };
  const rates = RATES.map(rate);
  const cached = entry.cached_prefill === undefined ? {} : { cached_prefill: rate('cached_prefill') };
  const asOf = dateText(entry.as_of);
  if (asOf === undefined) throw new SettingsError(`${at}.as_of must be the date the rates were read, YYYY-MM-DD; ${example}`);
  if (entry.source !== undefined && typeof entry.source !== 'string') throw new SettingsError(`${at}.source must be text (where the rates come from)`);
  return { prefill: rates[0]!, sample: rates[1]!, train: rates[2]!, ...cached, as_of: asOf, source: (entry.source as string | undefined) ?? `RL_MCP_CONFIG ${where}` };
}

/** The shipped table with the file's `prices` merged in by model id. */
export function priceTable(prices: unknown, where: string | undefined): Record<string, ModelPrice> {
  const table: Record<string, ModelPrice> = { ...DEFAULT_PRICES };
  if (prices === undefined || prices === null) return table;
  if (typeof prices !== 'object' || Array.isArray(prices)) throw new SettingsError(`RL_MCP_CONFIG ${where}: 'prices' must be a mapping of Tinker model id -> {prefill, sample, train, as_of, source}`);
  for (const [model, value] of Object.entries(prices as Record<string, unknown>)) table[model] = priceEntry(model, value, where ?? '');
  return table;
}

/** The budgets from the environment or the file, and the price table. */
export function costSettings(get: (key: CostKey) => string | undefined, prices: unknown, where: string | undefined): CostSettings {
  return {
    prices: priceTable(prices, where),
    maxRunUsd: dollars('RL_MAX_RUN_COST_USD', get('RL_MAX_RUN_COST_USD')),
    maxTotalUsd: dollars('RL_MAX_TOTAL_COST_USD', get('RL_MAX_TOTAL_COST_USD')),
    budgetWindowSeconds: budgetWindow(get('RL_BUDGET_WINDOW')),
    confirmAboveUsd: dollars('RL_CONFIRM_ABOVE_USD', get('RL_CONFIRM_ABOVE_USD')),
    billingRefreshSeconds: refreshSeconds(get('RL_BILLING_REFRESH_SECONDS')),
  };
}
