/**
 * The supervisor of one run, living in the run's keeper (keeper/keeper.ts), the one process that
 * holds the run's lock. Its life is one state (lifecycle.ts) and each way a run can end has its
 * own verb:
 *
 *   begin / adopt   a new run starts up; a run whose keeper died carries on where it was
 *   conclude        an outcome is decided (outcome.ts): it is recorded, what is left is stopped
 *   stop            a server asks (stop.request): env -> trainer -> API, then `stopped`
 *   stopForExit     a server exiting with RL_STOP_RUNS_ON_EXIT=1 asks: the same, quickly
 *   detach          the keeper is told to go (SIGTERM): the run goes on, the next server keeps it
 *
 * Each ending lets go of the run (timers, watchers, the lock) as `ended` or `detached`; a lost
 * lock detaches too (another keeper holds it now).
 *
 * While the run trains it watches the exit events of its own children, a short poll for
 * processes adopted from a keeper that died, and the outcome rules (docs/architecture.md, "The
 * life of a run").
 */
import type { Logger } from '../../../core/logger.js';
import { tailLines } from '../../../core/files/logTail.js';
import type { SecretRedactor } from '../../../core/redact.js';
import type { RunProcess } from '../../../core/files/home.js';
import type { Settings } from '../../../core/settings.js';
import type { FileLock } from '../../../core/os/fileLock.js';
import type { RunFramework, Verdict } from '../seams/framework.js';
import { Lifecycle } from './lifecycle.js';
import { Waker } from './polling.js';
import type { ExitInfo, Placement } from '../seams/placement.js';
import { logOf, processOf, runProcesses, type RunObservations, type RunRecord } from '../seams/record.js';
import { recordEnded, recordOutcome, recordStopping } from './ending.js';
import { judgeRun } from './judging.js';
import { stopRequested } from './requests.js';
import { StartUp } from './startup.js';
import { stopProcesses } from './stopping.js';
import type { RunStore } from '../registry/store.js';
import { now, TrackedRun } from './trackedRun.js';
import { type UsageSource, Watchdog } from './watchdog.js';

/** Adopted processes, lock ownership and stop requests are checked this often. */
export const TICK_MS = 1_000;
/** A server exiting with RL_STOP_RUNS_ON_EXIT waits about 2 s for its runs: they share this grace. */
const EXIT_GRACE_MS = 1_000;
const LOG_TAIL_LINES = 20;
/** How far up the failed process's log the first meaningful cause is looked for. */
const CAUSE_SEARCH_LINES = 400;

export interface SupervisorContext {
  settings: Settings;
  logger: Logger;
  /** Errors quote log lines, which may quote a key: run.json and every answer get them redacted. */
  redactor: SecretRedactor;
  store: RunStore;
  /** The run's lock, held by this keeper. */
  lock: FileLock;
  /** What the run's framework and placement do their own way (seams/framework.ts, seams/placement.ts). */
  framework: RunFramework;
  placement: Placement;
  /** The environment of each child (allow-listed; keys only where needed). */
  childEnvs: Partial<Record<RunProcess, Record<string, string>>>;
  /** The runs active now, any server's: the window's spend is theirs alone when it holds nothing else. */
  activeRunIds(): string[];
  /** Tinker's word on the run's usage, asked by the watchdog while the run trains. */
  usage: UsageSource;
}

export class RunSupervisor {
  private readonly life: Lifecycle;
  private readonly run: TrackedRun;
  private readonly startUp: StartUp;
  private readonly waker = new Waker();
  private readonly tick: NodeJS.Timeout;
  private watchdog?: Watchdog;

  constructor(
    private readonly ctx: SupervisorContext,
    record: RunRecord,
  ) {
    this.run = new TrackedRun(ctx.store, ctx.logger, ctx.placement, record, (name, info) => this.onExit(name, info));
    // A change of state ends any start-up wait at once: a start-up that is no longer wanted stops.
    this.life = new Lifecycle((from, to) => {
      ctx.logger.debug({ run_id: this.runId, from, to }, 'supervisor state');
      this.waker.notify();
    });
    this.startUp = new StartUp(ctx, this.run, this.waker, () => this.life.state === 'starting');
    this.tick = setInterval(() => this.look(), TICK_MS);
    this.tick.unref();
  }

  get runId(): string {
    return this.run.runId;
  }

  /** Resolves once the supervisor has let go of the run (`ended` or `detached`); the lock stays the keeper's to release. */
  get done(): Promise<void> {
    return this.life.done;
  }

  /** It let go of a run that goes on (told to go, or its lock lost), rather than one that ended. */
  get detached(): boolean {
    return this.life.state === 'detached';
  }

