#!/usr/bin/env node
/**
 * Entry point: `rl-training-mcp` serves MCP over stdio; stdout then carries protocol frames only,
 * everything else goes to stderr and RL_HOME/server.log. `rl-training-mcp doctor` checks the setup.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { doctorCommand } from './doctorCommand.js';
import { Runtime } from './runtime/runtime.js';
import { loadSettings, SettingsError, type Settings } from './runtime/settings.js';
import { createServer, SERVER_VERSION } from './server.js';

const USAGE = `Usage: rl-training-mcp [command]

  (no command)   serve MCP over stdio (what MCP clients run)
  doctor         check the training setup; exit 0 when training could start, 1 otherwise
  --version      print the version
  --help         print this help

Configuration is read from the environment (see README: TINKER_ATROPOS_ROOT, RL_PYTHON, RL_HOME,
TINKER_API_KEY, WANDB_API_KEY, OPENROUTER_API_KEY, ...) and the optional RL_MCP_CONFIG file.
`;

/** Hard limit for shutdown: clients (and SDK transports) expect the process gone within 2 s. */
const SHUTDOWN_DEADLINE_MS = 1800;

function fail(message: string): never {
  process.stderr.write(`rl-training-mcp: ${message}\n`);
  process.exit(2);
}

async function serve(settings: Settings): Promise<void> {
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

/**
 * `report` is stdout, handed only to the commands that are not serve mode: there a person (or a
 * script capturing the output) asked, so stdout answers. Serve mode never receives it.
 */
async function main(args: string[], report: NodeJS.WritableStream): Promise<void> {
  const [command, ...rest] = args;
  if (command === '--help' || command === '-h') return void report.write(USAGE);
  if (command === '--version' || command === '-v') return void report.write(`${SERVER_VERSION}\n`);
  if (rest.length > 0 || (command !== undefined && command !== 'doctor')) fail(`unknown arguments: ${args.join(' ')}\n${USAGE}`);
  const settings = loadSettings();
  if (command === 'doctor') process.exit(await doctorCommand(settings, report));
  await serve(settings);
}

// A bad setting ends the process with its one-line message; anything else with its stack.
main(process.argv.slice(2), process.stdout).catch((err: unknown) => fail(err instanceof SettingsError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)));
