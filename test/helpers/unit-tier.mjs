/**
 * Preloaded (`node --import`) by `npm run test:unit`: the unit tier's tests start no process and
 * open no port, and this makes that a rule rather than a hope. In each test file's process (the
 * runner marks them with NODE_TEST_CONTEXT; the runner itself must still start them) every way
 * node:child_process starts a program, and every listen of node:net (http's servers included),
 * throws, so a test that does either fails with the reason. A test that needs a process or a port
 * belongs in test/ (the whole suite), not test/unit/.
 */
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

if (process.env.NODE_TEST_CONTEXT?.startsWith('child')) {
  const refuse = (what) =>
    function refused() {
      throw new Error(`the unit tier starts no process and opens no port, but a test called ${what}: move the test file out of test/unit/`);
    };
  for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) childProcess[name] = refuse(`child_process.${name}`);
  net.Server.prototype.listen = refuse('net.Server#listen');
  syncBuiltinESMExports();
}