  /** The record as last written. */
  get record(): RunRecord {
    return this.run.record;
  }

  /** Start-up: of a new run (nothing spawned yet), or of an adopted one at the stage it reached. */
  begin(): void {
    this.life.change('starting');
    void this.background(() => this.startRun());
  }

  /**
   * A run whose keeper died (or a new one, which has no process yet): attach to its live
   * processes, note the dead ones, and carry on from where it was.
   */
  adopt(): void {
    const record = this.run.record;
    for (const name of runProcesses(record)) {
      const p = processOf(record, name);
      if (p.state !== 'running') continue;
      if (this.ctx.placement.isAlive(p)) this.run.watchAdopted(name, TICK_MS);
      else this.run.markExited(name, { exit_code: null, signal: null }, this.life.ongoing);
    }
    const { status } = this.run.record;
    this.ctx.logger.info({ run_id: this.runId, status }, 'keeping run');
    const asked = stopRequested(this.ctx.store.dir(this.runId));
    if (asked === 'server_exit') {
      this.stopForExit();
    } else if (status === 'stopping' || asked !== undefined) {
      void this.stop();
    } else if (status === 'starting') {
      this.begin();
    } else if (status === 'running') {
      this.startWatching();
      void this.background(() => this.evaluate());
    } else {
      // Ended while its processes lived on: the outcome stands, what is left is stopped.
      this.life.change('concluding');
      void this.background(() => this.stopLeftovers());
    }
  }

  /** Stops the run (user request): env -> trainer -> API, then `stopped`. Idempotent; resolves once let go. */
  stop(): Promise<void> {
    if (this.life.can('stopping')) this.beginStopping(this.ctx.settings.stopGraceSeconds * 1000, false);
    // Once an outcome is decided there is nothing to stop: its own clean-up is under way.
    return this.life.state === 'stopping' ? this.life.done : Promise.resolve();
  }

  /** A server exiting with RL_STOP_RUNS_ON_EXIT=1 asked: stop the run quickly, all processes at once. */
  stopForExit(): void {
    if (this.life.can('stopping')) this.beginStopping(Math.min(EXIT_GRACE_MS, this.ctx.settings.stopGraceSeconds * 1000), true);
  }

  /**
   * The keeper is told to go: the processes run on, and the next server starts a keeper that
   * takes them over (start-up resumes there too). An ending under way is finished first.
   */
  detach(): void {
    if (this.life.ongoing) this.letGo('detached');
  }

  /** Runs `work` in the background, failures logged (never an unhandled rejection). */
  private background(work: () => Promise<void>): Promise<void> {
    return work().catch((err: unknown) => this.ctx.logger.error({ err, run_id: this.runId }, 'supervisor task failed'));
  }

  // ---- starting and watching -----------------------------------------------------------------

  private async startRun(): Promise<void> {
    try {
      const result = await this.startUp.proceed();
      if (result === 'interrupted') return;
      if (result !== 'ready') {
        await this.conclude(result);
        return;
      }
      const at = now();
      this.run.update((r) => {
        r.status = 'running';
        // Training is confirmed by data reaching the API, which the watchdog looks for.
        r.phase = 'waiting_for_data';
        r.phase_started_at = at;
        r.running_at = at;
      });
      this.startWatching();
      this.ctx.logger.info({ run_id: this.runId }, 'run is running');
      // Something may have exited while the last stage was being confirmed.
      await this.evaluate();
    } catch (err) {
      if (!this.life.ongoing) return;
      this.ctx.logger.error({ err, run_id: this.runId }, 'start-up failed');
      await this.conclude({ status: 'failed', error: `Start-up failed: ${(err as Error).message}` });
    }
  }

  /** The run trains: exits and the outcome rules are watched, and the watchdog looks for stalls. */
  private startWatching(): void {
    this.life.change('watching');
    this.watchdog = new Watchdog(this.ctx, this.run, (verdict) => void this.background(() => this.conclude(verdict)));
  }

  private onExit(name: RunProcess, info: ExitInfo): void {
    if (this.life.over) return;
    try {
      this.run.markExited(name, info, this.life.ongoing);
    } catch (err) {
      this.ctx.logger.error({ err, run_id: this.runId }, 'cannot record a process exit');
    }
    this.waker.notify();
    if (this.life.state === 'watching') void this.background(() => this.evaluate());
  }

  private async evaluate(): Promise<void> {
    if (this.life.state !== 'watching') return;
    const verdict = await judgeRun(this.ctx.framework, this.run.record);
    if (verdict) await this.conclude(verdict);
  }

