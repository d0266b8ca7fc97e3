/**
 * What the logs of a run's processes say beyond "alive": the environment's connection errors,
 * dropped groups and errors (atroposlib logs them and carries on, so the process never exits),
 * and the first meaningful cause of a failure (the line under a wrapper such as tenacity's
 * `RetryError`, or the `Error initializing wandb:` line before the AttributeError that kills the
 * trainer). Pure text functions: the supervisor feeds them, health and failures quote them.
 */
import { cutAtSpace } from '../../../core/redact.js';
import type { EnvLogSignals } from '../seams/record.js';

const MAX_QUOTED_CHARS = 300;
const CONNECTION = /ClientConnectorError|APIConnectionError|ConnectionRefusedError|ServerDisconnectedError|Cannot connect to host|Connection refused|Connect call failed|ConnectError\b/;
const DROPPED = /^(?:Failed to process group, retrying|Scores are the same in a group, skipping)/;
const ERROR = /^(?:Error in collect_trajectories:|Error in scoring|Scoring exception:|Failed to send .* after retries|Error registering env:|Error in handle_send_to_api:)/;

const quote = (line: string): string => cutAtSpace(line, MAX_QUOTED_CHARS);

/** Python logging's default format puts `LEVEL:logger:` before the message. */
const LOGGING_PREFIX = /^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]*:/;

/** Which signal a line of an environment's log is, if any. A connection error wins over its wrapper. */
export function envSignalOf(line: string): keyof EnvLogSignals | undefined {
  const message = line.replace(LOGGING_PREFIX, '');
  if (CONNECTION.test(message)) return 'connection_errors';
  if (DROPPED.test(message)) return 'dropped_groups';
  if (ERROR.test(message)) return 'errors';
  return undefined;
}

/** Adds the signals of `lines` (seen at `at`) to `signals`, in place; true when anything was added. */
export function addEnvSignals(signals: EnvLogSignals, lines: readonly string[], at: string): boolean {
  let changed = false;
  for (const raw of lines) {
    const line = raw.trim();
    const kind = envSignalOf(line);
    if (kind === undefined) continue;
    signals[kind] = { line: quote(line), count: (signals[kind]?.count ?? 0) + 1, at };
    changed = true;
  }
  return changed;
}

/** Lines that carry a cause, most telling first. */
const CAUSES: readonly RegExp[] = [
  /^Error initializing wandb: /,
  // An HTTP error from the model endpoint or a service: the status code says what is wrong.
  /^[\w.]*(?:Error|Exception): .*\b(?:Error code: \d{3}|status(?: code)?:? \d{3})/i,
  /^(?:ModuleNotFoundError|ImportError): /,
  /^Error (?:in step \d+|during training)\b/,
];
/** Exception lines that only wrap the cause printed above them. */
const WRAPPER = /^(?:tenacity\.)?RetryError\b|^During handling of the above exception|^The above exception was the direct cause/;
const EXCEPTION_LINE = /^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b(?::.*)?$/;

/**
 * The first meaningful cause in a log's lines: a known cause line, else the first exception line
 * of a traceback that is not a mere wrapper. Undefined when the lines hold none.
 */
export function firstCause(lines: readonly string[]): string | undefined {
  const trimmed = lines.map((l) => l.replace(/\r$/, ''));
  for (const pattern of CAUSES) {
    const hit = trimmed.find((l) => pattern.test(l.trim()));
    if (hit !== undefined) return quote(hit.trim());
  }
  const exception = trimmed.find((l) => !/^\s/.test(l) && EXCEPTION_LINE.test(l) && !WRAPPER.test(l));
  return exception === undefined ? undefined : quote(exception);
}
