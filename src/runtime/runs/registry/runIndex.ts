/**
 * The run index: for every run, what rl_list_runs shows and what adoption needs (the processes its
 * record calls running), with the stat of run.json it was read from (statSignature). A record is
 * parsed again only when that stat changes, and the index is persisted under RL_HOME/cache/, so a
 * restarted server does not parse 10,000 records again. Only the store writes run.json.
 *
 * What is stat'ed when. A run that may still change by itself (active; `unknown`, perhaps being
 * created; ended while its record still calls a process running) is stat'ed at every refresh. An
 * ended run's listed fields no longer change (only rate-limit stamps do), so refresh leaves it
 * alone; a record can still be rewritten by hand, though, so a listing stats the runs it is about
 * to show (`verify`) and a rolling `sweep` over the rest. New and removed run directories are
 * found by reading the runs folder, when its mtime moved.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { RUN_FILES, RUN_ID_PATTERN } from '../../../core/files/home.js';
import type { Logger } from '../../../core/logger.js';
import { isMissing } from '../../../core/files/safePath.js';
import { statSignature } from '../../../core/files/watch.js';
import { assessHealth, HEALTH_VERDICTS, type Health, type HealthPolicy } from '../watching/health.js';
import type { ProcessHandle } from '../seams/placement.js';
import { processIdentity } from '../choice/placements.js';
import { FRAMEWORKS, isActive, isDamaged, isEnded, PLACEMENTS, processOf, RUN_STATUSES, runProcesses, type FrameworkName, type PlacementName, type RegistryEntry, type RunRecord, type RunStatus } from '../seams/record.js';
import type { RunStore } from './store.js';
import { listedCost, type ListedCost } from '../watching/runCost.js';

const FORMAT_VERSION = 1;
/**
 * The runs folder's mtime ticks coarsely: a directory made in the same tick as the change we last
 * read would not move it, so an mtime younger than this at the read is not trusted.
 */
const FOLDER_SETTLED_MS = 1_000;
/** Changes are written together, at most this often (and at close). */
const SAVE_DELAY_MS = 1_000;

/**
 * A process a record calls running, as its placement identifies it: adoption asks the placement
 * whether it still lives (locally: pid and start time).
 */
export type RecordedProcess = ProcessHandle;

export interface IndexedRun {
  run_id: string;
  status: RunStatus;
  environment: string | null;
  wandb_run_name: string | null;
  started_at: string | null;
  ended_at: string | null;
  /** Listings go newest first by this: created_at; for a damaged run, its directory's mtime. */
  sort_ms: number;
  /** Why run.json cannot be used (status `unknown`). */
  damaged?: string;
  /** An ended run's health, judged once: it no longer changes with time. */
  health?: Health;
  running: RecordedProcess[];
  /** Where its processes live; an index written before placements existed has none: `local`. */
  placement?: PlacementName;
  /** The host it was created on (its record's origin), when the record names one. */
  host?: string;
  /** Its framework when not `atropos` (an index written before there were two has none). */
  framework?: FrameworkName;
  /** Spend so far and the expected total, estimated (runCost.ts). */
  cost?: ListedCost;
}

interface Slot {
  /** statSignature of run.json when `run` was read; `missing` when there was none. */
  key: string;
  run: IndexedRun;
  /** An active run's whole record: its health is judged anew at each listing. Never persisted. */
  record?: RunRecord;
}

/** Newest first; the run id breaks ties, so the order is total and a cursor can point into it. */
export function compareRuns(a: Pick<IndexedRun, 'sort_ms' | 'run_id'>, b: Pick<IndexedRun, 'sort_ms' | 'run_id'>): number {
  return b.sort_ms - a.sort_ms || (a.run_id < b.run_id ? -1 : a.run_id > b.run_id ? 1 : 0);
}

export function recordedProcesses(record: RunRecord): RecordedProcess[] {
  return runProcesses(record).flatMap((name) => {
    const p = processOf(record, name);
    return p.state === 'running' ? [processIdentity(record.placement).handle(p)] : [];
  });
}

/** Whether a process the record calls running still lives, as its placement tells. */
export const anyAlive = (run: { placement?: PlacementName; running: RecordedProcess[] }): boolean => run.running.some((p) => processIdentity(run.placement ?? 'local').isAlive(p));

const mayChange = (run: IndexedRun): boolean => !isEnded(run.status) || run.running.length > 0;

