/** Temporary directories and free ports for tests; everything is removed when the test ends. */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after } from 'node:test';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FAKES_DIR = join(REPO_ROOT, 'test', 'fakes');
/** Environments in the image of upstream ones that the bundled examples are not (test/fakes/environments). */
export const TEST_ENVIRONMENTS_DIR = join(FAKES_DIR, 'environments');
/** Holds the fake `atroposlib`, `wandb` and `tinker` packages: put it on PYTHONPATH (or in a venv's .pth). */
export const FAKE_PYTHONPATH = join(FAKES_DIR, 'python');
/**
 * Holds the fake `tinker_cookbook`, `chz` and `verifiers`: a cookbook install adds it
 * (helpers/fakeInstall.ts, `cookbook: true`), a tinker-atropos one does not.
 */
export const FAKE_COOKBOOK_PYTHONPATH = join(FAKES_DIR, 'cookbook');
/** Verifiers environments as the environment hub ships them (a package and its pyproject.toml): a cookbook install pip-installs them. */
export const FAKE_VERIFIERS_ENVIRONMENTS_DIR = join(FAKES_DIR, 'verifiers-environments');
export const DIST_ENTRY = join(REPO_ROOT, 'dist', 'index.js');

let resolvedPython: string | undefined;
/**
 * The interpreter `python3` on PATH runs, resolved at the first call (or once for the whole run:
 * scripts/test.ts leaves it in RL_TEST_PYTHON): where `python3` is a version manager's shim
 * (pyenv's, on the CI image), every start through the shim spends about 0.4 s of CPU in shell
 * before Python runs, and the tests start Python hundreds of times.
 */
export function pythonOnPath(): string {
  return (resolvedPython ??= process.env.RL_TEST_PYTHON || execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim());
}

/** A fresh directory, removed after the current test file finishes. */
export function tempDir(prefix = 'rlmcp-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Ports handed out in this process: the kernel may give a just-released port again at once. */
const issuedPorts = new Set<number>();

/**
 * Ports are drawn below Linux's ephemeral range (32768-60999): a port the kernel handed out for
 * `listen(0)` is soon reused for the local end of some outgoing connection (every test talks
 * HTTP on loopback), which then holds it when the server under test binds it.
 */
const PORT_RANGE = { low: 20000, high: 32767 };

function bindable(port: number): Promise<boolean> {
  return new Promise((answer) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => answer(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => answer(true)));
  });
}

async function unusedPort(): Promise<number> {
  for (;;) {
    const port = PORT_RANGE.low + Math.floor(Math.random() * (PORT_RANGE.high - PORT_RANGE.low + 1));
    if (await bindable(port)) return port;
  }
}

/** A port that was free on 127.0.0.1 a moment ago and that no earlier call in this process returned. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await unusedPort();
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
    // python3 found first where it really is: what RL_PYTHON's default (python3 on PATH) runs, without the shim's cost.
    PATH: `${dirname(pythonOnPath())}:${process.env.PATH ?? ''}`,
    HOME: process.env.HOME,
    LANG: process.env.LANG,
    PYTHONPATH: FAKE_PYTHONPATH,
    RL_HOME: join(tempDir('rlmcp-home-'), 'rl_training'),
    LOG_LEVEL: 'warn',
    ...overrides,
  };
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

/** A copy of the built package (its node_modules linked), to change its files without touching dist/; its root. */
export function copyOfBuiltPackage(): string {
  const root = tempDir('rlmcp-package-');
  for (const entry of ['package.json', 'dist', 'python', 'examples', 'ui']) cpSync(join(REPO_ROOT, entry), join(root, entry), { recursive: true });
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(root, 'node_modules'));
  return root;
}
