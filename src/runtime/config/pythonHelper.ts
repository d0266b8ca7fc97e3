/**
 * Runs one of python/'s helpers (introspection, the readiness check) with RL_PYTHON, the way both
 * need it: the install root as cwd, only what childEnv lets through (no key), 16 MiB of output
 * kept, SIGKILL at the deadline, and the helper's process group killed when it exits: processes an
 * environment started hold the helper's stdout and stderr open, so the answer would wait for them
 * (past the deadline too); the helper leads its own group, which dies with it.
 */
import { childEnv } from '../../core/childEnv.js';
import { loadExeca } from '../../core/onDemand.js';
import type { Settings } from '../../core/settings.js';

export interface HelperRun {
  args: string[];
  /** Written to the helper's stdin; none: stdin is closed. */
  input?: string;
  timeoutSeconds: number;
  signal?: AbortSignal;
}

export async function runPythonHelper(settings: Settings, run: HelperRun) {
  const { execa } = await loadExeca();
  const subprocess = execa(settings.python, run.args, {
    cwd: settings.root,
    env: childEnv(settings.processEnv),
    extendEnv: false,
    ...(run.input === undefined ? { stdin: 'ignore' as const } : { input: run.input }),
    timeout: run.timeoutSeconds * 1000,
    killSignal: 'SIGKILL',
    cancelSignal: run.signal,
    maxBuffer: 16 * 1024 * 1024,
    reject: false,
  });
  void subprocess.once('exit', () => killGroup(subprocess.pid));
  return subprocess;
}

/** Kills what is left of a helper's process group. */
function killGroup(pid: number | undefined): void {
  try {
    if (pid !== undefined) process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: nothing left in the group (or the helper died before it made one).
  }
}
