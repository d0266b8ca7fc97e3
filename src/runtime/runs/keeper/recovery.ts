/**
 * Unattended recovery (RL_AUTO_RESUME): whether a run that just ended is resumed by its keeper, and
 * after how long. A pure decision over the record, tested as a table. Only a failure with a
 * transient cause is retried: Tinker answering 5xx, a connection reset, 429 once the SDK's own
 * retries ran out, a process killed with no error of its own. A configuration error, a refused
 * key, a retired model, a 402 billing pause, a stall, a budget stop and a user's stop never are;
 * nor is a run whose framework cannot resume (an Atropos run), which the keeper asks separately.
 */
import type { RunRecord } from '../seams/record.js';

/** The first automatic attempt waits this long, each next one twice as long as the one before. */
export const FIRST_WAIT_MS = 5_000;

/** Causes never retried: what a new attempt would meet again. */
const PERMANENT: readonly [RegExp, string][] = [
  [/ConfigurationError/, 'a configuration error'],
  [/paused due to billing status|Error code: 402\b|PaymentRequired/i, 'a 402 billing pause'],
  [/AuthenticationError|PermissionDeniedError|Error code: 40[13]\b/, 'a refused key'],
  [/NotFoundError|Error code: 404\b/, 'a model or path Tinker does not serve'],
  [/BadRequestError|UnprocessableEntityError|Error code: 4(?:00|22)\b/, 'a request Tinker refused'],
];

/** Transient causes, with how a record names them. */
const TRANSIENT: readonly [RegExp, string][] = [
  [/RateLimitError|Error code: 429\b/, 'Tinker answered 429 after its retries'],
  [/InternalServerError|ServiceUnavailable|Error code: 5\d\d\b/, 'Tinker answered 5xx'],
  [/APIConnectionError|APITimeoutError|ConnectionResetError|Connection reset|RemoteDisconnected|ConnectionError/, 'the connection to Tinker was reset'],
];

export type Recovery = { resume: true; cause: string; attempt: number; waitMs: number } | { resume: false; why: string };

/** The automatic resumes the run has had so far. */
export const automaticResumes = (record: Pick<RunRecord, 'resumes'>): number => (record.resumes ?? []).filter((r) => r.automatic !== undefined).length;

/** Whether the failure's cause is transient, and its words; undefined when it is not. */
export function transientCause(record: Pick<RunRecord, 'status' | 'error' | 'error_cause' | 'processes'>): { transient: boolean; cause: string } {
  const error = record.error ?? '';
  if (record.status !== 'failed') return { transient: false, cause: `it ended ${record.status}` };
  if (error.startsWith('Stalled')) return { transient: false, cause: 'a stall' };
  if (error.startsWith('Start-up')) return { transient: false, cause: 'a start-up failure' };
  const text = `${record.error_cause ?? ''}\n${error}`;
  for (const [pattern, what] of PERMANENT) if (pattern.test(text)) return { transient: false, cause: what };
  for (const [pattern, what] of TRANSIENT) if (pattern.test(text)) return { transient: true, cause: `${what}: ${record.error_cause ?? error}`.slice(0, 300) };
  const trainer = record.processes.trainer;
  if (trainer?.signal && record.error_cause === undefined) return { transient: true, cause: `the trainer was killed by ${trainer.signal} with no error of its own` };
  return { transient: false, cause: 'not a transient cause' };
}

/** The keeper's decision once the run ended: resume it (the cause, which attempt, the wait) or why not. */
export function recovery(record: Pick<RunRecord, 'status' | 'error' | 'error_cause' | 'processes' | 'resumes'>, limit: number): Recovery {
  if (record.status === 'completed') return { resume: false, why: 'completed' };
  const { transient, cause } = transientCause(record);
  if (!transient) return { resume: false, why: `${cause} is never retried` };
  const done = automaticResumes(record);
  if (done >= limit) return { resume: false, why: `RL_AUTO_RESUME=${limit} automatic resumes used` };
  return { resume: true, cause, attempt: done + 1, waitMs: FIRST_WAIT_MS * 2 ** done };
}