/** What is persisted of a slot. An active run's stat is left out: it is read again after a restart anyway. */
const stored = (slot: Slot): { key: string; run: IndexedRun } => ({ key: isActive(slot.run.status) ? '' : slot.key, run: slot.run });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNullableString = (v: unknown): boolean => v === null || typeof v === 'string';

/** Enough checking that a damaged or foreign index file cannot put a malformed run in a listing. */
function isStoredSlot(v: unknown): v is { key: string; run: IndexedRun } {
  if (!isObject(v) || typeof v.key !== 'string' || !isObject(v.run)) return false;
  const r = v.run;
  const health = r.health;
  return (
    typeof r.run_id === 'string' &&
    RUN_ID_PATTERN.test(r.run_id) &&
    (RUN_STATUSES as readonly unknown[]).includes(r.status) &&
    [r.environment, r.wandb_run_name, r.started_at, r.ended_at].every(isNullableString) &&
    typeof r.sort_ms === 'number' &&
    (r.damaged === undefined || typeof r.damaged === 'string') &&
    (r.cost === undefined || (isObject(r.cost) && typeof r.cost.spent_usd === 'number' && typeof r.cost.expected_total_usd === 'number')) &&
    (health === undefined || (isObject(health) && (HEALTH_VERDICTS as readonly unknown[]).includes(health.verdict) && Array.isArray(health.reasons))) &&
    Array.isArray(r.running) &&
    r.running.every((p) => isObject(p)) &&
    (r.placement === undefined || (PLACEMENTS as readonly unknown[]).includes(r.placement)) &&
    (r.host === undefined || typeof r.host === 'string') &&
    (r.framework === undefined || (FRAMEWORKS as readonly unknown[]).includes(r.framework))
  );
}

export class RunIndex {
  private readonly slots = new Map<string, Slot>();
  /** Run ids in listing order; rebuilt when a run comes, goes or changes its sort key. */
  private order?: string[];
  /** The runs folder's mtime at the last read of it that can be trusted; -1: read it again. */
  private folderMtime = -1;
  private sweepFrom = 0;
  private loaded = false;
  private dirty = false;
  private saveTimer?: NodeJS.Timeout;
  /** Records parsed by this index: what the stat keys saved is visible to benchmarks and tests. */
  parsed = 0;

  constructor(
    private readonly store: RunStore,
    private readonly file: string,
    private readonly policy: HealthPolicy,
    private readonly logger: Logger,
  ) {}

  /** Brings in new and removed run directories, and every run that may still change by itself. */
  refresh(): void {
    this.load();
    this.readFolder();
    for (const [id, slot] of this.slots) if (mayChange(slot.run)) this.check(id);
  }

  /** The active runs, newest first: found through the index (no parse of ended runs), then read fresh. */
  active(): RunRecord[] {
    this.refresh();
    return this.runs().flatMap((run) => {
      if (!isActive(run.status)) return [];
      const entry = this.store.read(run.run_id);
      return entry !== undefined && !isDamaged(entry) && isActive(entry.status) ? [entry] : [];
    });
  }

  /** Every run, newest first, as of the last refresh. */
  runs(): IndexedRun[] {
    return this.ids().map((id) => this.slots.get(id)!.run);
  }

  /** The run's health: an ended run's as judged once, an active run's judged now from its record. */
  healthOf(runId: string, nowMs: number): Health | undefined {
    const slot = this.slots.get(runId);
    if (slot?.run.health !== undefined) return slot.run.health;
    return slot?.record && assessHealth(slot.record, nowMs, this.policy);
  }

  /** Stats these runs again (what a listing is about to show); true when one of them changed. */
  verify(runIds: readonly string[]): boolean {
    let changed = false;
    for (const id of runIds) changed = this.check(id) || changed;
    return changed;
  }

  /** Stats the next `count` runs in turn, so that a record rewritten by hand is noticed in time. */
  sweep(count: number): void {
    const ids = this.ids();
    const n = Math.min(count, ids.length);
    const from = this.sweepFrom % Math.max(1, ids.length);
    this.verify([...ids.slice(from, from + n), ...ids.slice(0, Math.max(0, from + n - ids.length))]);
    this.sweepFrom = from + n;
  }

