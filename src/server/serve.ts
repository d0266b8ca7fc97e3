/**
 * The server behind the stdio front door (stdio.ts): the runtime and the SDK server, connected to
 * the session the front door hands over. stdout carries protocol frames only (logs go to stderr
 * and RL_HOME/server.log), and the process ends within the deadline clients expect once its client
 * goes away.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { Runtime } from '../runtime/wiring/runtime.js';
import type { Settings } from '../core/settings.js';
import type { StdioFrontDoor } from './frontDoor.js';
import { createServer } from './server.js';

/** Hard limit for shutdown: clients (and SDK transports) expect the process gone within 2 s. */
const SHUTDOWN_DEADLINE_MS = 1800;

export async function serve(settings: Settings, door: StdioFrontDoor): Promise<void> {
  const runtime = new Runtime(settings);
  const { logger } = runtime;
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
  // leave this process (and whatever it supervises) behind without this.
  door.onInputEnd(() => shutdown('stdin closed'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGHUP', () => shutdown('SIGHUP'));
  // A bug in one handler must not take down a server that supervises paid training runs.
  process.on('uncaughtException', (err) => logger.error({ err }, 'uncaught exception'));
  process.on('unhandledRejection', (err) => logger.error({ err }, 'unhandled rejection'));

  const { input, output } = door.handOver(({ same, ...check }) => {
    if (same) logger.debug({ id: check.id }, 'early answer confirmed by the server');
    else logger.warn({ check }, "an answer sent before the server loaded differs from the server's own: rebuild (npm run build)");
  });
  await server.connect(new StdioServerTransport(input, output));
  logger.info(
    { root: settings.root, home: settings.home, python: settings.python, bundledExamples: settings.usingBundledExamples },
    'rl-training-mcp serving on stdio',
  );
}

