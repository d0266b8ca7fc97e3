/**
 * Training runs: starting them, answering about them, stopping them. The registry on disk is the
 * truth, shared by every server on the host. Each run is kept by its own keeper process
 * (keeper/keeper.ts), spawned here once the run is created; a server reads the records the keepers
 * write and asks them to stop (supervision/requests.ts). A run whose keeper died (kill -9, OOM) is
 * given a new one by the next call touching it or by the registry look every 2 s.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../core/errors.js';
import { RUN_FILES, runIndexPath } from '../../core/files/home.js';
import type { CoreServices } from '../../core/services.js';
import { delay } from '../../core/wait.js';
import type { FileLock } from '../../core/os/fileLock.js';
import { type StartedRun, type StatusReport, type StopAnswer, stopAnswer } from './answers.js';
import type { RunSelection } from './seams/framework.js';
import { frameworkFor } from './choice/frameworks.js';
import { placement } from './choice/placements.js';
import type { PlacementOptions } from './seams/placement.js';
import { activeOf, createRun } from './creation.js';
import { statusWindow, type WindowDecision } from './registry/rateLimit.js';
import { isActive, isDamaged, observedProgress, type PlacementName, type RegistryEntry, type RunRecord, runProcesses, type RunStatus } from './seams/record.js';
import { keeperView, livesElsewhere, type WhereView, whereView } from './keeping.js';
import { DetachedKeepers, type KeeperLauncher } from './keeperSpawn.js';
import { requestStop } from './supervision/requests.js';
import { refuseAtLimit } from './placement/host.js';
import { RunStore } from './registry/store.js';
import { describeRun } from './view.js';
import { assessHealth, type HealthPolicy } from './watching/health.js';
import { listRuns, type RunPage, type RunQuery } from './listing.js';
import { anyAlive, recordedProcesses, RunIndex } from './registry/runIndex.js';
import { type WaitAnswer, waitForRun, type WaitRequest } from './waiting.js';
import { estimateSelection, runCost, type SelectionEstimate } from './watching/runCost.js';
import type { RunUsage } from './usage.js';
import { type ResumedRun, resumeRun } from './resume.js';

/** How often the registry is checked for runs whose keeper is gone. */
const FOLLOW_MS = 2_000;
/** rl_stop_training waits this long for the stop to finish before answering `stopping`. */
const STOP_ANSWER_WAIT_MS = 20_000;
/** How often a waiting stop reads the run's status. */
const STOP_POLL_MS = 50;
/** A server exiting with RL_STOP_RUNS_ON_EXIT=1 waits this long for its runs' keepers to stop them (clients allow 2 s). */
const EXIT_STOP_WAIT_MS = 1_800;

/** Where a start places its run (RL_PLACEMENT unless it says), with what resources, and whether it only shows what it would do. */
export interface StartOptions {
  placement?: PlacementName;
  resources?: PlacementOptions;
  /** Lay the run out and answer it (a Slurm job's script included) without writing or starting anything. */
  dryRun?: boolean;
}

export class RunManager {
  private readonly store: RunStore;
  /** What listings and the registry scan know of every run, parsed again only when run.json changed. */
  private readonly index: RunIndex;
  /** Runs this server started or resumed: RL_STOP_RUNS_ON_EXIT=1 stops them when it exits. */
  private readonly own = new Set<string>();
  /** Run creations of this server, one at a time (a second one must see the first run). */
  private creating: Promise<unknown> = Promise.resolve();
  private follow?: NodeJS.Timeout;
  /** Some run was active at the last look: its keeper may die at any time, so the registry is looked at on every follow tick. */
  private anyActive = false;
  /** The runs root's mtime at the last scan: a run created by another server changes it. */
  private scannedRootMtime = -1;
  private closed = false;

  /** `keepers`: how a run's keeper starts; a detached process (the bench compares keeping a run in this process). */
  constructor(
    private readonly core: CoreServices,
    readonly usage: RunUsage,
    private readonly keepers: KeeperLauncher = new DetachedKeepers(),
  ) {
    this.store = new RunStore(core.settings.home);
    this.index = new RunIndex(this.store, runIndexPath(core.settings.home), this.healthPolicy, core.logger);
    this.reconcile();
  }

