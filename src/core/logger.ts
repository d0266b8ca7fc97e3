/**
 * pino to stderr and RL_HOME/server.log. stdout belongs to the MCP transport, so nothing here
 * may ever write to fd 1. Every line passes through the secret redactor before it is written.
 */
import { mkdirSync } from 'node:fs';
import { pino, type Logger } from 'pino';
import type { SecretRedactor } from './redact.js';
import { serverLogPath } from './files/home.js';

export type { Logger };


export function createLogger(opts: { level: string; home?: string; redactor: SecretRedactor; stderr?: boolean }): Logger {
  const streams: pino.StreamEntry[] = [];
  if (opts.stderr !== false) streams.push({ level: 'trace', stream: pino.destination({ dest: 2, sync: true }) });
  if (opts.home) {
    mkdirSync(opts.home, { recursive: true });
    streams.push({ level: 'trace', stream: pino.destination({ dest: serverLogPath(opts.home), sync: true, mkdir: true }) });
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