  // ---- endings -------------------------------------------------------------------------------

  /** Records the outcome, then stops whatever is still running. */
  private async conclude(verdict: Verdict): Promise<void> {
    // A verdict reached after a stop began, or after the keeper let go, is no longer ours to record.
    if (!this.life.can('concluding')) return;
    this.life.change('concluding');
    await this.watchdog?.flush();
    // The last line of a log is often a wrapper (tenacity's RetryError, the AttributeError after a
    // failed W&B login): the cause a user can act on is printed above it.
    const cause = verdict.status === 'failed' && verdict.error_process ? this.ctx.framework.firstCause(await tailLines(logOf(this.run.record, verdict.error_process), CAUSE_SEARCH_LINES)) : undefined;
    const error = verdict.error !== undefined && cause !== undefined && !verdict.error.includes(cause) ? `${verdict.error} Cause: ${cause}` : verdict.error;
    const { redactor } = this.ctx;
    this.run.update((r) => recordOutcome(r, verdict, { error: error && redactor.redact(error), cause: cause && redactor.redact(cause) }, now()));
    const level = verdict.status === 'completed' ? 'info' : 'warn';
    this.ctx.logger[level]({ run_id: this.runId, status: verdict.status, error: verdict.error }, 'run ended');
    if (verdict.error_process) {
      const tail = await tailLines(logOf(this.run.record, verdict.error_process), LOG_TAIL_LINES);
      this.ctx.logger.warn({ run_id: this.runId, process: verdict.error_process, tail: tail.join('\n') }, 'log tail of the failed process');
    }
    await this.stopLeftovers();
  }

  /** Stops what is left of an ended run, records its end, then lets go of it. */
  private async stopLeftovers(): Promise<void> {
    await stopProcesses(this.run, this.ctx, this.ctx.settings.stopGraceSeconds * 1000, false);
    await this.recordEnd();
    if (this.life.state === 'concluding') this.letGo('ended');
  }

  /**
   * The processes are gone: a last look at what they logged (steps finished during the stop count
   * for the spend), then the final status. Recorded even when the stop outlasted a shutdown wait.
   */
  private async recordEnd(): Promise<void> {
    let observed: RunObservations | undefined;
    if (this.run.record.running_at !== undefined) {
      try {
        const observer = this.watchdog?.observer ?? this.ctx.framework.observer(() => this.run.record);
        observed = (await observer.look(this.run.record.observed, now())).next;
      } catch (err) {
        this.ctx.logger.warn({ err, run_id: this.runId }, 'could not take the last look at the run; its observations stay as last seen');
      }
    }
    this.run.update((r) => recordEnded(r, now(), observed));
  }

  /**
   * Not waiting for the start-up task: once the state leaves `starting` it spawns and records
   * nothing more (every await in it is followed by a state check), and a probe it awaits must
   * not delay the signals.
   */
  private beginStopping(graceMs: number, forExit: boolean): void {
    this.life.change('stopping');
    void this.background(() => this.stopAll(graceMs, forExit));
  }

  private async stopAll(graceMs: number, forExit: boolean): Promise<void> {
    this.run.update((r) => recordStopping(r, now()));
    this.ctx.logger.info({ run_id: this.runId }, 'stopping run');
    await stopProcesses(this.run, this.ctx, graceMs, forExit);
    if (forExit) this.run.update((r) => (r.notes ??= []).push('Stopped because the server exited with RL_STOP_RUNS_ON_EXIT=1.'));
    await this.recordEnd();
    if (this.life.state === 'stopping') this.letGo('ended');
  }

  /** Lets go of the run: timers and watchers. The processes are not touched; the lock is the keeper's (it may resume the run). */
  private letGo(to: 'ended' | 'detached'): void {
    this.life.change(to);
    clearInterval(this.tick);
    this.watchdog?.close();
    this.run.stopWatching();
  }

  // ---- coordination --------------------------------------------------------------------------

  /** Every tick, and whenever the run's directory changes: the lock still ours, a stop asked for. */
  look(): void {
    if (this.life.over) return;
    if (!this.ctx.lock.isHeld()) {
      // Another keeper holds the run now (ours was judged stale): it keeps the run.
      this.ctx.logger.warn({ run_id: this.runId }, 'lost the run lock; no longer keeping this run');
      this.letGo('detached');
      return;
    }
    if (!this.life.can('stopping')) return;
    const asked = stopRequested(this.ctx.store.dir(this.runId));
    if (asked === 'server_exit') this.stopForExit();
    else if (asked === 'user') void this.stop();
  }
}