  /**
   * Starts a run of `selection`: refusals first, then the record, then start-up in the background.
   * Starts check their requirements concurrently; laying out and creating runs goes one start at a
   * time (a start must see the run created before it), under the start lock shared with the other
   * servers on RL_HOME.
   */
  async start(selection: RunSelection, options: StartOptions = {}, signal?: AbortSignal): Promise<StartedRun> {
    const { settings } = this.core;
    const framework = frameworkFor(selection);
    const where = placement(options.placement ?? settings.placement, settings);
    refuseAtLimit(activeOf(this.activeRuns(), where), where.limit(settings));
    const runId = this.store.unusedRunId();
    const request = { settings, selection, runId, runDir: this.store.dir(runId), placement: { name: where.name, bindHost: where.bindHost }, signal };
    const preflight = await framework.preflight(request);
    const run = { framework, placement: where, request: { ...request, preflight }, resources: options.resources ?? {}, dryRun: options.dryRun === true };
    const created = this.creating.then(async () => {
      const { lock, ...started } = await createRun({ core: this.core, store: this.store, activeRuns: () => this.activeRuns(), endingRuns: () => this.endingRuns() }, run);
      if (lock !== undefined) this.keep(started.record.run_id, lock);
      return started;
    });
    this.creating = created.catch(() => undefined);
    return created;
  }

  /** rl_resume_training: an ended run started again from its last saved state (resume.ts); one at a time with starts. */
  resume(runId: string): Promise<ResumedRun> {
    const ctx = { settings: this.core.settings, logger: this.core.logger, store: this.store, activeRuns: () => this.activeRuns(), supervise: (r: RunRecord, lock: FileLock) => this.keep(r.run_id, lock) };
    const run = this.creating.then(() => resumeRun(ctx, runId));
    this.creating = run.catch(() => undefined);
    return run;
  }

  /** What a run of `selection` would cost, and the refusal a start would meet over the budgets (checked again under the start lock). */
  estimate(selection: RunSelection): SelectionEstimate {
    return estimateSelection(this.core.settings, selection, this.activeRuns());
  }

  /** The run's registry entry; UserError `Run '<id>' not found` (where to look instead) with the active runs. */
  get(runId: string): RegistryEntry {
    const entry = this.store.read(runId);
    if (entry === undefined) throw this.notFound(runId);
    return entry;
  }

  /** Every run in the registry, newest first. */
  list(): RegistryEntry[] {
    return this.store.list();
  }

  /** rl_list_runs: one page of runs, newest first, from the run index. */
  listRuns(query: RunQuery): RunPage {
    return listRuns(this.index, query, Date.now(), (id) => keeperView(this.store.supervisorLock(id)).state);
  }

  /** How health is judged: RL_STALL_SECONDS. */
  get healthPolicy(): HealthPolicy {
    return { stallSeconds: this.core.settings.stall.seconds };
  }

  /** The pid of the live process holding the run's lock (on another host: its lease fresh): its keeper (or, for a moment, the server creating it). */
  keeperOf(runId: string): number | undefined {
    return this.store.supervisorLock(runId).holder();
  }

  /** Where the run lives and who keeps it, as this host can tell. */
  where(record: RunRecord): WhereView {
    return whereView(record, keeperView(this.store.supervisorLock(record.run_id)));
  }

  /**
   * rl_check_status: the full view with the record it was built from, or inside the run's window
   * the rate-limited answer with the current status. run.json is read once (under its write lock).
   */
  async status(runId: string): Promise<StatusReport> {
    // Decided and stamped under the run's write lock: two servers asked at the same moment give
    // one full answer between them, not two.
    let window = { limited: false } as WindowDecision;
    const entry = this.store.tryUpdate(runId, (r) => {
      window = statusWindow(r, this.core.settings.statusMinIntervalSeconds, Date.now());
      if (window.limited) return false;
      r.last_full_check_at = new Date().toISOString();
    });
    if (entry === undefined) throw this.notFound(runId);
    if (isDamaged(entry)) return { answer: { run_id: runId, status: 'unknown', error: entry.damaged } };
    const record = entry;
    // An active run whose keeper died gets a new one before it is reported: never `running` with nothing keeping it.
    if (isActive(record.status)) this.ensureKept(runId);
    if (window.limited) {
      const health = assessHealth(record, Date.now(), this.healthPolicy);
      const progress = observedProgress(record);
      const cost = runCost(record);
      const limited = { rate_limited: true as const, run_id: runId, message: window.message, next_check_in_seconds: window.next_check_in_seconds, status: record.status, phase: record.phase, health };
      return { answer: { ...limited, ...(progress ? { progress } : {}), ...(cost ? { cost } : {}), ...(isActive(record.status) ? { where: this.where(record) } : {}) } };
    }
    const view = await describeRun(record, this.core.redactor, this.healthPolicy);
    return { answer: { ...view, ...(isActive(record.status) ? { where: this.where(record) } : {}) }, record };
  }

