/**
 * Serving MCP over stdio with the SDK's stdio entry, which serves both protocol generations (the
 * first message of the session picks one: `initialize` a 2025 one, `server/discover` or an
 * enveloped request 2026-07-28). stdout carries protocol frames only (logs go to stderr and
 * RL_HOME/server.log), and the process ends within the deadline clients expect once its client
 * goes away.
 */
import { serveStdio as serveSdkStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { Runtime } from '../runtime/wiring/runtime.js';
import type { Settings } from '../core/settings.js';
import { SessionTap } from './sessionTap.js';
import { createServer } from './server.js';

/** Hard limit for shutdown: clients (and SDK transports) expect the process gone within 2 s. */
const SHUTDOWN_DEADLINE_MS = 1800;

export async function serveStdio(settings: Settings): Promise<void> {
  const runtime = new Runtime(settings);
  const { logger } = runtime;
  const tap = new SessionTap(new StdioServerTransport(), logger);
  // The entry builds a server for the era the session opens in (a second one if a 2026 opening
  // turns out to be a 2025 client); each gets the subscriptions its listens hold, watched before
  // the SDK answers the message that made it build one (a listen may be the first).
  const session = serveSdkStdio(
    async () => {
      const { server, resources } = createServer(runtime);
      await tap.follow(resources);
      return server;
    },
    { transport: tap, onerror: (err) => logger.debug({ err: err.message }, 'protocol error') },
  );

  let shuttingDown = false;
  const shutdown = (reason: string): void => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ reason }, 'shutting down');
    setTimeout(() => {
      logger.warn('shutdown deadline reached; exiting');
      process.exit(0);
    }, SHUTDOWN_DEADLINE_MS).unref();
    void (async () => {
      await runtime.close();
      await session.close().catch(() => undefined);
      process.exit(0);
    })();
  };
  process.stdin.once('end', () => shutdown('stdin closed'));
  process.stdin.once('close', () => shutdown('stdin closed'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGHUP', () => shutdown('SIGHUP'));
  // A bug in one handler must not take down a server that supervises paid training runs.
  process.on('uncaughtException', (err) => logger.error({ err }, 'uncaught exception'));
  process.on('unhandledRejection', (err) => logger.error({ err }, 'unhandled rejection'));
  logger.info(
    { root: settings.root, home: settings.home, python: settings.python, bundledExamples: settings.usingBundledExamples },
    'rl-training-mcp serving on stdio',
  );
}
