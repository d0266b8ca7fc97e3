/**
 * One `<env file> process` child: its output streamed line by line through the secret
 * redactor into its log file (atroposlib prints the resolved server config, api_key included),
 * its own deadline, and its whole process group stopped on timeout, cancellation or server exit.
 * Hermes only killed the child on its own timeout, so a cancelled call left it running.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import type { Execa } from '../../core/onDemand.js';
import { loadExeca } from '../../core/onDemand.js';
import type { SecretRedactor } from '../../core/redact.js';

/** atroposlib's line for a group whose collection returned nothing; it retries without limit. */
const FAILED_GROUP = /Failed to process group/;
const STDERR_TAIL_LINES = 30;
const STDERR_TAIL_CHARS = 1500;
/** A partial line longer than this is written out anyway, keeping enough back to redact a key cut in two. */
const MAX_PENDING_CHARS = 64 * 1024;
const REDACTION_OVERLAP = 1024;

export type StopReason = 'timeout' | 'cancelled' | 'gave_up';

export interface ModelProcessSpec {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  logFile: string;
  /** `# ...` lines written to the log after the command (what the process talks to). */
  preamble?: string;
  timeoutMs: number;
  /** SIGTERM-to-SIGKILL grace when stopped for a timeout, a cancellation or endless retries. */
  graceMs: number;
  /** Stop after this many "Failed to process group" lines instead of retrying until the timeout. */
  maxFailedGroups: number;
  redactor: SecretRedactor;
}

export interface ModelProcessOutcome {
  exitCode: number | null;
  signal: string | null;
  /** Set when we stopped the process. */
  stopReason?: StopReason;
  /** The process could not be started at all (e.g. the interpreter is missing). */
  spawnError?: string;
  failedGroups: number;
  /** Last lines of stderr, redacted. */
  stderrTail: string;
  durationMs: number;
}

/** Splits a stream into lines, redacts each, and hands them on. */
class RedactingLines {
  private pending = '';

  constructor(
    private readonly redactor: SecretRedactor,
    private readonly emit: (line: string) => void,
  ) {}

  push(chunk: string): void {
    this.pending += chunk;
    let newline: number;
    while ((newline = this.pending.indexOf('\n')) >= 0) {
      this.emit(this.redactor.redact(this.pending.slice(0, newline)));
      this.pending = this.pending.slice(newline + 1);
    }
    if (this.pending.length > MAX_PENDING_CHARS) {
      // Every whole key in the buffer is gone after this redaction; one still arriving starts in the kept tail.
      const redacted = this.redactor.redact(this.pending);
      this.emit(redacted.slice(0, -REDACTION_OVERLAP));
      this.pending = redacted.slice(-REDACTION_OVERLAP);
    }
  }

  flush(): void {
    if (this.pending !== '') this.emit(this.redactor.redact(this.pending));
    this.pending = '';
  }
}

/** The end of `text`, at most `max` characters, starting at a line start when one is in reach. */
function lastChars(text: string, max: number): string {
  if (text.length <= max) return text;
  const lineStart = text.indexOf('\n', text.length - max);
  return lineStart >= 0 ? text.slice(lineStart + 1) : text.slice(-max);
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

export class ModelProcess {
  readonly pid: number | undefined;
  readonly done: Promise<ModelProcessOutcome>;
  private stopReason?: StopReason;
  private killTimer?: NodeJS.Timeout;
  private exited = false;
  private failedGroups = 0;
  private readonly stderrLines: string[] = [];

  /** Starts the process; execa is loaded on the first start. */
  static async start(spec: ModelProcessSpec): Promise<ModelProcess> {
    return new ModelProcess(spec, (await loadExeca()).execa);
  }

  private constructor(
    private readonly spec: ModelProcessSpec,
    execa: Execa['execa'],
  ) {
    const started = Date.now();
    const log = createWriteStream(spec.logFile, { flags: 'a', mode: 0o600 });
    // A log that cannot be written must not take the server down; the outcome still comes back.
    log.on('error', () => undefined);
    log.write(spec.redactor.redact(`$ ${[spec.file, ...spec.args].join(' ')}\n# cwd ${spec.cwd}, started ${new Date(started).toISOString()}\n${spec.preamble ? `${spec.preamble}\n` : ''}`));
    const child = execa(spec.file, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      extendEnv: false,
      // Its own process group, so a stop reaches whatever the environment itself started.
      detached: true,
      stdin: 'ignore',
      buffer: false,
      reject: false,
    });
    this.pid = child.pid;
    const stdout = new RedactingLines(spec.redactor, (line) => this.onLine(log, line));
    const stderr = new RedactingLines(spec.redactor, (line) => {
      this.stderrLines.push(line);
      if (this.stderrLines.length > STDERR_TAIL_LINES) this.stderrLines.shift();
      this.onLine(log, line);
    });
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => stdout.push(chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
    const deadline = setTimeout(() => this.stop('timeout'), spec.timeoutMs);
    deadline.unref();
    // The leader is gone; anything it left in its group goes with it. Waiting for that first would
    // keep `done` (which waits for our pipes to close) pending until the timeout.
    child.once('exit', () => {
      if (this.pid !== undefined) signalGroup(this.pid, 'SIGKILL');
    });

    this.done = (async () => {
      const result = await child;
      this.exited = true;
      clearTimeout(deadline);
      clearTimeout(this.killTimer);
      stdout.flush();
      stderr.flush();
      const spawnError = this.pid === undefined ? spec.redactor.redact(result.originalMessage ?? result.shortMessage ?? 'the process did not start') : undefined;
      const end = spawnError ?? (this.stopReason ? `stopped (${this.stopReason})` : `exit code ${result.exitCode ?? 'none'}${result.signal ? `, signal ${result.signal}` : ''}`);
      await new Promise<void>((resolve) => log.end(`# ${end} after ${((Date.now() - started) / 1000).toFixed(1)} s\n`, () => resolve()));
      return {
        exitCode: result.exitCode ?? null,
        signal: result.signal ?? null,
        stopReason: this.stopReason,
        spawnError,
        failedGroups: this.failedGroups,
        stderrTail: lastChars(this.stderrLines.join('\n'), STDERR_TAIL_CHARS),
        durationMs: Date.now() - started,
      };
    })();
  }

  /** SIGTERM to the group, SIGKILL after `graceMs` (default: the spec's grace). The first reason sticks. */
  stop(reason: StopReason, graceMs = this.spec.graceMs): void {
    if (this.exited || this.pid === undefined) return;
    this.stopReason ??= reason;
    const pid = this.pid;
    if (graceMs <= 0) {
      signalGroup(pid, 'SIGKILL');
      return;
    }
    signalGroup(pid, 'SIGTERM');
    if (this.killTimer === undefined) {
      this.killTimer = setTimeout(() => signalGroup(pid, 'SIGKILL'), graceMs);
      this.killTimer.unref();
    }
  }

  private onLine(log: WriteStream, line: string): void {
    log.write(`${line}\n`);
    if (FAILED_GROUP.test(line) && ++this.failedGroups >= this.spec.maxFailedGroups) this.stop('gave_up');
  }
}
