/**
 * rl_list_runs: one page of the registry, newest first, from the run index (runIndex.ts).
 *
 * Pages are chained by an opaque cursor naming the last run shown (its place in the order) and the
 * filters. The next page holds the runs after that place, so a run started between two calls (it
 * sorts first) pushes nothing already shown onto the next page and makes nothing skipped, which an
 * offset would. A run whose status changes between pages may enter or leave a status filter.
 */
import { UserError } from '../../core/errors.js';
import { type Health, mainReasonOnly } from './watching/health.js';
import { type FrameworkName, isActive, isEnded, type PlacementName, RUN_STATUSES, type RunStatus } from './seams/record.js';
import { compareRuns, type IndexedRun, type RunIndex } from './registry/runIndex.js';
import type { ListedCost } from './watching/runCost.js';
import { THIS_HOST } from '../../core/os/host.js';
import type { KeeperState } from './keeping.js';

export const STATUS_FILTERS = [...RUN_STATUSES, 'active', 'ended'] as const;
export type StatusFilter = (typeof STATUS_FILTERS)[number];

export const MAX_PAGE = 200;
/** A page ends sooner when its runs' JSON would pass this: an answer stays under about 10k tokens. */
export const MAX_PAGE_CHARS = 28_000;
/**
 * Ended runs stat'ed per listing beyond the page, in turn: a record rewritten by hand is noticed
 * within (runs / this) listings, at once in a registry this small.
 */
const SWEEP_PER_LISTING = 500;

export interface RunQuery {
  /** 1..MAX_PAGE. */
  limit: number;
  cursor?: string;
  status?: StatusFilter;
  environment?: string;
}

export interface ListedRun {
  run_id: string;
  environment: string | null;
  /** Absent for a damaged record. */
  framework?: FrameworkName;
  /** Where its processes run; absent for a damaged record. */
  placement?: PlacementName;
  status: RunStatus;
  wandb_run_name: string | null;
  started_at: string | null;
  ended_at: string | null;
  error?: string;
  health?: Health;
  cost?: ListedCost;
  /** An active run: the host it lives on (a Slurm run: the host it was started from) and how its keeper stands from here. */
  host?: string;
  keeper?: KeeperState;
}

export interface RunPage {
  runs: ListedRun[];
  /** Runs on this page. */
  count: number;
  /** Runs matching the filters, on every page. */
  total: number;
  next_cursor?: string;
}

interface Filters {
  status?: StatusFilter;
  environment?: string;
}

interface Place extends Filters {
  after?: Pick<IndexedRun, 'sort_ms' | 'run_id'>;
}

function encodeCursor(last: IndexedRun, filters: Filters): string {
  return Buffer.from(JSON.stringify([last.sort_ms, last.run_id, filters.status ?? null, filters.environment ?? null])).toString('base64url');
}

function badCursor(detail: string): UserError {
  return new UserError(`${detail} Pass the next_cursor of the previous rl_list_runs answer as it is, or omit cursor to start from the newest run.`, { expected: 'next_cursor from rl_list_runs' });
}

/** Where the page starts and what it filters: the cursor's filters, which arguments may repeat but not change. */
function placeOf(query: RunQuery): Place {
  if (query.cursor === undefined) return { status: query.status, environment: query.environment };
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(query.cursor, 'base64url').toString('utf8'));
  } catch {
    throw badCursor('cursor is not one rl_list_runs gave.');
  }
  const [sortMs, runId, status, environment] = Array.isArray(value) ? value : [];
  const filtersOk = (status === null || (STATUS_FILTERS as readonly unknown[]).includes(status)) && (environment === null || typeof environment === 'string');
  if (typeof sortMs !== 'number' || typeof runId !== 'string' || !filtersOk) throw badCursor('cursor is not one rl_list_runs gave.');
  const place: Place = { after: { sort_ms: sortMs, run_id: runId }, status: (status as StatusFilter | null) ?? undefined, environment: (environment as string | null) ?? undefined };
  if ((query.status !== undefined && query.status !== place.status) || (query.environment !== undefined && query.environment !== place.environment)) {
    throw badCursor(`cursor continues a listing filtered by status=${place.status ?? 'any'}, environment=${place.environment ?? 'any'}; other filters start a new listing.`);
  }
  return place;
}

function matches(run: IndexedRun, filters: Filters): boolean {
  const { status, environment } = filters;
  const statusOk = status === undefined || run.status === status || (status === 'active' && isActive(run.status)) || (status === 'ended' && isEnded(run.status));
  return statusOk && (environment === undefined || run.environment === environment);
}

function listed(index: RunIndex, run: IndexedRun, nowMs: number, keeperOf: (runId: string) => KeeperState): ListedRun {
  const { run_id, environment, status, wandb_run_name, started_at, ended_at } = run;
  if (run.damaged !== undefined) return { run_id, environment: null, status, wandb_run_name: null, started_at, ended_at: null, error: run.damaged };
  const health = index.healthOf(run_id, nowMs);
  const where = isActive(status) ? { host: run.host ?? THIS_HOST.hostname, keeper: keeperOf(run_id) } : {};
  return { run_id, environment, framework: run.framework ?? 'atropos', placement: run.placement ?? 'local', status, wandb_run_name, started_at, ended_at, ...(health ? { health: mainReasonOnly(health) } : {}), ...(run.cost ? { cost: run.cost } : {}), ...where };
}

/** One page of runs matching the query, newest first; `total` counts every matching run. */
export function listRuns(index: RunIndex, query: RunQuery, nowMs: number, keeperOf: (runId: string) => KeeperState): RunPage {
  const place = placeOf(query);
  const { limit } = query;
  index.refresh();
  index.sweep(SWEEP_PER_LISTING);
  let matching: IndexedRun[] = [];
  let rest: IndexedRun[] = [];
  // What is about to be shown is stat'ed again: a record rewritten since it was read shows as it
  // is now. Rarely more than one round: each round re-reads only what changed.
  for (let round = 0; round < 3; round++) {
    matching = index.runs().filter((run) => matches(run, place));
    rest = place.after ? matching.filter((run) => compareRuns(run, place.after!) > 0) : matching;
    if (!index.verify(rest.slice(0, limit).map((run) => run.run_id))) break;
  }
  const runs: ListedRun[] = [];
  let chars = 0;
  for (const run of rest.slice(0, limit)) {
    const shown = listed(index, run, nowMs, keeperOf);
    chars += JSON.stringify(shown).length + 1;
    if (chars > MAX_PAGE_CHARS && runs.length > 0) break;
    runs.push(shown);
  }
  const last = rest[runs.length - 1];
  return {
    runs,
    count: runs.length,
    total: matching.length,
    ...(rest.length > runs.length && last ? { next_cursor: encodeCursor(last, place) } : {}),
  };
}