  /** The run for a polling reader (the dashboard): never stamps the status rate limit. An active run
   *  whose keeper died gets a new one first, as rl_check_status does. */
  current(runId: string): RegistryEntry {
    const entry = this.get(runId);
    if (!isDamaged(entry) && isActive(entry.status)) this.ensureKept(runId);
    return entry;
  }

  /** rl_stop_training: idempotent; waits a while for the processes to go, never blocks other calls. */
  async stop(runId: string, signal?: AbortSignal): Promise<StopAnswer> {
    const entry = this.get(runId);
    if (isDamaged(entry)) {
      throw new UserError(`Run '${runId}' cannot be stopped: ${entry.damaged}. Its process ids are unknown; look for its processes by the run's config path (${join(this.store.dir(runId), RUN_FILES.config)}).`, {
        run_id: runId,
        status: 'unknown',
      });
    }
    if (!isActive(entry.status)) return { message: `Run '${runId}' is not running (status: ${entry.status})`, run_id: runId, status: entry.status };
    // Asked of the run's keeper (a new one if it died), which stops it whether or not this server lives on.
    requestStop(this.store.dir(runId), 'user');
    this.ensureKept(runId);
    const unreachable = this.unreachable(entry);
    if (unreachable !== undefined) return unreachable;
    await this.whileActive([runId], STOP_ANSWER_WAIT_MS, signal);
    return stopAnswer(runId, this.currentStatus(runId), this.core.settings.stopGraceSeconds);
  }

  /**
   * rl_wait_for_run: waits until the run is running, made one more step, or ended; reads run.json
   * only, so the status rate limit is left alone. An active run whose keeper died gets a new one
   * first, as rl_check_status does.
   */
  waitFor(runId: string, request: WaitRequest): Promise<WaitAnswer> {
    const entry = this.get(runId);
    if (!isDamaged(entry) && isActive(entry.status)) this.ensureKept(runId);
    const subject = { runId, recordPath: join(this.store.dir(runId), RUN_FILES.record), read: () => this.store.read(runId), policy: this.healthPolicy, logger: this.core.logger };
    return waitForRun(subject, request);
  }

