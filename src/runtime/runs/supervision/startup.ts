/**
 * The start-up of a run: API -> trainer -> environment, each started once the previous is ready
 * (never after a fixed sleep), each stage with a deadline counted from run.json so it survives a
 * restart. It decides nothing about the supervisor's life: it reports how it ended, and stops
 * acting (no spawn, no write) as soon as the supervisor is no longer starting.
 */
import { watch, type FSWatcher } from 'node:fs';
import type { Logger } from '../../../core/logger.js';
import type { RunProcess } from '../../../core/files/home.js';
import type { Settings } from '../../../core/settings.js';
import { judge, type Verdict } from '../atropos/outcome.js';
import { type Waker, LogCursor } from './polling.js';
import { detachedLauncher, type Launch } from './processes.js';
import { apiAnswers, dataFlowing, serverAnswers, trainerRegistered } from '../atropos/probes.js';
import { apiReadiness, atStage, envReadiness, type Readiness, stageTimedOut, trainerReadiness } from '../atropos/readiness.js';
import type { RunPhase } from '../registry/record.js';
import { now, PROCESS_NAME, type TrackedRun } from './trackedRun.js';
import { TrainerLogScanner } from '../atropos/trainerLog.js';

const START_ORDER: readonly RunProcess[] = ['api', 'trainer', 'env'];
/** Readiness probes while a stage starts; events (exits, log writes) wake the wait sooner. */
const PROBE_INTERVAL_MS = 250;

/** `ready`: every stage is; `interrupted`: the supervisor left `starting` meanwhile; a verdict: it failed. */
export type StartUpResult = 'ready' | 'interrupted' | Verdict;

export interface StartUpContext {
  settings: Settings;
  logger: Logger;
  childEnvs: Record<RunProcess, Record<string, string>>;
}

export class StartUp {
  private readonly trainerLog: { cursor: LogCursor; scanner: TrainerLogScanner };
  private trainerRegisteredAt?: number;

  constructor(
    private readonly ctx: StartUpContext,
    private readonly run: TrackedRun,
    private readonly waker: Waker,
    /** The supervisor is still in `starting`: checked after every wait. */
    private readonly starting: () => boolean,
  ) {
    this.trainerLog = { cursor: new LogCursor(run.record.logs.trainer), scanner: new TrainerLogScanner() };
  }

  /** Goes through the stages; a resumed start-up carries on at its stage, keeping that stage's deadline. */
  async proceed(): Promise<StartUpResult> {
    const resumeAt = Math.max(0, START_ORDER.findIndex((stage) => this.run.record.phase === `starting_${stage}`));
    for (const stage of START_ORDER.slice(resumeAt)) {
      if (!this.starting()) return 'interrupted';
      this.enterPhase(`starting_${stage}`);
      if (this.run.record.processes[stage].state === 'not_started') {
        // Loaded before the check below, so nothing waits between that check and the spawn.
        const launch = await detachedLauncher();
        // A resumed start-up may find an earlier process dead: starting the next one would be wasted.
        const verdict = await judge(this.run.record);
        if (!this.starting()) return 'interrupted';
        if (verdict) return atStage(stage, verdict);
        const failure = await this.spawn(stage, launch);
        if (failure !== undefined) {
          return { status: 'failed', error: `Start-up failed at stage '${stage}': could not start the ${PROCESS_NAME[stage]} (${failure}).`, error_process: stage };
        }
      }
      const outcome = await this.awaitReady(stage);
      if (outcome !== 'ready') return outcome;
    }
    return this.starting() ? 'ready' : 'interrupted';
  }

  private enterPhase(phase: RunPhase): void {
    if (this.run.record.phase === phase) return;
    this.run.update((r) => {
      r.phase = phase;
      r.phase_started_at = now();
    });
  }

  /** Starts one process and records it at once; the reason when it could not be started. */
  private async spawn(stage: RunProcess, launchDetached: Launch): Promise<string | undefined> {
    if (stage === 'trainer' && !this.ctx.childEnvs.trainer.TINKER_API_KEY) {
      return 'TINKER_API_KEY is not set in the environment of the server supervising this run';
    }
    const { command } = this.run.record.processes[stage];
    const launched = launchDetached(command, { cwd: this.run.record.processes[stage].cwd ?? this.ctx.settings.root, env: this.ctx.childEnvs[stage], logPath: this.run.record.logs[stage] });
    if (launched.pid === undefined) return (await launched.exited).spawn_error ?? 'unknown error';
    const pid = launched.pid;
    this.run.update((r) => {
      Object.assign(r.processes[stage], { state: 'running', pid, pgid: pid, start_time: launched.startTime, started_at: now() });
    });
    this.ctx.logger.info({ run_id: this.run.runId, process: stage, pid }, 'process started');
    this.run.watchChild(stage, launched.exited);
    return undefined;
  }

  private async awaitReady(stage: RunProcess): Promise<'ready' | 'interrupted' | Verdict> {
    const timeoutS = this.ctx.settings.stageTimeouts[stage];
    const deadline = Date.parse(this.run.record.phase_started_at) + timeoutS * 1000;
    const logWatch = stage === 'trainer' ? this.watchTrainerLog() : undefined;
    try {
      for (;;) {
        if (!this.starting()) return 'interrupted';
        const readiness = (await judge(this.run.record)) ?? (await this.readiness(stage));
        if (!this.starting()) return 'interrupted';
        if (readiness === 'ready') return 'ready';
        if (readiness !== 'waiting') return atStage(stage, readiness);
        if (Date.now() >= deadline) return stageTimedOut(stage, timeoutS);
        await this.waker.sleep(Math.min(PROBE_INTERVAL_MS, deadline - Date.now()));
      }
    } finally {
      logWatch?.close();
    }
  }

  /** The trainer's log announces its registration: a write wakes the wait at once. */
  private watchTrainerLog(): FSWatcher | undefined {
    try {
      const logWatch = watch(this.run.record.logs.trainer, { persistent: false }, () => this.waker.notify());
      logWatch.on('error', () => logWatch.close());
      return logWatch;
    } catch {
      // The probe interval covers it.
      return undefined;
    }
  }

  /** Probes what the stage's readiness depends on (only what it still needs), then decides. */
  private async readiness(stage: RunProcess): Promise<Readiness> {
    const record = this.run.record;
    const p = record.processes[stage];
    const port = record.ports.api;
    switch (stage) {
      case 'api': {
        const answers = p.state === 'running' && (await apiAnswers(port));
        // It may have exited while the probe was out.
        return apiReadiness({ answers, running: this.run.record.processes.api.state === 'running' });
      }
      case 'trainer': {
        const registered = p.state === 'running' && ((await this.trainerSaysRegistered()) || (await trainerRegistered(port)));
        const inferenceAnswers = registered && (await serverAnswers(record.ports.inference, '/health'));
        if (registered) this.trainerRegisteredAt ??= Date.now();
        const registeredForMs = this.trainerRegisteredAt === undefined ? 0 : Date.now() - this.trainerRegisteredAt;
        return trainerReadiness({ registered, inferenceAnswers, registeredForMs, inferencePort: record.ports.inference });
      }
      case 'env':
        return envReadiness({ state: p.state, aliveMs: Date.now() - Date.parse(p.started_at ?? ''), dataFlowing: p.state === 'running' && (await dataFlowing(port)) });
    }
  }

  private async trainerSaysRegistered(): Promise<boolean> {
    this.trainerLog.scanner.feed(await this.trainerLog.cursor.read());
    return this.trainerLog.scanner.summary.registered;
  }
}
