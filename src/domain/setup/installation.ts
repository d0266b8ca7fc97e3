/**
 * Where the pieces of a tinker-atropos install are: the interpreter (and its version), the
 * Atropos `run-api` entry point and `launch_training.py`. Each lookup fails with a UserError that
 * says where it looked and what to set, so rl_start_training and a doctor tool can both use them.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { execa } from 'execa';
import { childEnv } from '../../core/childEnv.js';
import { UserError } from '../../core/errors.js';
import type { Settings } from '../../core/settings.js';

/** The trainer and atroposlib need Python 3.11 or newer. */
export const MIN_PYTHON: readonly [number, number] = [3, 11];

export interface PythonVersion {
  version: string;
  major: number;
  minor: number;
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `name` on the server's PATH. */
export function findOnPath(name: string, settings: Settings): string | undefined {
  for (const dir of (settings.processEnv.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

/** RL_PYTHON as a path: itself when it names a file, else the PATH entry it resolves to. */
function pythonPath(settings: Settings): string | undefined {
  return settings.python.includes('/') ? settings.python : findOnPath(settings.python, settings);
}

/**
 * `run-api` next to the interpreter (a venv installs it in its bin/, and a service manager's PATH
 * rarely holds an unactivated venv), else on PATH.
 */
export function findRunApi(settings: Settings): string {
  const searched: string[] = [];
  const python = pythonPath(settings);
  if (python !== undefined) {
    // Not realpath: a venv's python is a symlink to the base interpreter, run-api sits beside the link.
    const beside = join(dirname(python), 'run-api');
    if (isExecutableFile(beside)) return beside;
    searched.push(beside);
  }
  const onPath = findOnPath('run-api', settings);
  if (onPath !== undefined) return onPath;
  searched.push('PATH');
  throw new UserError(
    `No Atropos API server (run-api) found: looked in ${searched.join(' and ')}. Install atroposlib into the interpreter named by RL_PYTHON (${settings.python}), e.g. pip install -e <tinker-atropos> in its venv, or put run-api on PATH.`,
    { searched },
  );
}

export function findLaunchTraining(settings: Settings): string {
  const path = join(settings.root, 'launch_training.py');
  if (statSync(path, { throwIfNoEntry: false })?.isFile()) return path;
  const root = settings.usingBundledExamples ? `the bundled examples tree (${settings.root}), which has no trainer` : settings.root;
  throw new UserError(`No launch_training.py in ${root}. Set TINKER_ATROPOS_ROOT to a tinker-atropos checkout (git clone https://github.com/NousResearch/tinker-atropos).`, {
    searched: [path],
  });
}

/** Runs RL_PYTHON to read its version; UserError when it cannot be run. */
export async function pythonVersion(settings: Settings, signal?: AbortSignal): Promise<PythonVersion> {
  const result = await execa(settings.python, ['-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3])'], {
    cwd: settings.root,
    env: childEnv(settings.processEnv),
    extendEnv: false,
    reject: false,
    timeout: 30_000,
    cancelSignal: signal,
  });
  const match = /^(\d+)\.(\d+)\.\d+$/.exec(result.stdout.trim());
  if (result.failed || !match) {
    const reason = result.code ?? (result.timedOut ? 'timed out' : result.stderr.trim().split('\n').at(-1) || `exit code ${result.exitCode}`);
    throw new UserError(`RL_PYTHON=${settings.python} cannot be run (${reason}). Set RL_PYTHON to a Python ${MIN_PYTHON.join('.')}+ interpreter with atroposlib and tinker-atropos installed (e.g. <tinker-atropos>/.venv/bin/python).`, {
      python: settings.python,
    });
  }
  return { version: match[0], major: Number(match[1]), minor: Number(match[2]) };
}

export function isSupportedPython(v: PythonVersion): boolean {
  return v.major > MIN_PYTHON[0] || (v.major === MIN_PYTHON[0] && v.minor >= MIN_PYTHON[1]);
}