  /**
   * Server shutdown: the runs go on, kept by their keepers. With RL_STOP_RUNS_ON_EXIT=1 the keepers
   * of the runs this server started are asked to stop them quickly, and waited for a moment.
   */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.follow);
    this.keepers.close();
    this.index.save();
    if (!this.core.settings.stopRunsOnExit) return;
    const mine = [...this.own].filter((id) => isActive(this.currentStatus(id)));
    for (const id of mine) requestStop(this.store.dir(id), 'server_exit');
    await this.whileActive(mine, EXIT_STOP_WAIT_MS);
  }

  /**
   * Waits until none of the runs is active or kept, at most `ms`: a keeper writes the final record,
   * then exits, so a stop is answered once nothing of the run is left.
   */
  private async whileActive(runIds: readonly string[], ms: number, signal?: AbortSignal): Promise<void> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline && !signal?.aborted && runIds.some((id) => isActive(this.currentStatus(id)) || this.keeperOf(id) !== undefined)) {
      await delay(STOP_POLL_MS, signal).catch(() => undefined);
    }
  }

  /**
   * A stop of a local run of another host whose keeper is not known alive there: asked (its
   * stop.request waits for a keeper or server of that host), and said so with what to do now.
   */
  private unreachable(record: RunRecord): StopAnswer | undefined {
    if (!livesElsewhere(record)) return undefined;
    const where = this.where(record);
    if (where.keeper.state === 'alive' || where.keeper.state === 'lease_fresh') return undefined;
    const groups = runProcesses(record).flatMap((name) => (record.processes[name]?.state === 'running' && record.processes[name]?.pid ? [record.processes[name]!.pid!] : []));
    const how = groups.length > 0 ? ` To end it now, on ${where.lives_on}: kill -TERM ${groups.map((pid) => `-${pid}`).join(' ')} (its process groups), or start any rl-training-mcp server there, which carries the stop out.` : ` Any rl-training-mcp server started on ${where.lives_on} carries the stop out.`;
    const message = `Run '${record.run_id}' was not stopped yet: ${where.note ?? ''} The stop is recorded (stop.request) for a keeper or server of ${where.lives_on}.${how}`;
    return { message, run_id: record.run_id, status: record.status };
  }

  private notFound(runId: string): UserError {
    return new UserError(`Run '${runId}' not found. rl_list_runs lists every run on this host.`, { active_runs: this.activeRuns().map((r) => r.run_id) });
  }

  private currentStatus(runId: string): RunStatus {
    return this.store.read(runId)?.status ?? 'unknown';
  }

  /** The active runs, newest first: found through the index (no parse of ended runs), then read fresh. */
  activeRuns(): RunRecord[] {
    return this.index.active();
  }

  /** Ended runs whose record still calls a process running that lives: their leftovers are being stopped. */
  private endingRuns(): RunRecord[] {
    const entries = this.index.runs().flatMap((run) => (isActive(run.status) || !anyAlive(run) ? [] : [this.store.read(run.run_id)]));
    return entries.filter((entry): entry is RunRecord => entry !== undefined && !isDamaged(entry));
  }

  /** Hands the run (its lock held by this server) to a new keeper; a keeper that cannot be started is the caller's error. */
  private keep(runId: string, lock: FileLock): void {
    this.own.add(runId);
    try {
      const pid = this.keepers.launch(this.core.settings, this.store.dir(runId), lock);
      this.core.logger.info({ run_id: runId, keeper: pid }, 'keeper started');
    } catch (err) {
      lock.release();
      this.core.logger.error({ err, run_id: runId }, 'cannot start the run keeper');
      throw new UserError(`Run '${runId}' has no keeper: ${(err as Error).message}.`, { run_id: runId });
    }
  }

  /**
   * Starts a keeper for a run that needs one (active, or ended with processes left) and whose
   * keeper is gone (its lock free or stale; on another host, its lease expired): the new keeper
   * takes the live processes over. A local run of another host is that host's to keep: never here.
   */
  private ensureKept(runId: string): void {
    if (this.closed) return;
    const lock = this.store.supervisorLock(runId);
    // The usual case, cheaply: its keeper lives (or its lease is fresh).
    if (lock.holder() !== undefined) return;
    const before = this.store.read(runId);
    if (before === undefined || isDamaged(before) || livesElsewhere(before)) return;
    if (!lock.tryAcquire(before.placement === 'slurm')) return;
    const entry = this.store.read(runId);
    if (entry === undefined || isDamaged(entry) || (!isActive(entry.status) && !anyAlive({ placement: entry.placement, running: recordedProcesses(entry) }))) {
      lock.release();
      return;
    }
    this.core.logger.warn({ run_id: runId, status: entry.status }, 'the run had no keeper; starting one to take it over');
    this.keep(runId, lock);
  }

  /**
   * At start, then every FOLLOW_MS: a keeper for every run left active (or with live processes)
   * whose keeper is gone. Between looks only the runs root is stat'ed, unless some run is active
   * (its keeper may die at any time). Looks go through the run index: only new runs and those that
   * may still change are read.
   */
  private reconcile(): void {
    this.scanRegistry(true);
    this.follow = setInterval(() => {
      try {
        this.scanRegistry(false);
      } catch (err) {
        // A timer must not crash the server (RL_HOME unreadable for a moment, disk full, a keeper that cannot start): try again next tick.
        this.core.logger.error({ err }, 'cannot look at the run registry');
      }
    }, FOLLOW_MS);
    this.follow.unref();
  }

  private scanRegistry(initial: boolean): void {
    if (this.closed) return;
    const mtime = statSync(this.store.root, { throwIfNoEntry: false })?.mtimeMs ?? 0;
    if (!initial && !this.anyActive && mtime === this.scannedRootMtime) return;
    this.scannedRootMtime = mtime;
    this.index.refresh();
    let anyActive = false;
    for (const run of this.index.runs()) {
      const active = isActive(run.status);
      anyActive ||= active;
      try {
        if (active || anyAlive(run)) this.ensureKept(run.run_id);
      } catch (err) {
        // One run whose keeper cannot start must not keep the others unkept: logged, tried again next look.
        this.core.logger.error({ err, run_id: run.run_id }, 'cannot start a keeper');
      }
    }
    this.anyActive = anyActive;
  }
}
