/**
 * The supervisor of one run, living in the one server process that holds the run's lock.
 *
 * Start-up goes API -> trainer -> environment, each started once the previous is ready (never
 * after a fixed sleep), each stage with a deadline counted from run.json so it survives a
 * restart. Then it watches: exit events of its own children, a short poll for processes adopted
 * from an earlier server, and the outcome rules (docs/architecture.md, "The life of a run"). A stop (or an outcome) stops what
 * is left env -> trainer -> API, whole process groups, SIGTERM then SIGKILL after the grace.
 *
 * Every state change goes to run.json first, so a server that dies at any point leaves a
 * registry from which the next one can carry on.
 */
import { existsSync, watch, type FSWatcher } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { Logger } from '../../core/logger.js';
import { tailLines } from '../../core/logTail.js';
import type { SecretRedactor } from '../../core/redact.js';
import type { RunProcess } from '../../core/home.js';
import type { Settings } from '../../core/settings.js';
import type { FileLock } from './fileLock.js';
import { isSameProcess } from './processTable.js';
import { type ExitInfo, launchDetached, stopGroup, watchForeign } from './processes.js';
import { apiAnswers, dataFlowing, serverAnswers, trainerRegistered } from './probes.js';
import type { RunPhase, RunRecord } from './record.js';
import type { RunStore } from './store.js';
import { readTrainerLog, TrainerLogScanner } from './trainerLog.js';
import { RUN_FILES } from '../../core/home.js';

const START_ORDER: readonly RunProcess[] = ['api', 'trainer', 'env'];
const STOP_ORDER: readonly RunProcess[] = ['env', 'trainer', 'api'];

const STAGE_GOAL: Record<RunProcess, string> = {
  api: 'waiting for the Atropos API to answer GET /',
  trainer: "waiting for the trainer to register with the Atropos API ('Registered as trainer')",
  env: 'waiting for the environment to connect and send data',
};
const PROCESS_NAME: Record<RunProcess, string> = { api: 'Atropos API server', trainer: 'trainer', env: 'environment' };

/** Readiness probes while a stage starts; events (exits, log writes) wake the wait sooner. */
const PROBE_INTERVAL_MS = 250;
/** Adopted processes, lock ownership and stop requests from other servers are checked this often. */
export const TICK_MS = 1_000;
/**
 * An environment counts as connected once the API holds its data, or once it has stayed alive
 * this long. A real environment may spend minutes downloading its dataset and generating its
 * first group before data shows; holding the run in `starting` (or failing it at the stage
 * deadline) for that would misreport a healthy paid run. Its early failures (imports, a bad
 * config) surface within seconds, and any later non-zero exit still fails the run.
 */
const ENV_SETTLE_MS = 10_000;
/**
 * Once registered, the trainer's inference server must answer on RL_INFERENCE_PORT within this
 * time; the environment would otherwise wait on it for ever (the upstream trainer serves on 8001
 * whatever the config says, and runs on without it when that port is taken).
 */
const INFERENCE_GRACE_MS = 15_000;
/** Shutdown with RL_STOP_RUNS_ON_EXIT: the server must be gone within about 2 s. */
const EXIT_GRACE_MS = 1_000;
/** At shutdown, a stop already under way gets this long to finish; the next server finishes it otherwise. */
const CLOSE_WAIT_MS = 1_200;
const LOG_TAIL_LINES = 20;

export interface Verdict {
  status: 'completed' | 'failed';
  error?: string;
  error_process?: RunProcess;
}

export interface SupervisorContext {
  settings: Settings;
  logger: Logger;
  /** Errors quote log lines, which may quote a key: run.json and every answer get them redacted. */
  redactor: SecretRedactor;
  store: RunStore;
  /** The run's supervisor lock, held by this server. */
  lock: FileLock;
  /** The environment of each child (allow-listed; keys only where needed). */
  childEnvs: Record<RunProcess, Record<string, string>>;
  /** Called once the supervisor has let go of the run. */
  onReleased(runId: string): void;
}

