/**
 * pino to stderr and RL_HOME/server.log. stdout belongs to the MCP transport, so nothing here
 * may ever write to fd 1. Every line passes through the secret redactor before it is written.
 */
import { fstatSync, ftruncateSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { pino, type Logger } from 'pino';
import type { SecretRedactor } from './redact.js';
import { serverLogPath } from './files/home.js';

export type { Logger };

/** Says something on stderr, whatever happens to stderr. */
function sayOnStderr(message: string): void {
  try {
    writeSync(2, `rl-training-mcp: ${message}\n`);
  } catch {
    // Nowhere left to say it.
  }
}

/**
 * A log destination that never throws: logging must never take the server down. A line that
 * cannot be written (RL_HOME's file system full, stderr closed) is dropped; the first drop of a
 * spell is said once on stderr, and how many were dropped once lines go through again. A line
 * cut short by a full disk is taken back, so the file holds whole lines only.
 */
export class LineDestination {
  private fd: number | undefined;
  private dropped = 0;

  constructor(
    private readonly target: number | string,
    private readonly say: (message: string) => void = () => undefined,
  ) {}

  write(line: string): void {
    try {
      this.writeWhole(Buffer.from(line));
    } catch (err) {
      if (this.dropped++ === 0) this.say(`${this.target} cannot be written (${(err as NodeJS.ErrnoException).code ?? String(err)}): log lines are dropped until it can be.`);
      return;
    }
    if (this.dropped > 0) this.say(`${this.target} is written again; ${this.dropped} log lines were dropped.`);
    this.dropped = 0;
  }

  private writeWhole(bytes: Buffer): void {
    this.fd ??= typeof this.target === 'number' ? this.target : openSync(this.target, 'a');
    let done = 0;
    try {
      while (done < bytes.length) done += writeSync(this.fd, bytes, done);
    } catch (err) {
      if (done > 0 && typeof this.target === 'string') this.takeBack(done);
      throw err;
    }
  }

  private takeBack(bytes: number): void {
    try {
      ftruncateSync(this.fd!, fstatSync(this.fd!).size - bytes);
    } catch {
      // The part stays; the next whole line follows it.
    }
  }
}

export function createLogger(opts: { level: string; home?: string; redactor: SecretRedactor; stderr?: boolean }): Logger {
  const streams: pino.StreamEntry[] = [];
  if (opts.stderr !== false) streams.push({ level: 'trace', stream: new LineDestination(2) });
  if (opts.home) {
    mkdirSync(opts.home, { recursive: true });
    streams.push({ level: 'trace', stream: new LineDestination(serverLogPath(opts.home), sayOnStderr) });
  }
  return pino(
    {
      level: opts.level,
      base: { pid: process.pid },
      hooks: { streamWrite: (line: string) => opts.redactor.redact(line) },
    },
    pino.multistream(streams),
  );
}
