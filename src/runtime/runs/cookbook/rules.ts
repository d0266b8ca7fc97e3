/**
 * A cookbook run's rules, as pure decisions over what was observed (docs/architecture.md, "The
 * life of a run"): when its one process is ready, how it ended, and the first cause a user can
 * act on in its output. The recipe writes tracebacks to stderr only (logs.log never gets them),
 * so its trainer.log, which holds the process's stdout and stderr, is where causes are read.
 */
import type { Readiness, Verdict } from '../seams/framework.js';
import type { ProcessRecord } from '../seams/record.js';

/**
 * Ready once the process lives and has written config.json since it started. config.json comes
 * after chz parsed the argv and the log directory check let the run through (resume), before the
 * Tinker client and the dataset: from there on what it does is training, which the watchdog
 * judges by its metrics rows (twice RL_STALL_SECONDS before the first), not a start-up deadline.
 * A resumed run finds the previous config.json in place, hence "since it started" (with a second
 * of slack for clocks that round).
 */
export const CONFIG_SLACK_MS = 1_000;

export const STAGE_GOAL = 'waiting for the recipe to write config.json (its arguments parsed, its log directory set up)';

export function trainerReadiness(facts: { running: boolean; startedMs: number; configWrittenMs?: number }): Readiness {
  if (!facts.running) return 'waiting';
  return facts.configWrittenMs !== undefined && facts.configWrittenMs >= facts.startedMs - CONFIG_SLACK_MS ? 'ready' : 'waiting';
}

export interface CookbookEnd {
  trainer: Pick<ProcessRecord, 'state' | 'exit_code' | 'signal'>;
  /** checkpoints.jsonl holds the `final` record: the recipe saved its trained weights and finished. */
  finalSaved: boolean;
  /** The first cause in the process's output, when there is one. */
  cause?: string;
}

function howItEnded(p: Pick<ProcessRecord, 'exit_code' | 'signal'>): string {
  if (p.exit_code !== null) return `exit code ${p.exit_code}`;
  if (p.signal !== null) return `killed by ${p.signal}`;
  return 'exit code unknown: it ended while the run had no keeper';
}

/**
 * The verdict once the process exited, undefined while it runs. Exit 0 (or an exit nobody saw)
 * with the `final` checkpoint recorded is completed; anything else failed, with its first cause.
 */
export function verdictOf({ trainer, finalSaved, cause }: CookbookEnd): Verdict | undefined {
  if (trainer.state !== 'exited') return undefined;
  const unseen = trainer.exit_code === null && trainer.signal === null;
  if (finalSaved && (trainer.exit_code === 0 || unseen)) return { status: 'completed' };
  const what = finalSaved ? 'saved its final checkpoint but then ended abnormally' : 'ended without its final checkpoint';
  return { status: 'failed', error: `The recipe ${what} (${howItEnded(trainer)})${cause ? `: ${cause}` : '.'}`, error_process: 'trainer' };
}

const TRACEBACK = 'Traceback (most recent call last):';
/** The exception line that ends a traceback: `module.Name: message` or a bare `Name`. */
const EXCEPTION = /^(?:[A-Za-z_][\w.]*\.)?[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit|Warning)\b(?::.*)?$/;
/** chz prints its argv errors as "Error:" and the message on the lines after. */
const CHZ_ERROR = 'Error:';
const ANSI = /\x1b\[[0-9;]*m/g;

/**
 * The line of a failed recipe's output a user can act on: the exception of its last traceback
 * (the recipe's own error, not what printed it), chz's message for a bad argument, else Tinker's
 * billing pause.
 */
export function firstCause(lines: readonly string[]): string | undefined {
  const clean = lines.map((l) => l.replace(ANSI, '').trimEnd());
  const last = clean.lastIndexOf(TRACEBACK);
  if (last >= 0) {
    const exception = clean.slice(last + 1).find((l) => !l.startsWith(' ') && EXCEPTION.test(l));
    if (exception !== undefined) return exception.slice(0, 500);
  }
  const chz = clean.lastIndexOf(CHZ_ERROR);
  if (chz >= 0 && clean[chz + 1]) return `chz: ${clean.slice(chz + 1, chz + 3).filter((l) => l !== '').join(' ')}`.slice(0, 500);
  return clean.findLast((l) => /The job (?:is|was) paused due to billing status/.test(l))?.slice(0, 500);
}
