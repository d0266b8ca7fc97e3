/**
 * Training runs: starting them, answering about them, stopping
 * them. The registry on disk is the truth, shared by every server on the host; this server
 * supervises the runs whose lock it holds, adopts runs whose supervisor is gone (at start-up,
 * then by a light poll of the registry, so a run another server started is taken over when that
 * server goes), and only reads the rest.
 */
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../core/errors.js';
import { RUN_FILES, runIndexPath } from '../../core/files/home.js';
import type { CoreServices } from '../../core/services.js';
import { delay, waitAtMost } from '../../core/wait.js';
import { type StartedRun, type StatusReport, type StopAnswer, stopAnswer } from './answers.js';
import type { RunSelection } from './framework.js';
import { frameworkFor, frameworkOf } from './frameworks.js';
import { placement, placementOf, processIdentity } from './placements.js';
import type { PlacementOptions } from './placement/placement.js';
import { activeOf, createRun } from './creation.js';
import { FileLock } from './registry/fileLock.js';
import { statusWindow, type WindowDecision } from './registry/rateLimit.js';
import { isActive, isDamaged, observedProgress, type PlacementName, type RegistryEntry, type RunRecord, type RunStatus } from './registry/record.js';
import { refuseAtLimit } from './placement/host.js';
import { RunStore } from './registry/store.js';
import { RunSupervisor, TICK_MS } from './supervision/supervisor.js';
import { describeRun } from './view.js';
import { assessHealth, type HealthPolicy } from './watching/health.js';
import { listRuns, type RunPage, type RunQuery } from './registry/listing.js';
import { recordedProcesses, type RecordedProcess, RunIndex } from './registry/runIndex.js';
import { type WaitAnswer, waitForRun, type WaitRequest } from './waiting.js';
import { estimateSelection, runCost, spentByOthers, type SelectionEstimate } from './runCost.js';
import type { RunUsage } from './usage.js';
import { type ResumedRun, resumeRun } from './resume.js';

/** How often the registry is checked for new runs and for active runs whose supervisor is gone. */
const FOLLOW_MS = 2_000;
/** rl_stop_training waits this long for the stop to finish before answering `stopping`. */
const STOP_ANSWER_WAIT_MS = 20_000;

