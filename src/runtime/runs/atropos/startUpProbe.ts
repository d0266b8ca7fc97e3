/**
 * An Atropos run's start-up as probed: the API answers GET /, then the trainer registers with it
 * (its log says so, or /wandb_info names a project) and serves its inference port, then the
 * environment connects. Only what a stage still needs is probed; the decisions are readiness.ts's.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import type { Logger } from '../../../core/logger.js';
import type { RunProcess } from '../../../core/files/home.js';
import type { Readiness, StartUpProbe } from '../seams/framework.js';
import { LogCursor } from '../supervision/polling.js';
import { hostOf, logOf, processOf, type RunRecord } from '../seams/record.js';
import { apiAnswers, dataFlowing, type Endpoint, serverAnswers, STATUS_PATH, trainerRegistered } from './probes.js';
import { apiReadiness, envReadiness, trainerReadiness } from './readiness.js';
import { TrainerLogScanner } from './trainerLog.js';

/**
 * The API's word that a trainer registered (`GET /wandb_info`) is asked at most this often: it is
 * the fallback for a trainer whose log does not say so, and asked at each probe it was a tenth of
 * the requests the Atropos API (Python, on the cores the run's processes need) served while runs
 * started.
 */
const ASK_API_EVERY_MS = 1_000;

/**
 * A stage's server is asked again only when the log that shows its change has grown since it was
 * last asked, and otherwise at most this often. The API's log says when it listens (uvicorn's
 * "Uvicorn running on ...") and, one access line each, when the environment registers and sends
 * data; the trainer's says when its inference server listens. Asked at each probe instead (every
 * 50 ms), a starting API was a refused connection each time and a waiting one a request the
 * Python API served: about a millisecond of CPU apiece on both sides, on the cores the run's own
 * processes need.
 */
const ASK_QUIET_EVERY_MS = 250;

/**
 * When to ask a server whose changes show in `log`. What the log grew by while the question was
 * out is news (the server may have changed after it answered), unless it is only the access lines
 * the question itself left: lines naming `ownRequest` (`GET /status HTTP/`).
 */
class LogGate {
  private size = -1;
  private askedAt = -Infinity;

  constructor(
    private readonly log: () => string,
    private readonly ownRequest?: string,
  ) {}

  due(): boolean {
    return this.sizeNow() !== this.size || Date.now() - this.askedAt >= ASK_QUIET_EVERY_MS;
  }

  async ask(question: () => Promise<boolean>): Promise<boolean> {
    const before = this.sizeNow();
    const answer = await question();
    const after = this.sizeNow();
    this.size = after > before && this.onlyOwnLines(before, after) ? after : before;
    this.askedAt = Date.now();
    return answer;
  }

  private onlyOwnLines(from: number, to: number): boolean {
    if (this.ownRequest === undefined || to - from > 4096) return false;
    const bytes = Buffer.alloc(to - from);
    const fd = openSync(this.log(), 'r');
    try {
      readSync(fd, bytes, 0, bytes.length, from);
    } finally {
      closeSync(fd);
    }
    return bytes.toString('utf8').split('\n').every((line) => line === '' || line.includes(this.ownRequest!));
  }

  private sizeNow(): number {
    return statSync(this.log(), { throwIfNoEntry: false })?.size ?? 0;
  }
}

export class AtroposStartUpProbe implements StartUpProbe {
  private readonly trainerLog: { cursor: LogCursor; scanner: TrainerLogScanner };
  private trainerRegisteredAt?: number;
  private apiAskedAt = -Infinity;
  private readonly gates: { api: LogGate; inference: LogGate; data: LogGate };

  constructor(
    private readonly run: () => RunRecord,
    private readonly logger: Logger,
  ) {
    this.trainerLog = { cursor: new LogCursor(logOf(run(), 'trainer')), scanner: new TrainerLogScanner() };
    const apiLog = (): string => logOf(this.run(), 'api');
    this.gates = { api: new LogGate(apiLog), inference: new LogGate(() => logOf(this.run(), 'trainer')), data: new LogGate(apiLog, `GET ${STATUS_PATH} HTTP/`) };
  }

  /** The API's log says it listens and, later, that data came; the trainer's that it registered and serves: a write wakes the wait at once. */
  wakeOn(stage: RunProcess): string[] {
    return [logOf(this.run(), stage === 'env' ? 'api' : stage)];
  }

  async readiness(stage: RunProcess): Promise<Readiness> {
    const record = this.run();
    const p = processOf(record, stage);
    const api = { host: hostOf(record), port: record.ports.api };
    switch (stage) {
      case 'api': {
        const answers = p.state === 'running' && (await this.ask(this.gates.api, () => apiAnswers(api))) === true;
        // It may have exited while the probe was out.
        return apiReadiness({ answers, running: processOf(this.run(), 'api').state === 'running' });
      }
      case 'trainer': {
        const registered = p.state === 'running' && ((await this.trainerSaysRegistered()) || (await this.apiSaysRegistered(api)));
        if (registered && this.trainerRegisteredAt === undefined) {
          this.trainerRegisteredAt = Date.now();
          this.logger.debug({ run_id: record.run_id }, 'trainer registered with the Atropos API');
        }
        const inferenceAnswers = registered && (await this.ask(this.gates.inference, () => serverAnswers({ host: api.host, port: record.ports.inference }, '/health')));
        // Not asked now is not "does not answer", which past the grace fails the run.
        if (inferenceAnswers === undefined) return 'waiting';
        const registeredForMs = this.trainerRegisteredAt === undefined ? 0 : Date.now() - this.trainerRegisteredAt;
        return trainerReadiness({ registered, inferenceAnswers, registeredForMs, inferencePort: record.ports.inference });
      }
      case 'env':
        return envReadiness({ state: p.state, aliveMs: Date.now() - Date.parse(p.started_at ?? ''), dataFlowing: p.state === 'running' && (await this.ask(this.gates.data, () => dataFlowing(api))) === true });
    }
  }

  /** `question`'s answer when `gate` says it is due; undefined (not asked) otherwise. */
  private async ask(gate: LogGate, question: () => Promise<boolean>): Promise<boolean | undefined> {
    return gate.due() ? gate.ask(question) : undefined;
  }

  private async apiSaysRegistered(api: Endpoint): Promise<boolean> {
    if (Date.now() - this.apiAskedAt < ASK_API_EVERY_MS) return false;
    this.apiAskedAt = Date.now();
    return trainerRegistered(api);
  }

  private async trainerSaysRegistered(): Promise<boolean> {
    this.trainerLog.scanner.feed(await this.trainerLog.cursor.read());
    return this.trainerLog.scanner.summary.registered;
  }
}
