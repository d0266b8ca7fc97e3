/** Temporary directories and free ports for tests; everything is removed when the test ends. */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after } from 'node:test';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FAKES_DIR = join(REPO_ROOT, 'test', 'fakes');
/** Environments in the image of upstream ones that the bundled examples are not (test/fakes/environments). */
export const TEST_ENVIRONMENTS_DIR = join(FAKES_DIR, 'environments');
/** Holds the fake `atroposlib` package: put it on PYTHONPATH (or in a venv's .pth). */
export const FAKE_PYTHONPATH = join(FAKES_DIR, 'python');
export const DIST_ENTRY = join(REPO_ROOT, 'dist', 'index.js');

/** A fresh directory, removed after the current test file finishes. */
export function tempDir(prefix = 'rlmcp-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Ports handed out in this process: the kernel may give a just-released port again at once. */
const issuedPorts = new Set<number>();

function ephemeralPort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      if (address === null || typeof address === 'string') return reject(new Error('no port'));
      srv.close(() => resolvePort(address.port));
    });
  });
}

/** A port that was free on 127.0.0.1 a moment ago and that no earlier call in this process returned. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await ephemeralPort();
    if (!issuedPorts.has(port)) {
      issuedPorts.add(port);
      return port;
    }
  }
}

/**
 * A minimal environment for a server under test: no secrets from the developer's shell, RL_HOME
 * in a fresh temp directory, and the fake atroposlib importable. `overrides` win.
 */
export function testEnv(overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LANG: process.env.LANG,
    PYTHONPATH: FAKE_PYTHONPATH,
    RL_HOME: join(tempDir('rlmcp-home-'), 'rl_training'),
    LOG_LEVEL: 'warn',
    ...overrides,
  };
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}