  /** Writes the index if it changed: a temp file renamed over it, so no reader sees half of it. */
  save(): void {
    clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    if (!this.dirty) return;
    this.dirty = false;
    const temp = `${this.file}.${process.pid}.tmp`;
    try {
      mkdirSync(dirname(this.file), { recursive: true });
      writeFileSync(temp, JSON.stringify({ version: FORMAT_VERSION, runs: [...this.slots.values()].map(stored) }));
      renameSync(temp, this.file);
    } catch (err) {
      rmSync(temp, { force: true });
      this.logger.warn({ file: this.file, err: String(err) }, 'run index not saved; the next server start reads the changed records again');
    }
  }

  private ids(): string[] {
    this.order ??= [...this.slots.values()].map((s) => s.run).sort(compareRuns).map((r) => r.run_id);
    return this.order;
  }

  /** Reads the persisted index once; any problem with it only means reading the records again. */
  private load(): void {
    if (this.loaded) return;
    this.loaded = true;
    let doc: unknown;
    try {
      doc = JSON.parse(readFileSync(this.file, 'utf8'));
    } catch (err) {
      if (!isMissing(err)) this.logger.warn({ file: this.file, err: String(err) }, 'run index unreadable; reading the records again');
      return;
    }
    if (!isObject(doc) || doc.version !== FORMAT_VERSION || !Array.isArray(doc.runs)) return;
    for (const item of doc.runs) if (isStoredSlot(item)) this.slots.set(item.run.run_id, { key: item.key, run: item.run });
  }

  private readFolder(): void {
    const mtime = statSync(this.store.root, { throwIfNoEntry: false })?.mtimeMs ?? 0;
    if (mtime === this.folderMtime) return;
    const readAt = Date.now();
    const ids = new Set(this.store.ids());
    for (const id of this.slots.keys()) if (!ids.has(id)) this.remove(id);
    for (const id of ids) if (!this.slots.has(id)) this.check(id);
    this.folderMtime = readAt - mtime > FOLDER_SETTLED_MS ? mtime : -1;
  }

  private signature(runId: string): string {
    try {
      return statSignature(statSync(join(this.store.dir(runId), RUN_FILES.record)));
    } catch (err) {
      return isMissing(err) ? 'missing' : `error ${(err as NodeJS.ErrnoException).code}`;
    }
  }

  /** Reads the run's record again if its stat changed; true when what the index holds of it changed. */
  private check(runId: string): boolean {
    const slot = this.slots.get(runId);
    // The stat is taken before the read: a write in between leaves a key that no longer matches.
    const key = this.signature(runId);
    if (slot !== undefined && slot.key === key && (slot.record !== undefined || !isActive(slot.run.status))) return false;
    const entry = this.store.read(runId);
    this.parsed++;
    if (entry === undefined) return this.remove(runId);
    const next: Slot = { key, run: this.indexed(entry), ...(!isDamaged(entry) && isActive(entry.status) ? { record: entry } : {}) };
    this.slots.set(runId, next);
    if (slot?.run.sort_ms !== next.run.sort_ms) this.order = undefined;
    const changed = slot === undefined || JSON.stringify(stored(slot)) !== JSON.stringify(stored(next));
    if (changed) this.touched();
    return changed;
  }

  private indexed(entry: RegistryEntry): IndexedRun {
    if (isDamaged(entry)) {
      const at = entry.created_at ?? null;
      return { run_id: entry.run_id, status: 'unknown', environment: null, wandb_run_name: null, started_at: at, ended_at: null, sort_ms: Date.parse(at ?? '') || 0, damaged: entry.damaged, running: [] };
    }
    const cost = listedCost(entry);
    return {
      run_id: entry.run_id,
      status: entry.status,
      environment: entry.environment,
      wandb_run_name: entry.wandb_run_name,
      started_at: entry.started_at,
      ended_at: entry.ended_at ?? null,
      sort_ms: Date.parse(entry.created_at) || 0,
      ...(isEnded(entry.status) ? { health: assessHealth(entry, Date.now(), this.policy) } : {}),
      running: recordedProcesses(entry),
      ...(entry.placement !== 'local' ? { placement: entry.placement } : {}),
      ...(entry.origin ? { host: entry.origin.hostname } : {}),
      ...(entry.framework !== 'atropos' ? { framework: entry.framework } : {}),
      ...(cost ? { cost } : {}),
    };
  }

  private remove(runId: string): boolean {
    if (!this.slots.delete(runId)) return false;
    this.order = undefined;
    this.touched();
    return true;
  }

  private touched(): void {
    this.dirty = true;
    if (this.saveTimer !== undefined) return;
    this.saveTimer = setTimeout(() => this.save(), SAVE_DELAY_MS);
    this.saveTimer.unref();
  }
}
