#!/usr/bin/env node
/**
 * Entry point: `rl-training-mcp` serves MCP over stdio. stdout carries protocol frames only;
 * everything else goes to stderr and RL_HOME/server.log.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { Runtime } from './runtime/runtime.js';
import { loadSettings, SettingsError } from './runtime/settings.js';
import { createServer } from './server.js';

/** Hard limit for shutdown: clients (and SDK transports) expect the process gone within 2 s. */
const SHUTDOWN_DEADLINE_MS = 1800;

function fail(message: string): never {
  process.stderr.write(`rl-training-mcp: ${message}\n`);
  process.exit(2);
}

async function serve(): Promise<void> {
  let runtime: Runtime;
  try {
    runtime = new Runtime(loadSettings());
  } catch (err) {
    if (err instanceof SettingsError) fail(err.message);
    throw err;
  }
  const { logger, settings } = runtime;
  const server = createServer(runtime);

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
      await server.close().catch(() => undefined);
      process.exit(0);
    })();
  };
  // The SDK 1.32 stdio transport does not react to stdin EOF: a client that goes away would
  // leave this process (and whatever it supervises) behind without these handlers.
  process.stdin.on('end', () => shutdown('stdin closed'));
  process.stdin.on('close', () => shutdown('stdin closed'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGHUP', () => shutdown('SIGHUP'));
  // A bug in one handler must not take down a server that supervises paid training runs.
  process.on('uncaughtException', (err) => logger.error({ err }, 'uncaught exception'));
  process.on('unhandledRejection', (err) => logger.error({ err }, 'unhandled rejection'));

  await server.connect(new StdioServerTransport());
  logger.info(
    { root: settings.root, home: settings.home, python: settings.python, bundledExamples: settings.usingBundledExamples },
    'rl-training-mcp serving on stdio',
  );
}

serve().catch((err: unknown) => fail(err instanceof Error ? (err.stack ?? err.message) : String(err)));