const now = (): string => new Date().toISOString();

function howItEnded(p: { exit_code: number | null; signal: string | null }): string {
  if (p.exit_code !== null) return `exit code ${p.exit_code}`;
  if (p.signal !== null) return `killed by ${p.signal}`;
  return 'exit code unknown: it ended while no server supervised it';
}

/** Wakes waiters on events; a wait also ends at its timeout or when the signal aborts. */
class Waker {
  private readonly waiters = new Set<() => void>();

  notify(): void {
    for (const wake of [...this.waiters]) wake();
  }

  sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}

/** Reads what a log gained since the last read (whole UTF-8 characters only). */
class LogCursor {
  private offset = 0;
  private readonly decoder = new StringDecoder('utf8');

  constructor(private readonly path: string) {}

  async read(maxBytes = 1024 * 1024): Promise<string> {
    let handle;
    try {
      handle = await open(this.path, 'r');
    } catch {
      return '';
    }
    try {
      const { size } = await handle.stat();
      const length = Math.min(maxBytes, size - this.offset);
      if (length <= 0) return '';
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, this.offset);
      this.offset += bytesRead;
      return this.decoder.write(buffer.subarray(0, bytesRead));
    } finally {
      await handle.close();
    }
  }
}

export class RunSupervisor {
  private record: RunRecord;
  /** Exit of each process this supervisor watches (own children and adopted ones). */
  private readonly exits = new Map<RunProcess, Promise<ExitInfo>>();
  private readonly foreign = new Map<RunProcess, { stop(): void }>();
  private readonly startup = new AbortController();
  /** Work running in the background (start-up, verdicts, stops), so shutdown can wait for it. */
  private readonly tasks = new Set<Promise<void>>();
  private stopping?: Promise<void>;
  /** An outcome is decided (or the run stopped): no further verdicts. */
  private decided = false;
  private released = false;
  private readonly waker = new Waker();
  private readonly tick: NodeJS.Timeout;
  private trainerScanner?: { cursor: LogCursor; scanner: TrainerLogScanner };
  private trainerRegisteredAt?: number;

  constructor(
    private readonly ctx: SupervisorContext,
    record: RunRecord,
  ) {
    this.record = record;
    this.tick = setInterval(() => this.onTick(), TICK_MS);
    this.tick.unref();
  }

  get runId(): string {
    return this.record.run_id;
  }

  /** A new run: nothing spawned yet. */
  begin(): void {
    void this.background(() => this.startUp());
  }

  /**
   * A run found in the registry (a server restarted, or the supervising server went away):
   * attach to its live processes, note the dead ones, and carry on from where it was.
   */
  adopt(): void {
    for (const name of START_ORDER) {
      const p = this.record.processes[name];
      if (p.state !== 'running') continue;
      if (p.pid !== null && isSameProcess(p.pid, p.start_time)) this.attachForeign(name);
      else this.markExited(name, { exit_code: null, signal: null });
    }
    this.ctx.logger.info({ run_id: this.runId, status: this.record.status }, 'adopted run');
    if (this.record.status === 'stopping' || this.stopRequested()) void this.stop();
    else if (this.record.status === 'starting') void this.background(() => this.startUp());
    else if (this.record.status === 'running') void this.background(() => this.evaluate());
    else void this.background(() => this.cleanUp());
  }

  /** Stops the run (user request): env -> trainer -> API, then `stopped`. Idempotent. */
  stop(): Promise<void> {
    if (this.decided && !this.stopping) return Promise.resolve();
    this.stopping ??= this.background(() => this.stopAll(this.ctx.settings.stopGraceSeconds * 1000, false));
    return this.stopping;
  }

