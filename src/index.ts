#!/usr/bin/env node
/**
 * Entry point: `rl-training-mcp` serves MCP over stdio; stdout then carries protocol frames only,
 * everything else goes to stderr and RL_HOME/server.log. `rl-training-mcp doctor` checks the setup.
 */
import { loadSettings } from './runtime/config/settings.js';
import { SettingsError } from './core/errors.js';
import { SERVER_VERSION } from './core/version.js';
import { serveStdio } from './server/stdio.js';
import { doctorCommand } from './runtime/wiring/doctorCommand.js';

const USAGE = `Usage: rl-training-mcp [command]

  (no command)   serve MCP over stdio (what MCP clients run)
  doctor         check the training setup; exit 0 when training could start, 1 otherwise
  --version      print the version
  --help         print this help

Configuration is read from the environment (see README: TINKER_ATROPOS_ROOT, RL_PYTHON, RL_HOME,
TINKER_API_KEY, WANDB_API_KEY, OPENROUTER_API_KEY, ...) and the optional RL_MCP_CONFIG file.
`;

function fail(message: string): never {
  process.stderr.write(`rl-training-mcp: ${message}\n`);
  process.exit(2);
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
  await serveStdio(settings);
}

// A bad setting ends the process with its one-line message; anything else with its stack.
main(process.argv.slice(2), process.stdout).catch((err: unknown) => fail(err instanceof SettingsError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)));
