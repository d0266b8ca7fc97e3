/**
 * Entry point of a run's keeper: `node dist/keeper.js <run dir>`, spawned detached by a server
 * (src/runtime/runs/keeper/spawn.ts) with the server's environment, so it reads the same settings.
 * It keeps the run until it has ended (src/runtime/runs/keeper/keeper.ts), then exits; no MCP here.
 */
import { loadSettings } from './runtime/config/settings.js';
import { KEEPER_TOKEN_VARIABLE } from './runtime/runs/keeper/spawn.js';
import { keepRun } from './runtime/runs/keeper/keeper.js';

const [runDir, ...rest] = process.argv.slice(2);
if (runDir === undefined || rest.length > 0) {
  process.stderr.write('usage: keeper.js <run directory>\n');
  process.exit(2);
}
const token = process.env[KEEPER_TOKEN_VARIABLE];
delete process.env[KEEPER_TOKEN_VARIABLE];
try {
  await keepRun(loadSettings(), runDir, token);
  process.exit(0);
} catch (err) {
  process.stderr.write(`${new Date().toISOString()} keeper of ${runDir} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
}
