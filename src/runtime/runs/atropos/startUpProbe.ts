/**
 * An Atropos run's start-up as probed: the API answers GET /, then the trainer registers with it
 * (its log says so, or /wandb_info names a project) and serves its inference port, then the
 * environment connects. Only what a stage still needs is probed; the decisions are readiness.ts's.
 */
import { statSync } from 'node:fs';
import type { Logger } from '../../../core/logger.js';
import type { RunProcess } from '../../../core/files/home.js';
import type { Readiness, StartUpProbe } from '../seams/framework.js';
import { LogCursor } from '../supervision/polling.js';
import { hostOf, logOf, processOf, type RunRecord } from '../seams/record.js';
import { apiAnswers, dataFlowing, type Endpoint, serverAnswers, trainerRegistered } from './probes.js';
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
 * A starting API is asked whether it answers when its log has grown since it was last asked
 * (uvicorn logs "Uvicorn running on ..." once it listens, and that write wakes the stage), and
 * otherwise at most this often. Asked every 50 ms while it loaded, it was a refused connection
 * each time: a millisecond of its keeper's CPU apiece, on the cores the run's processes need.
 */
const ASK_QUIET_API_EVERY_MS = 250;

export class AtroposStartUpProbe implements StartUpProbe {
  private readonly trainerLog: { cursor: LogCursor; scanner: TrainerLogScanner };
  private trainerRegisteredAt?: number;
  private apiAskedAt = -Infinity;
  private readonly apiLog = { size: -1, askedAt: -Infinity };

  constructor(
    private readonly run: () => RunRecord,
    private readonly logger: Logger,
  ) {
    this.trainerLog = { cursor: new LogCursor(logOf(run(), 'trainer')), scanner: new TrainerLogScanner() };
  }

  /** The API's log says it listens, the trainer's that it registered: a write wakes the wait at once. */
  wakeOn(stage: RunProcess): string[] {
    return stage === 'env' ? [] : [logOf(this.run(), stage)];
  }

  async readiness(stage: RunProcess): Promise<Readiness> {
    const record = this.run();
    const p = processOf(record, stage);
    const api = { host: hostOf(record), port: record.ports.api };
    switch (stage) {
      case 'api': {
        const answers = p.state === 'running' && this.mayAskApi() && (await apiAnswers(api));
        // It may have exited while the probe was out.
        return apiReadiness({ answers, running: processOf(this.run(), 'api').state === 'running' });
      }
      case 'trainer': {
        const registered = p.state === 'running' && ((await this.trainerSaysRegistered()) || (await this.apiSaysRegistered(api)));
        const inferenceAnswers = registered && (await serverAnswers({ host: api.host, port: record.ports.inference }, '/health'));
        if (registered && this.trainerRegisteredAt === undefined) {
          this.trainerRegisteredAt = Date.now();
          this.logger.debug({ run_id: record.run_id }, 'trainer registered with the Atropos API');
        }
        const registeredForMs = this.trainerRegisteredAt === undefined ? 0 : Date.now() - this.trainerRegisteredAt;
        return trainerReadiness({ registered, inferenceAnswers, registeredForMs, inferencePort: record.ports.inference });
      }
      case 'env':
        return envReadiness({ state: p.state, aliveMs: Date.now() - Date.parse(p.started_at ?? ''), dataFlowing: p.state === 'running' && (await dataFlowing(api)) });
    }
  }

  /** Whether to ask a starting API now: its log grew since it was last asked, or it has been quiet for ASK_QUIET_API_EVERY_MS. */
  private mayAskApi(): boolean {
    const size = statSync(logOf(this.run(), 'api'), { throwIfNoEntry: false })?.size ?? 0;
    if (size === this.apiLog.size && Date.now() - this.apiLog.askedAt < ASK_QUIET_API_EVERY_MS) return false;
    Object.assign(this.apiLog, { size, askedAt: Date.now() });
    return true;
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