  /** Server shutdown: stop the run quickly (RL_STOP_RUNS_ON_EXIT=1) or let it run on for the next server. */
  async close(stopRun: boolean): Promise<void> {
    if (stopRun && !this.decided) {
      this.stopping ??= this.background(() => this.stopAll(Math.min(EXIT_GRACE_MS, this.ctx.settings.stopGraceSeconds * 1000), true));
    } else {
      // The processes run on (the next server adopts them); start-up resumes there too.
      this.startup.abort();
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(this.tasks), new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)))]);
    clearTimeout(timer);
    this.release();
  }

  /** Runs `work` in the background: tracked for shutdown, failures logged (never an unhandled rejection). */
  private background(work: () => Promise<void>): Promise<void> {
    const task = work().catch((err: unknown) => this.ctx.logger.error({ err, run_id: this.runId }, 'supervisor task failed'));
    this.tasks.add(task);
    void task.finally(() => this.tasks.delete(task));
    return task;
  }

  // ---- start-up ------------------------------------------------------------------------------

  private async startUp(): Promise<void> {
    const signal = this.startup.signal;
    try {
      // A resumed start-up carries on at its stage, keeping that stage's deadline.
      const resumeAt = Math.max(0, START_ORDER.findIndex((stage) => this.record.phase === `starting_${stage}`));
      for (const stage of START_ORDER.slice(resumeAt)) {
        if (signal.aborted) return;
        this.enterPhase(`starting_${stage}`);
        if (this.record.processes[stage].state === 'not_started') {
          // A resumed start-up may find an earlier process dead: starting the next one would be wasted.
          const verdict = await this.judge();
          if (signal.aborted) return;
          if (verdict) {
            await this.finish(this.atStage(stage, verdict));
            return;
          }
          const failure = await this.spawn(stage);
          if (failure !== undefined) {
            await this.finish({ status: 'failed', error: `Start-up failed at stage '${stage}': could not start the ${PROCESS_NAME[stage]} (${failure}).`, error_process: stage });
            return;
          }
        }
        const outcome = await this.awaitReady(stage, signal);
        if (outcome === 'aborted') return;
        if (outcome !== 'ready') {
          await this.finish(outcome);
          return;
        }
      }
      if (signal.aborted) return;
      const at = now();
      this.update((r) => {
        r.status = 'running';
        r.phase = 'training';
        r.phase_started_at = at;
        r.running_at = at;
      });
      this.ctx.logger.info({ run_id: this.runId }, 'run is running');
      // Something may have exited while the last stage was being confirmed.
      await this.evaluate();
    } catch (err) {
      if (signal.aborted) return;
      this.ctx.logger.error({ err, run_id: this.runId }, 'start-up failed');
      await this.finish({ status: 'failed', error: `Start-up failed: ${(err as Error).message}` });
    }
  }

  private enterPhase(phase: RunPhase): void {
    if (this.record.phase === phase) return;
    this.update((r) => {
      r.phase = phase;
      r.phase_started_at = now();
    });
  }

  /** Starts one process and records it at once; the reason when it could not be started. */
  private async spawn(stage: RunProcess): Promise<string | undefined> {
    if (stage === 'trainer' && !this.ctx.childEnvs.trainer.TINKER_API_KEY) {
      return 'TINKER_API_KEY is not set in the environment of the server supervising this run';
    }
    const p = this.record.processes[stage];
    const launched = launchDetached(p.command, { cwd: this.ctx.settings.root, env: this.ctx.childEnvs[stage], logPath: this.record.logs[stage] });
    if (launched.pid === undefined) return (await launched.exited).spawn_error ?? 'unknown error';
    const pid = launched.pid;
    this.update((r) => {
      Object.assign(r.processes[stage], { state: 'running', pid, pgid: pid, start_time: launched.startTime, started_at: now() });
    });
    this.ctx.logger.info({ run_id: this.runId, process: stage, pid }, 'process started');
    this.watchExit(stage, launched.exited);
    return undefined;
  }

  private async awaitReady(stage: RunProcess, signal: AbortSignal): Promise<'ready' | 'aborted' | Verdict> {
    const timeoutS = this.ctx.settings.stageTimeouts[stage];
    const deadline = Date.parse(this.record.phase_started_at) + timeoutS * 1000;
    let logWatch: FSWatcher | undefined;
    if (stage === 'trainer') {
      try {
        logWatch = watch(this.record.logs.trainer, { persistent: false }, () => this.waker.notify());
        logWatch.on('error', () => logWatch?.close());
      } catch {
        // The probe interval covers it.
      }
    }
    try {
      for (;;) {
        if (signal.aborted) return 'aborted';
        const verdict = (await this.judge()) ?? (await this.readiness(stage));
        if (signal.aborted) return 'aborted';
        if (verdict === true) return 'ready';
        if (verdict !== false) return this.atStage(stage, verdict);
        if (Date.now() >= deadline) {
          return {
            status: 'failed',
            error: `Start-up stage '${stage}' timed out after ${timeoutS} s (${STAGE_GOAL[stage]}). The ${stage} log tail shows where it got to; the deadline is set by RL_${stage.toUpperCase()}_READY_TIMEOUT_SECONDS.`,
            error_process: stage,
          };
        }
        await this.waker.sleep(Math.min(PROBE_INTERVAL_MS, deadline - Date.now()), signal);
      }
    } finally {
      logWatch?.close();
    }
  }

  /** A failure during start-up names the stage it happened in. */
  private atStage(stage: RunProcess, verdict: Verdict): Verdict {
    return verdict.status === 'failed' ? { ...verdict, error: `Start-up failed at stage '${stage}' (${STAGE_GOAL[stage]}): ${verdict.error}` } : verdict;
  }

  /** True when the stage is ready, false while it may still become so, a verdict when it cannot. */
  private async readiness(stage: RunProcess): Promise<boolean | Verdict> {
    const p = this.record.processes[stage];
    const port = this.record.ports.api;
    switch (stage) {
      case 'api':
        return p.state === 'running' && (await apiAnswers(port)) && this.record.processes.api.state === 'running';
      case 'trainer': {
        if (p.state !== 'running' || !((await this.trainerSaysRegistered()) || (await trainerRegistered(port)))) return false;
        const inferencePort = this.record.ports.inference;
        if (await serverAnswers(inferencePort, '/health')) return true;
        this.trainerRegisteredAt ??= Date.now();
        if (Date.now() - this.trainerRegisteredAt < INFERENCE_GRACE_MS) return false;
        return {
          status: 'failed',
          error: `The trainer registered with the Atropos API but its inference server does not answer GET /health on port ${inferencePort}, so the environment could never sample. The upstream trainer always serves on port 8001 whatever the config says: set RL_INFERENCE_PORT=8001 and make sure nothing else holds that port.`,
          error_process: 'trainer',
        };
      }
      case 'env':
        // An environment that already exited without failing the run (exit 0) has done its work.
        if (p.state === 'exited') return true;
        return p.state === 'running' && (Date.now() - Date.parse(p.started_at ?? '') >= ENV_SETTLE_MS || (await dataFlowing(port)));
    }
  }

  private async trainerSaysRegistered(): Promise<boolean> {
    this.trainerScanner ??= { cursor: new LogCursor(this.record.logs.trainer), scanner: new TrainerLogScanner() };
    this.trainerScanner.scanner.feed(await this.trainerScanner.cursor.read());
    return this.trainerScanner.scanner.summary.registered;
  }

  // ---- monitoring ----------------------------------------------------------------------------

  private watchExit(name: RunProcess, exited: Promise<ExitInfo>): void {
    this.exits.set(name, exited);
    void exited.then((info) => this.onExit(name, info));
  }

  private attachForeign(name: RunProcess): void {
    const p = this.record.processes[name];
    const watcher = watchForeign(p.pid!, p.start_time, TICK_MS);
    this.foreign.set(name, watcher);
    this.watchExit(name, watcher.exited);
  }

  private onExit(name: RunProcess, info: ExitInfo): void {
    if (this.released) return;
    try {
      this.markExited(name, info);
    } catch (err) {
      this.ctx.logger.error({ err, run_id: this.runId }, 'cannot record a process exit');
    }
    this.waker.notify();
    if (this.record.status === 'running') void this.background(() => this.evaluate());
  }

  private markExited(name: RunProcess, info: ExitInfo): void {
    const p = this.record.processes[name];
    if (p.state === 'exited') return;
    const normalEnvEnd = name === 'env' && info.exit_code === 0 && !this.decided && !this.stopping;
    this.update((r) => {
      Object.assign(r.processes[name], { state: 'exited', exit_code: info.exit_code, signal: info.signal, ended_at: now() });
      if (normalEnvEnd) {
        (r.notes ??= []).push('The environment exited with code 0 (it stops once it has queued enough data); the run goes on until the trainer ends.');
      }
    });
    this.ctx.logger.info({ run_id: this.runId, process: name, exit_code: info.exit_code, signal: info.signal }, 'process exited');
  }

  /** Decides the outcome from the processes and the trainer log; undefined while the run goes on. */
  private async judge(): Promise<Verdict | undefined> {
    const { api, trainer, env } = this.record.processes;
    if (trainer.state === 'exited') {
      const log = await readTrainerLog(this.record.logs.trainer);
      const cleanExit = trainer.exit_code === 0 || (trainer.exit_code === null && trainer.signal === null);
      if (log.completed && log.error_line === null && cleanExit) return { status: 'completed' };
      if (api.state !== 'exited') {
        const error = log.error_line
          ? `the trainer reported '${log.error_line}' and ended (${howItEnded(trainer)}).`
          : log.completed
            ? `the trainer printed 'Training complete!' but then ended abnormally (${howItEnded(trainer)}); its log tail shows why.`
            : `the trainer ended (${howItEnded(trainer)}) without printing 'Training complete!'.`;
        return { status: 'failed', error: error.charAt(0).toUpperCase() + error.slice(1), error_process: 'trainer' };
      }
    }
    if (api.state === 'exited') {
      return { status: 'failed', error: `The Atropos API server ended (${howItEnded(api)}) while the run was active.`, error_process: 'api' };
    }
    if (env.state === 'exited' && env.exit_code !== 0 && (env.exit_code !== null || env.signal !== null || (await this.envLogShowsCrash()))) {
      return { status: 'failed', error: `The environment ended (${howItEnded(env)}).`, error_process: 'env' };
    }
    return undefined;
  }

  /** For an adopted environment whose exit code cannot be known: did it die with a traceback? */
  private async envLogShowsCrash(): Promise<boolean> {
    const lines = await tailLines(this.record.logs.env, 50);
    return lines.some((line) => line.startsWith('Traceback (most recent call last)'));
  }

  private async evaluate(): Promise<void> {
    if (this.decided || this.stopping || this.record.status !== 'running') return;
    const verdict = await this.judge();
    if (verdict) await this.finish(verdict);
  }

  /** Records the outcome, then stops whatever is still running. */
  private async finish(verdict: Verdict): Promise<void> {
    if (this.decided || this.stopping || this.released) return;
    this.decided = true;
    this.startup.abort();
    this.update((r) => {
      r.status = verdict.status;
      r.phase = 'done';
      r.phase_started_at = r.ended_at = now();
      if (verdict.error !== undefined) r.error = this.ctx.redactor.redact(verdict.error);
      if (verdict.error_process !== undefined) r.error_process = verdict.error_process;
    });
    const level = verdict.status === 'completed' ? 'info' : 'warn';
    this.ctx.logger[level]({ run_id: this.runId, status: verdict.status, error: verdict.error }, 'run ended');
    if (verdict.error_process) {
      const tail = await tailLines(this.record.logs[verdict.error_process], LOG_TAIL_LINES);
      this.ctx.logger.warn({ run_id: this.runId, process: verdict.error_process, tail: tail.join('\n') }, 'log tail of the failed process');
    }
    await this.cleanUp();
  }

  /** Stops what is left of an ended run, then lets go of it. */
  private async cleanUp(): Promise<void> {
    await this.stopProcesses(this.ctx.settings.stopGraceSeconds * 1000, false);
    this.release();
  }

  private async stopAll(graceMs: number, forExit: boolean): Promise<void> {
    this.update((r) => {
      r.status = 'stopping';
      r.phase = 'stopping';
      r.phase_started_at = now();
      r.stop_requested_at ??= r.phase_started_at;
    });
    this.ctx.logger.info({ run_id: this.runId }, 'stopping run');
    // Not waiting for the start-up task: once aborted it spawns and records nothing more (every
    // await in it is followed by an abort check), and a probe it awaits must not delay the signals.
    this.startup.abort();
    await this.stopProcesses(graceMs, forExit);
    this.decided = true;
    this.update((r) => {
      r.status = 'stopped';
      r.phase = 'done';
      r.phase_started_at = r.ended_at = now();
      if (forExit) (r.notes ??= []).push('Stopped because the server exited with RL_STOP_RUNS_ON_EXIT=1.');
    });
    this.release();
  }

  /**
   * env -> trainer -> API, whole groups. One at a time with the full grace each, except at
   * server exit: then all get SIGTERM in that order at once and share one short grace.
   */
  private async stopProcesses(graceMs: number, together: boolean): Promise<void> {
    const stopOne = async (name: RunProcess): Promise<void> => {
      const p = this.record.processes[name];
      // An exited leader may leave children in its group (e.g. a trainer that crashed): they go
      // too. Without its start time a long-dead leader's pid could name someone else's group.
      if (p.pid === null || (p.state !== 'running' && p.start_time === null)) return;
      const result = await stopGroup({ pid: p.pid, startTime: p.start_time }, graceMs, this.exits.get(name));
      if (result === 'unkillable') {
        this.ctx.logger.error({ run_id: this.runId, process: name, pid: p.pid }, 'still alive after SIGKILL');
        this.update((r) => (r.notes ??= []).push(`The ${PROCESS_NAME[name]} (process group ${p.pid}) survived SIGKILL; it is stuck in the kernel and needs the operator.`));
        return;
      }
      if (result === 'killed') {
        this.ctx.logger.warn({ run_id: this.runId, process: name }, `did not stop within ${graceMs} ms of SIGTERM; killed`);
        this.update((r) => (r.notes ??= []).push(`The ${PROCESS_NAME[name]} did not stop within ${graceMs / 1000} s of SIGTERM and was killed.`));
      }
      // Our own child's exit event records its exit code; an adopted one is simply gone.
      if (!this.foreign.has(name)) await this.exits.get(name);
      this.markExited(name, { exit_code: null, signal: result === 'killed' ? 'SIGKILL' : null });
    };
    if (together) await Promise.all(STOP_ORDER.map(stopOne));
    else for (const name of STOP_ORDER) await stopOne(name);
  }

  // ---- coordination --------------------------------------------------------------------------

  private stopRequested(): boolean {
    return existsSync(join(this.ctx.store.dir(this.runId), RUN_FILES.stopRequest));
  }

  private onTick(): void {
    if (this.released) return;
    if (!this.ctx.lock.isHeld()) {
      // Another server took the run over (it judged our lock stale): it supervises now.
      this.ctx.logger.warn({ run_id: this.runId }, 'lost the supervisor lock; no longer supervising this run');
      this.release();
      return;
    }
    if (!this.decided && !this.stopping && this.stopRequested()) void this.stop();
  }

  private update(mutate: (r: RunRecord) => void): void {
    this.record = this.ctx.store.update(this.runId, mutate);
  }

  /** Lets go of the run: timers, watchers and the lock. The processes are not touched. */
  private release(): void {
    if (this.released) return;
    this.released = true;
    this.startup.abort();
    clearInterval(this.tick);
    for (const watcher of this.foreign.values()) watcher.stop();
    this.ctx.lock.release();
    this.ctx.onReleased(this.runId);
  }
}
