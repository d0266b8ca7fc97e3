/**
 * The start-up of a run: its framework's processes in their order, each started once the previous
 * is ready (never after a fixed sleep), each stage with a deadline counted from run.json so it
 * survives a restart. What "ready" means is the framework's (framework.ts); where a process runs
 * is the placement's (seams/placement.ts). It decides nothing about the supervisor's life: it
 * reports how it ended, and stops acting (no spawn, no write) as soon as the supervisor is no
 * longer starting.
 */
import { watch, type FSWatcher } from 'node:fs';
import type { Logger } from '../../../core/logger.js';
import type { RunProcess } from '../../../core/files/home.js';
import type { Settings } from '../../../core/settings.js';
import type { RunFramework, StartUpProbe, Verdict } from '../seams/framework.js';
import type { Launch, Placement } from '../seams/placement.js';
import type { Waker } from './polling.js';
import { logOf, processOf, type RunPhase, type RunRecord } from '../seams/record.js';
import { judgeRun } from './judging.js';
import { atStage, stageTimedOut } from './stages.js';
import { now, type TrackedRun } from './trackedRun.js';

/**
 * Probes of a stage are at least this far apart, events or not: a trainer prints its imports line
 * by line, and probing at each line asked the Atropos API (Python, on the cores the run's own
 * processes need while they start) seven times as often as a 50 ms poll.
 */
const PROBE_GAP_MS = 50;

/**
 * How long a stage waits before probing its readiness again, `waitedMs` into it: a tenth of the
 * wait so far, between 50 and 250 ms. A process that is ready in a second is seen within 50 ms of
 * it, and one that loads a model for minutes is probed four times a second, not twenty. Events
 * (exits, log writes) bring a probe forward (pauseAfterProbe).
 */
export const probeDelayMs = (waitedMs: number): number => Math.min(250, Math.max(PROBE_GAP_MS, waitedMs / 10));

/**
 * The pause after a probe that began at `probedAt`: until the next probe is due, ended early by
 * an event (an exit, a write to a file the stage watches, a change of state), but not before
 * PROBE_GAP_MS after that probe began unless the start-up is no longer wanted.
 */
export async function pauseAfterProbe(waker: Waker, probedAt: number, dueMs: number, starting: () => boolean): Promise<void> {
  // A timer fires by the event loop's cached time, which a busy loop lets lag the wall clock: one
  // may end a few ms before it is due, and then the pause goes on to its due time unless woken.
  while (Date.now() < probedAt + dueMs) if (await waker.sleep(probedAt + dueMs - Date.now())) break;
  while (starting() && Date.now() < probedAt + PROBE_GAP_MS) await waker.sleep(probedAt + PROBE_GAP_MS - Date.now());
}

/** The record enters `phase` (unless it is there already), its deadline counted from `at`. */
function enter(r: RunRecord, phase: RunPhase, at = now()): void {
  if (r.phase === phase) return;
  r.phase = phase;
  r.phase_started_at = at;
}

/** `ready`: every stage is; `interrupted`: the supervisor left `starting` meanwhile; a verdict: it failed. */
export type StartUpResult = 'ready' | 'interrupted' | Verdict;

export interface StartUpContext {
  settings: Settings;
  logger: Logger;
  framework: RunFramework;
  placement: Placement;
  childEnvs: Partial<Record<RunProcess, Record<string, string>>>;
}

export class StartUp {
  private readonly probe: StartUpProbe;

  constructor(
    private readonly ctx: StartUpContext,
    private readonly run: TrackedRun,
    private readonly waker: Waker,
    /** The supervisor is still in `starting`: checked after every wait. */
    private readonly starting: () => boolean,
  ) {
    this.probe = ctx.framework.startUpProbe(() => run.record, ctx.logger);
  }

  /** Goes through the stages; a resumed start-up carries on at its stage, keeping that stage's deadline. */
  async proceed(): Promise<StartUpResult> {
    const placed = await this.allocate();
    if (placed !== 'ready') return placed;
    const order = this.ctx.framework.startOrder;
    const resumeAt = Math.max(0, order.findIndex((stage) => this.run.record.phase === `starting_${stage}`));
    for (const stage of order.slice(resumeAt)) {
      if (!this.starting()) return 'interrupted';
      if (processOf(this.run.record, stage).state === 'not_started') {
        // Loaded before the check below, so nothing waits between that check and the launch.
        const launch = await this.ctx.placement.launcher(this.run.record);
        // A resumed start-up may find an earlier process dead: starting the next one would be wasted.
        const verdict = await judgeRun(this.ctx.framework, this.run.record);
        if (!this.starting()) return 'interrupted';
        if (verdict) {
          this.enterPhase(`starting_${stage}`);
          return atStage(stage, this.ctx.framework.stageGoal(stage), verdict);
        }
        const failure = await this.spawn(stage, launch);
        if (failure !== undefined) {
          this.enterPhase(`starting_${stage}`);
          return { status: 'failed', error: `Start-up failed at stage '${stage}': could not start the ${this.ctx.framework.processName(stage)} (${failure}).`, error_process: stage };
        }
      } else this.enterPhase(`starting_${stage}`);
      const outcome = await this.awaitReady(stage);
      if (outcome !== 'ready') return outcome;
    }
    return this.starting() ? 'ready' : 'interrupted';
  }

