/**
 * The fake W&B's data: entities -> projects -> runs seeded by a test, and the views the GraphQL
 * answers are built from, encoded as the real server encodes them: config and
 * summaries as JSON *strings* written the Python way (bare NaN), historyKeys and sampledHistory
 * as JSON values (non-finite as "NaN" strings), run filters as MongoDB-style documents.
 */
import { evenlySpaced } from '../../../src/runtime/wandb/history.js';

export interface FakeRun {
  /** The W&B run id (GraphQL `name`). */
  name: string;
  displayName?: string;
  /** Default `running`. */
  state?: string;
  tags?: string[];
  group?: string | null;
  jobType?: string | null;
  /** Naive ISO (`2026-01-01T00:00:05`) as W&B sends it; default: in insertion order. */
  createdAt?: string;
  heartbeatAt?: string;
  /** Plain values; wrapped `{"value": v, "desc": null}` on the wire. */
  config?: Record<string, unknown>;
  /** Default: derived from `history` (the last value of every key), as W&B keeps it. */
  summary?: Record<string, unknown>;
  /** One row per `log()` call, each with `_step`; JS NaN/Infinity stand for non-finite values. */
  history?: Record<string, unknown>[];
  user?: { name: string; username: string };
}

export class FilterError extends Error {}

/** Python's json.dumps: `, `/`: ` separators and bare NaN / Infinity / -Infinity. */
export function pythonJsonDumps(value: unknown): string {
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}: ${pythonJsonDumps(v)}`).join(', ')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** For JSON-typed fields, which must be valid JSON: non-finite numbers become their names. */
export function jsonScalar(value: unknown): unknown {
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (Array.isArray(value)) return value.map(jsonScalar);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonScalar(v)]));
  return value;
}

export function summaryOf(run: FakeRun): Record<string, unknown> {
  if (run.summary) return run.summary;
  const summary: Record<string, unknown> = {};
  for (const row of run.history ?? []) Object.assign(summary, row);
  if (run.history?.length) summary._wandb = { runtime: run.history.length };
  return summary;
}

function typeName(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'object' && !Array.isArray(value) && typeof (value as { _type?: unknown })._type === 'string') return (value as { _type: string })._type;
  return typeof value === 'number' ? 'number' : typeof value === 'string' ? 'string' : typeof value === 'boolean' ? 'bool' : Array.isArray(value) ? 'list' : 'map';
}

export function historyKeysOf(run: FakeRun): unknown {
  const keys: Record<string, Map<string, number>> = {};
  let lastStep: number | undefined;
  for (const row of run.history ?? []) {
    if (typeof row._step === 'number') lastStep = Math.max(lastStep ?? row._step, row._step);
    for (const [key, value] of Object.entries(row)) {
      const counts = (keys[key] ??= new Map());
      counts.set(typeName(value), (counts.get(typeName(value)) ?? 0) + 1);
    }
  }
  const out = Object.fromEntries(Object.entries(keys).map(([k, counts]) => [k, { typeCounts: [...counts].map(([type, count]) => ({ type, count })) }]));
  return lastStep === undefined ? { keys: out } : { lastStep, keys: out };
}

function inStepRange(row: Record<string, unknown>, minStep?: unknown, maxStep?: unknown): boolean {
  const step = row._step as number;
  return (typeof minStep !== 'number' || step >= minStep) && (typeof maxStep !== 'number' || step < maxStep);
}

/** One spec: rows holding *every* key (W&B's AND semantics), projected to those keys, sampled. */
export interface SampleSpec {
  keys: string[];
  samples?: number;
  minStep?: number;
  maxStep?: number;
}

export function sampledHistoryOf(run: FakeRun, spec: SampleSpec): unknown[] {
  const rows = (run.history ?? [])
    .filter((row) => spec.keys.every((k) => k in row) && inStepRange(row, spec.minStep, spec.maxStep))
    .map((row) => Object.fromEntries(spec.keys.map((k) => [k, jsonScalar(row[k])])));
  return evenlySpaced(rows, spec.samples ?? 500);
}

/** `history(samples, minStep, maxStep)`: full rows as Python-written JSON strings. */
export function historyLinesOf(run: FakeRun, samples?: unknown, minStep?: unknown, maxStep?: unknown): string[] {
  const rows = (run.history ?? []).filter((row) => inStepRange(row, minStep, maxStep));
  return evenlySpaced(rows, typeof samples === 'number' ? samples : 500).map(pythonJsonDumps);
}

/** A filter or order field as W&B accepts it (camelCase or snake_case), resolved on a run. */
function fieldValue(run: FakeRun, field: string): unknown {
  if (field.startsWith('config.')) return run.config?.[field.slice('config.'.length).replace(/\.value$/, '')];
  if (field.startsWith('summary_metrics.')) return summaryOf(run)[field.slice('summary_metrics.'.length)];
  switch (field) {
    case 'name':
      return run.name;
    case 'displayName':
    case 'display_name':
      return run.displayName;
    case 'state':
      return run.state ?? 'running';
    case 'tags':
      return run.tags ?? [];
    case 'group':
      return run.group ?? null;
    case 'jobType':
    case 'job_type':
      return run.jobType ?? null;
    case 'createdAt':
    case 'created_at':
      return run.createdAt;
    case 'heartbeatAt':
    case 'heartbeat_at':
      return run.heartbeatAt ?? run.createdAt;
    case 'username':
      return run.user?.username;
    default:
      throw new FilterError(`unknown filter field '${field}'`);
  }
}

/** Equality, with array fields (tags) matching on membership as in MongoDB. */
function equals(value: unknown, target: unknown): boolean {
  return Array.isArray(value) ? value.some((v) => v === target) : value === target;
}

/** -1, 0 or 1 for two numbers or two strings; undefined when they do not compare. */
function ordering(a: unknown, b: unknown): number | undefined {
  if ((typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string')) return a < b ? -1 : a > b ? 1 : 0;
  return undefined;
}

function compare(value: unknown, target: unknown, test: (c: number) => boolean): boolean {
  const c = ordering(value, target);
  return c !== undefined && test(c);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function operatorMatches(value: unknown, op: string, arg: unknown): boolean {
  switch (op) {
    case '$eq':
      return equals(value, arg);
    case '$ne':
      return !equals(value, arg);
    case '$gt':
      return compare(value, arg, (c) => c > 0);
    case '$gte':
      return compare(value, arg, (c) => c >= 0);
    case '$lt':
      return compare(value, arg, (c) => c < 0);
    case '$lte':
      return compare(value, arg, (c) => c <= 0);
    case '$in':
    case '$nin': {
      if (!Array.isArray(arg)) throw new FilterError(`${op} needs a list`);
      const hit = arg.some((a) => equals(value, a));
      return op === '$in' ? hit : !hit;
    }
    case '$exists':
      return (value !== undefined && value !== null) === Boolean(arg);
    case '$regex':
      return typeof value === 'string' && new RegExp(String(arg)).test(value);
    default:
      throw new FilterError(`unknown operator ${op}`);
  }
}

export function runMatches(run: FakeRun, filter: unknown): boolean {
  if (!isPlainObject(filter)) throw new FilterError('a filter must be an object');
  return Object.entries(filter).every(([key, cond]) => {
    if (key === '$and' || key === '$or' || key === '$nor') {
      if (!Array.isArray(cond)) throw new FilterError(`${key} needs a list`);
      if (key === '$and') return cond.every((c) => runMatches(run, c));
      const any = cond.some((c) => runMatches(run, c));
      return key === '$or' ? any : !any;
    }
    const value = fieldValue(run, key);
    if (isPlainObject(cond) && Object.keys(cond).every((k) => k.startsWith('$'))) {
      return Object.entries(cond).every(([op, arg]) => operatorMatches(value, op, arg));
    }
    return equals(value, cond);
  });
}

/** `order` as the SDK sends it (`+created_at`, `-summary_metrics.loss`); null: newest first. */
export function sortRuns(runs: FakeRun[], order: unknown): FakeRun[] {
  const spec = typeof order === 'string' && order !== '' ? order : '-created_at';
  const descending = spec.startsWith('-');
  const field = spec.replace(/^[+-]/, '');
  const indexed = runs.map((run, index) => ({ run, index, key: fieldValue(run, field) }));
  indexed.sort((a, b) => (descending ? -1 : 1) * (ordering(a.key, b.key) ?? 0) || a.index - b.index);
  return indexed.map((e) => e.run);
}
