/**
 * The suite's command keeps its promises (scripts/test.ts): the unit tier fails a test file that
 * starts a process or opens a port and passes one that does neither; `npm test` on a machine
 * lacking what it cannot install stops at once, before building, with the one command to run.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { INSTALL_COMMAND } from '../scripts/prerequisites.js';
import { pythonOnPath, REPO_ROOT, tempDir } from './helpers/tmp.js';

const execFileP = promisify(execFile);

/** Runs one test file under the unit tier's preload, as `npm run test:unit` does; its exit code and output. */
async function underUnitTier(body: string): Promise<{ code: number; out: string }> {
  const file = join(tempDir('rlmcp-tier-'), 'probe.test.ts');
  writeFileSync(file, `import { test } from 'node:test';\n${body}\n`);
  const args = ['--import', 'tsx', '--import', join(REPO_ROOT, 'test', 'helpers', 'unit-tier.mjs'), '--test', file];
  try {
    // Without this file's NODE_TEST_CONTEXT, the runner runs as a runner, not as one of its files.
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    const { stdout } = await execFileP(process.execPath, args, { cwd: REPO_ROOT, encoding: 'utf8', env });
    return { code: 0, out: stdout };
  } catch (error) {
    const e = error as { code: number; stdout: string };
    return { code: e.code, out: e.stdout };
  }
}

test('the unit tier fails a test that starts a process, and one that listens on a port; a pure test passes', async () => {
  const pure = await underUnitTier(`test('pure', () => { if (JSON.stringify([1]) !== '[1]') throw new Error('no'); });`);
  assert.equal(pure.code, 0, pure.out);
  const cases = {
    'child_process.spawn': `import { spawn } from 'node:child_process';\ntest('starts', () => { spawn('true'); });`,
    'child_process.execFileSync': `import childProcess from 'node:child_process';\ntest('starts', () => { childProcess.execFileSync('true'); });`,
    'child_process.fork': `import { fork } from 'node:child_process';\ntest('starts', () => { fork('x.js'); });`,
    'net.Server#listen': `import { createServer } from 'node:http';\ntest('listens', async () => { await new Promise((r) => createServer().listen(0, '127.0.0.1', () => r(undefined))); });`,
  };
  for (const [call, body] of Object.entries(cases)) {
    const result = await underUnitTier(body);
    assert.equal(result.code, 1, `${call}: ${result.out}`);
    assert.match(result.out, new RegExp(`starts no process and opens no port, but a test called ${call.replace(/[.#]/g, '\\$&')}`));
  }
});

test('npm test on a machine without Chromium or Slurm and no apt-get stops at once with the one command, before building', async () => {
  // Only node and python3 on PATH: no chromium, no apt-get (Slurm's daemons may still be found in sbin).
  const bin = tempDir('rlmcp-bin-');
  for (const program of [process.execPath, pythonOnPath()]) symlinkSync(program, join(bin, program === process.execPath ? 'node' : 'python3'));
  const result = await execFileP(process.execPath, ['--import', 'tsx', 'scripts/test.ts', 'all'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: { PATH: bin, HOME: process.env.HOME },
  }).then(
    () => assert.fail('npm test went on without Chromium'),
    (error: { code: number; stderr: string; stdout: string }) => error,
  );
  assert.equal(result.code, 1);
  assert.match(result.stderr, /needs Debian's Chromium/);
  assert.ok(result.stderr.includes(INSTALL_COMMAND), result.stderr);
  assert.doesNotMatch(result.stdout + result.stderr, /build|tsc/i, 'nothing built');
});
