/**
 * The outcome rules of an Atropos run (docs/architecture.md, "The life of a run"): from how its
 * processes ended and what their logs say, whether the run completed, failed, or goes on. The rules are a
 * pure function of those facts (`verdictOf`); `judge` reads the facts from the run's files.
 */
import type { RunProcess } from '../../../core/files/home.js';
import { tailLines } from '../../../core/files/logTail.js';
import type { Verdict } from '../seams/framework.js';
import { logOf, processOf, type ProcessRecord, type RunRecord } from '../seams/record.js';
import { readTrainerLog, type TrainerLogSummary } from './trainerLog.js';

export type ProcessEnd = Pick<ProcessRecord, 'state' | 'exit_code' | 'signal'>;

export interface RunFacts {
  processes: Record<RunProcess, ProcessEnd>;
  /** What the trainer log says; it matters only once the trainer exited. */
  trainerLog: Pick<TrainerLogSummary, 'completed' | 'error_line'>;
  /** The environment's log shows a Python traceback; it matters only for an exit nobody saw. */
  envLogShowsCrash: boolean;
}

function howItEnded(p: Pick<ProcessRecord, 'exit_code' | 'signal'>): string {
  if (p.exit_code !== null) return `exit code ${p.exit_code}`;
  if (p.signal !== null) return `killed by ${p.signal}`;
  return 'exit code unknown: it ended while the run had no keeper';
}

/** An exit nobody saw (adopted process): neither code nor signal is known. */
const unseen = (p: ProcessEnd): boolean => p.exit_code === null && p.signal === null;

/**
 * The verdict, or undefined while the run goes on. The trainer prints `Training complete!` and
 * exits 0 even after `Error in step`, so its error line, not its exit code, decides a failure.
 * An environment exits 0 once it has queued enough data: that is normal.
 */
export function verdictOf({ processes: { api, trainer, env }, trainerLog: log, envLogShowsCrash }: RunFacts): Verdict | undefined {
  if (trainer.state === 'exited') {
    const cleanExit = trainer.exit_code === 0 || unseen(trainer);
    if (log.completed && log.error_line === null && cleanExit) return { status: 'completed' };
    // With the API gone too, the API's end is the one to report.
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
  if (env.state === 'exited' && env.exit_code !== 0 && (!unseen(env) || envLogShowsCrash)) {
    return { status: 'failed', error: `The environment ended (${howItEnded(env)}).`, error_process: 'env' };
  }
  return undefined;
}

const NOTHING_READ: RunFacts['trainerLog'] = { completed: false, error_line: null };

/** For an adopted environment whose exit code cannot be known: did it die with a traceback? */
async function envLogShowsCrash(path: string): Promise<boolean> {
  const lines = await tailLines(path, 50);
  return lines.some((line) => line.startsWith('Traceback (most recent call last)'));
}

/** Reads the facts the rules need (a log only where it matters: a trainer log grows for hours) and applies them. */
export async function judge(record: RunRecord): Promise<Verdict | undefined> {
  const [api, trainer, env] = (['api', 'trainer', 'env'] as const).map((name) => processOf(record, name));
  return verdictOf({
    processes: { api: api!, trainer: trainer!, env: env! },
    trainerLog: trainer!.state === 'exited' ? await readTrainerLog(logOf(record, 'trainer')) : NOTHING_READ,
    envLogShowsCrash: env!.state === 'exited' && unseen(env!) && (await envLogShowsCrash(logOf(record, 'env'))),
  });
}
