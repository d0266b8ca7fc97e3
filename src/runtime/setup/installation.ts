/**
 * Where the pieces of a tinker-atropos install are: the interpreter (its version and what it
 * imports), the Atropos `run-api` entry point and `launch_training.py`. Each lookup fails with a
 * UserError that says where it looked and what to set; requirements.ts turns them into checks.
 */
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { loadExeca } from '../../core/onDemand.js';
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

/** The modules a start needs RL_PYTHON to import. */
export const PROBED_MODULES = ['atroposlib', 'tinker'] as const;
export type ProbedModule = (typeof PROBED_MODULES)[number];

/**
 * What one launch of RL_PYTHON says: its version, and for each probed module null (importable)
 * or the first line of its import error. Not runnable: the reason, as a sentence with the fix.
 */
export type InterpreterProbe =
  | {
      runnable: true;
      version: PythonVersion;
      imports: Record<ProbedModule, string | null>;
      /** The selected environment's file imported as its process imports it: null, or its import error. */
      environment?: string | null;
    }
  | { runnable: false; message: string };

// The version goes out first and flushed, on a line of its own: an import that hangs until the
// timeout, or an old interpreter that fails on the rest, still tells its version. With an
// environment file (argv[1]) everything is imported as \`python <file> serve\` would: only the
// file's own folder on sys.path, not the checkout root the cwd would add, so a checkout that was
// never \`pip install -e .\`-ed fails here instead of after the trainer registered.
const INTERPRETER_PROBE = `
import importlib, importlib.util, json, os, sys
print("%d.%d.%d" % sys.version_info[:3], flush=True)
def error(exc):
    return ((type(exc).__name__ + ": " + str(exc)).splitlines() or [type(exc).__name__])[0]
env_file = sys.argv[1] if len(sys.argv) > 1 else None
if env_file:
    sys.path[0] = os.path.dirname(os.path.abspath(env_file))
out = {}
for name in ${JSON.stringify(PROBED_MODULES)}:
    try:
        importlib.import_module(name)
        out[name] = None
    except BaseException as exc:
        out[name] = error(exc)
if env_file:
    try:
        sys.argv = [env_file]
        spec = importlib.util.spec_from_file_location("rl_training_mcp_probed_environment", env_file)
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
        out["environment"] = None
    except BaseException as exc:
        out["environment"] = error(exc)
print(json.dumps(out))
`;

function importErrors(stdout: string, fallback: string, environment: boolean): Pick<InterpreterProbe & { runnable: true }, 'imports' | 'environment'> {
  let answer: unknown;
  try {
    answer = JSON.parse(stdout.trim().split('\n').at(-1) ?? '');
  } catch {
    // No answer (the probe died or hung): everything gets the fallback.
  }
  const parsed = typeof answer === 'object' && answer !== null ? (answer as Record<string, string | null>) : {};
  const of = (name: string): string | null => (name in parsed ? parsed[name]! : fallback);
  const imports = Object.fromEntries(PROBED_MODULES.map((name) => [name, of(name)])) as Record<ProbedModule, string | null>;
  return environment ? { imports, environment: of('environment') } : { imports };
}

/** Launches RL_PYTHON once to read its version and try the imports a run needs. */
export async function probeInterpreter(settings: Settings, signal?: AbortSignal, environmentFile?: string): Promise<InterpreterProbe> {
  const { execa } = await loadExeca();
  const result = await execa(settings.python, ['-c', INTERPRETER_PROBE, ...(environmentFile !== undefined ? [environmentFile] : [])], {
    cwd: settings.root,
    env: childEnv(settings.processEnv),
    extendEnv: false,
    reject: false,
    timeout: settings.introspectTimeoutSeconds * 1000,
    cancelSignal: signal,
  });
  const lastError = result.stderr.trim().split('\n').at(-1) || `exit code ${result.exitCode}`;
  const match = /^(\d+)\.(\d+)\.\d+$/.exec(result.stdout.trim().split('\n')[0] ?? '');
  if (!match) {
    const reason = result.code ?? (result.timedOut ? 'timed out' : lastError);
    return {
      runnable: false,
      message: `RL_PYTHON=${settings.python} cannot be run (${reason}). Set RL_PYTHON to a Python ${MIN_PYTHON.join('.')}+ interpreter with atroposlib and tinker-atropos installed (e.g. <tinker-atropos>/.venv/bin/python).`,
    };
  }
  const version = { version: match[0], major: Number(match[1]), minor: Number(match[2]) };
  const fallback = result.timedOut ? 'timed out' : `the import probe gave no answer (${lastError})`;
  return { runnable: true, version, ...importErrors(result.stdout, fallback, environmentFile !== undefined) };
}

export function isSupportedPython(v: PythonVersion): boolean {
  return v.major > MIN_PYTHON[0] || (v.major === MIN_PYTHON[0] && v.minor >= MIN_PYTHON[1]);
}

/** A good probe is reused this long; a failed one never is, so a fix shows at the next start. */
const PROBE_REUSE_MS = 10 * 60_000;
const goodProbes = new Map<string, { stamp: string; at: number; probe: InterpreterProbe }>();

/** What the probe of this interpreter and environment file depends on: both files as they are now. */
function probeStamp(settings: Settings, environmentFile: string | undefined): string {
  const stampOf = (path: string): string => {
    try {
      const s = statSync(realpathSync(path));
      return `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch {
      return 'missing';
    }
  };
  return `${stampOf(settings.python)}|${environmentFile === undefined ? '' : stampOf(environmentFile)}`;
}

const allGood = (probe: InterpreterProbe): boolean => probe.runnable && Object.values(probe.imports).every((e) => e === null) && (probe.environment ?? null) === null;

/**
 * A start's probe: the last good one of this interpreter and environment file while both files
 * are unchanged and it is recent (starts of a sweep then launch the interpreter once, not per
 * run), else a new one. Something uninstalled since then surfaces when the run's processes start.
 */
export async function reusableProbe(settings: Settings, signal?: AbortSignal, environmentFile?: string): Promise<InterpreterProbe> {
  const key = `${settings.python}\0${environmentFile ?? ''}`;
  const stamp = probeStamp(settings, environmentFile);
  const kept = goodProbes.get(key);
  if (kept !== undefined && kept.stamp === stamp && Date.now() - kept.at < PROBE_REUSE_MS) return kept.probe;
  const probe = await probeInterpreter(settings, signal, environmentFile);
  if (allGood(probe)) goodProbes.set(key, { stamp, at: Date.now(), probe });
  else goodProbes.delete(key);
  return probe;
}