  /**
   * What the processes run in (a Slurm job), before the first stage; a resumed start-up finds it
   * again. While the run waits for it, its phase is `queued` with the reason; the first stage's
   * deadline counts from when it is there.
   */
  private allocate(): Promise<'ready' | 'interrupted' | Verdict> {
    return this.ctx.placement.allocate({
      record: () => this.run.record,
      note: (fields) => this.run.update((r) => Object.assign(r, fields)),
      queued: (reason) => {
        if (reason === undefined ? this.run.record.queued === undefined : this.run.record.queued?.reason === reason) return;
        this.run.update((r) => {
          if (reason === undefined) {
            delete r.queued;
            return;
          }
          r.queued = { reason, since: r.queued?.since ?? now() };
          if (r.phase !== 'queued') {
            r.phase = 'queued';
            r.phase_started_at = r.queued.since;
          }
        });
      },
      starting: this.starting,
      sleep: async (ms) => void (await this.waker.sleep(ms)),
      logger: this.ctx.logger,
    });
  }

  private enterPhase(phase: RunPhase): void {
    if (this.run.record.phase === phase) return;
    this.run.update((r) => enter(r, phase));
  }

  /**
   * Starts one process and records it at once, with the stage it begins, in one write (the
   * stage's deadline counts from then); the reason when it could not be started. A keeper that
   * dies before that write leaves the stage before as the phase, and its successor carries on
   * from there. One write where there were two: several runs starting at once share the host.
   */
  private async spawn(stage: RunProcess, launch: Launch): Promise<string | undefined> {
    const env = this.ctx.childEnvs[stage] ?? {};
    if (stage === 'trainer' && !env.TINKER_API_KEY) return 'TINKER_API_KEY is not set in the environment of the server that started this run';
    const p = processOf(this.run.record, stage);
    const launched = launch({ process: stage, command: p.command, cwd: p.cwd ?? this.ctx.settings.root, env, logPath: logOf(this.run.record, stage) });
    if (launched.identity === undefined) return (await launched.exited).spawn_error ?? 'unknown error';
    const identity = launched.identity;
    const at = now();
    this.run.update((r) => {
      enter(r, `starting_${stage}`, at);
      Object.assign(processOf(r, stage), { ...identity, state: 'running', started_at: at });
    });
    this.ctx.logger.info({ run_id: this.run.runId, process: stage, pid: identity.pid }, 'process started');
    this.run.watchChild(stage, launched.exited);
    return undefined;
  }

  private async awaitReady(stage: RunProcess): Promise<'ready' | 'interrupted' | Verdict> {
    const timeoutS = this.ctx.settings.stageTimeouts[stage];
    const goal = this.ctx.framework.stageGoal(stage);
    const deadline = Date.parse(this.run.record.phase_started_at) + timeoutS * 1000;
    const watchers = this.probe.wakeOn(stage).flatMap((path) => this.watchFile(path));
    const waitingSince = Date.now();
    try {
      for (;;) {
        if (!this.starting()) return 'interrupted';
        const probedAt = Date.now();
        const readiness = (await judgeRun(this.ctx.framework, this.run.record)) ?? (await this.probe.readiness(stage));
        if (!this.starting()) return 'interrupted';
        if (readiness === 'ready') return 'ready';
        if (readiness !== 'waiting') return atStage(stage, goal, readiness);
        if (Date.now() >= deadline) return stageTimedOut(stage, goal, timeoutS);
        await pauseAfterProbe(this.waker, probedAt, Math.min(probeDelayMs(probedAt - waitingSince), deadline - probedAt), this.starting);
      }
    } finally {
      for (const w of watchers) w.close();
    }
  }

  /** A write to a file the stage's readiness depends on wakes the wait at once. */
  private watchFile(path: string): FSWatcher[] {
    try {
      const fileWatch = watch(path, { persistent: false }, () => this.waker.notify());
      fileWatch.on('error', () => fileWatch.close());
      return [fileWatch];
    } catch {
      // The probe interval covers it.
      return [];
    }
  }
}