/** Whether a process the record calls running still lives, as its placement tells. */
const anyAlive = (run: { placement?: PlacementName; running: RecordedProcess[] }): boolean => run.running.some((p) => processIdentity(run.placement ?? 'local').isAlive(p));

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
  private readonly supervisors = new Map<string, RunSupervisor>();
  /** Run creations of this server, one at a time (a second one must see the first run). */
  private creating: Promise<unknown> = Promise.resolve();
  private follow?: NodeJS.Timeout;
  /** Some active run is supervised by another server: the registry is rescanned on every follow tick. */
  private activeRunsSupervisedElsewhere = false;
  /** The runs root's mtime at the last scan: a run created by another server changes it. */
  private scannedRootMtime = -1;
  private closed = false;

  constructor(private readonly core: CoreServices, readonly usage: RunUsage) {
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
      if (lock !== undefined) this.supervise(started.record, lock).begin();
      return started;
    });
    this.creating = created.catch(() => undefined);
    return created;
  }

  /** rl_resume_training: an ended run started again from its last saved state (resume.ts); one at a time with starts. */
  resume(runId: string): Promise<ResumedRun> {
    const ctx = { settings: this.core.settings, logger: this.core.logger, store: this.store, activeRuns: () => this.activeRuns(), supervise: (r: RunRecord, lock: FileLock) => this.supervise(r, lock).begin() };
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
    return listRuns(this.index, query, Date.now());
  }

  /** How health is judged: RL_STALL_SECONDS. */
  get healthPolicy(): HealthPolicy {
    return { stallSeconds: this.core.settings.stall.seconds };
  }

  /** True when this server supervises the run (others only read it). */
  supervises(runId: string): boolean {
    return this.supervisors.has(runId);
  }

  /**
   * rl_check_status: the full view with the record it was built from, or inside the run's window
   * the rate-limited answer with the current status. run.json is read once (under its write
   * lock), again only when an orphaned run has just been adopted.
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
    let record = entry;
    // An active run nobody supervises any more is taken over before it is reported: adoption
    // records the processes that died unseen.
    if (isActive(record.status) && !this.supervises(runId) && this.adopt(runId)) record = this.store.update(runId, () => false);
    if (window.limited) {
      const health = assessHealth(record, Date.now(), this.healthPolicy);
      const progress = observedProgress(record);
      const cost = runCost(record);
      const limited = { rate_limited: true as const, run_id: runId, message: window.message, next_check_in_seconds: window.next_check_in_seconds, status: record.status, phase: record.phase, health };
      return { answer: { ...limited, ...(progress ? { progress } : {}), ...(cost ? { cost } : {}) } };
    }
    return { answer: await describeRun(record, this.core.redactor, this.healthPolicy), record };
  }

  /** The run for a polling reader (the dashboard): never stamps the status rate limit. An unsupervised
   *  active run is adopted first, as rl_check_status does: otherwise nothing would move it. */
  current(runId: string): RegistryEntry {
    const entry = this.get(runId);
    if (isDamaged(entry) || !isActive(entry.status) || this.supervises(runId) || !this.adopt(runId)) return entry;
    return this.get(runId);
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
    const supervisor = this.supervisors.get(runId) ?? (this.adopt(runId) ? this.supervisors.get(runId) : undefined);
    if (supervisor) {
      await waitAtMost(supervisor.stop(), STOP_ANSWER_WAIT_MS, signal);
    } else {
      // Another live server supervises the run: ask it, and watch the registry for the result.
      writeFileSync(join(this.store.dir(runId), RUN_FILES.stopRequest), JSON.stringify({ pid: process.pid, at: new Date().toISOString() }));
      const deadline = Date.now() + STOP_ANSWER_WAIT_MS;
      while (Date.now() < deadline && !signal?.aborted && isActive(this.currentStatus(runId))) {
        await delay(TICK_MS / 5, signal);
      }
    }
    return stopAnswer(runId, this.currentStatus(runId), this.core.settings.stopGraceSeconds);
  }

  /**
   * rl_wait_for_run: waits until the run is running, made one more step, or ended; reads run.json
   * only, so the status rate limit is left alone. An unsupervised active run is adopted first, as
   * rl_check_status does: otherwise nothing would move it.
   */
  waitFor(runId: string, request: WaitRequest): Promise<WaitAnswer> {
    const entry = this.get(runId);
    if (!isDamaged(entry) && isActive(entry.status)) this.adopt(runId);
    const subject = { runId, recordPath: join(this.store.dir(runId), RUN_FILES.record), read: () => this.store.read(runId), policy: this.healthPolicy, logger: this.core.logger };
    return waitForRun(subject, request);
  }

  /** Server shutdown: flush and let go of every run (stopping them only with RL_STOP_RUNS_ON_EXIT=1). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.follow);
    this.index.save();
    await Promise.all([...this.supervisors.values()].map((s) => (this.core.settings.stopRunsOnExit ? s.stopForExit() : s.detach())));
  }

  private notFound(runId: string): UserError {
    return new UserError(`Run '${runId}' not found. rl_list_runs lists every run on this host.`, { active_runs: this.activeRuns().map((r) => r.run_id) });
  }

  private currentStatus(runId: string): RunStatus {
    return this.store.read(runId)?.status ?? 'unknown';
  }

  /** The active runs, newest first: found through the index (no parse of ended runs), then read fresh. */
  activeRuns(): RunRecord[] {
    this.index.refresh();
    return this.index.runs().flatMap((run) => {
      if (!isActive(run.status)) return [];
      const entry = this.store.read(run.run_id);
      return entry !== undefined && !isDamaged(entry) && isActive(entry.status) ? [entry] : [];
    });
  }

  /** Ended runs whose record still calls a process running that lives: their leftovers are being stopped. */
  private endingRuns(): RunRecord[] {
    const entries = this.index.runs().flatMap((run) => (isActive(run.status) || !anyAlive(run) ? [] : [this.store.read(run.run_id)]));
    return entries.filter((entry): entry is RunRecord => entry !== undefined && !isDamaged(entry));
  }

  private supervise(record: RunRecord, lock: FileLock): RunSupervisor {
    const supervisor = new RunSupervisor(
      {
        settings: this.core.settings,
        logger: this.core.logger,
        redactor: this.core.redactor,
        store: this.store,
        lock,
        framework: frameworkOf(record),
        placement: placementOf(record, this.core.settings),
        childEnvs: frameworkOf(record).childEnvironments(this.core.settings, record),
        onReleased: (runId) => this.supervisors.delete(runId),
        othersSpentUsd: (runId) => spentByOthers(this.activeRuns(), runId),
        usage: this.usage,
      },
      record,
    );
    this.supervisors.set(record.run_id, supervisor);
    return supervisor;
  }

  /**
   * Takes over a run whose supervisor is gone (lock free or stale) when it is active or still has
   * live processes. True when this server supervises it afterwards.
   */
  private adopt(runId: string): boolean {
    if (this.supervisors.has(runId)) return true;
    if (this.closed) return false;
    const lock = new FileLock(this.store.supervisorLockPath(runId));
    if (!lock.tryAcquire()) return false;
    const entry = this.store.read(runId);
    if (entry === undefined || isDamaged(entry) || (!isActive(entry.status) && !anyAlive({ placement: entry.placement, running: recordedProcesses(entry) }))) {
      lock.release();
      return false;
    }
    this.supervise(entry, lock).adopt();
    return true;
  }

  /**
   * At start, then every FOLLOW_MS: adopt every run left active (or with live processes) whose
   * supervisor is gone. Between scans only the runs root is stat'ed, unless another server
   * supervises an active run (it may exit at any time) or a run was created since the last scan.
   * Scans go through the run index: only new runs and those that may still change are read.
   */
  private reconcile(): void {
    this.scanRegistry(true);
    this.follow = setInterval(() => {
      try {
        this.scanRegistry(false);
      } catch (err) {
        // A timer must not crash the server (RL_HOME unreadable for a moment, disk full): try again next tick.
        this.core.logger.error({ err }, 'cannot scan the run registry');
      }
    }, FOLLOW_MS);
    this.follow.unref();
  }

  private scanRegistry(initial: boolean): void {
    if (this.closed) return;
    const mtime = statSync(this.store.root, { throwIfNoEntry: false })?.mtimeMs ?? 0;
    if (!initial && !this.activeRunsSupervisedElsewhere && mtime === this.scannedRootMtime) return;
    this.scannedRootMtime = mtime;
    let supervisedElsewhere = false;
    this.index.refresh();
    for (const run of this.index.runs()) {
      const active = isActive(run.status);
      if ((active || (initial && anyAlive(run))) && !this.adopt(run.run_id) && active) supervisedElsewhere = true;
    }
    this.activeRunsSupervisedElsewhere = supervisedElsewhere;
  }
}
