/**
 * What the demo and the test suite need of the machine beyond `npm ci`, found without starting
 * anything but python3, and what to do about it: Python 3.11+ with pydantic 2 and PyYAML (both),
 * and for the suite Debian's Chromium (the dashboard's browser test) and Slurm with munge and
 * MariaDB (private single-node clusters, scripts/slurm-cluster.sh). `plan` is the decision, a pure
 * function: install what is missing when this is root on a machine with apt, else stop at once
 * with the one command that installs it.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';

const PYTHON_FIX = "python3 -m pip install 'pydantic>=2' PyYAML";

/** What the simulated install needs of python3, each with the command that fixes it; empty when all is there. */
export function pythonProblems(): string[] {
  const probe = spawnSync('python3', ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return ['python3 is not on PATH: install Python 3.11 or newer (https://www.python.org/downloads/, or your package manager)'];
  const version = probe.stdout.trim();
  const [major, minor] = version.split('.').map(Number) as [number, number];
  if (major < 3 || (major === 3 && minor < 11)) return [`python3 is ${version}; 3.11 or newer is needed: install it and put it first on PATH`];
  const missing: string[] = [];
  const pydantic = spawnSync('python3', ['-c', 'import pydantic; print(pydantic.VERSION)'], { encoding: 'utf8' });
  if (pydantic.status !== 0) missing.push(`pydantic is not importable by python3: ${PYTHON_FIX}`);
  else if (!pydantic.stdout.trim().startsWith('2.')) missing.push(`pydantic is ${pydantic.stdout.trim()}; version 2 is needed: ${PYTHON_FIX}`);
  if (spawnSync('python3', ['-c', 'import yaml']).status !== 0) missing.push(`PyYAML is not importable by python3: ${PYTHON_FIX}`);
  return missing;
}

/**
 * The programs scripts/install-slurm.sh installs (with accounting), which the suite's private
 * clusters start; Debian puts the daemons in /usr/sbin, which a non-login PATH may lack.
 */
export const SLURM_PROGRAMS = ['slurmctld', 'slurmd', 'sbatch', 'munged', 'mungekey', 'ss', 'slurmdbd', 'mariadbd'];
const SBIN = ['/usr/sbin', '/sbin'];

/** Whether an executable file of this name is in one of the `:`-separated directories. */
export function onPath(program: string, path: string): boolean {
  return path.split(':').some((dir) => {
    if (dir === '') return false;
    try {
      accessSync(join(dir, program), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

export type SystemPackage = 'chromium' | 'slurm';

/**
 * What the suite needs that the machine lacks: Chromium unless CHROMIUM_PATH names one, Slurm unless
 * RL_TEST_SLURM_CONF names a cluster of one's own (test/helpers/slurm.ts). `sbin` is where Debian's
 * daemons are, searched after PATH.
 */
export function missingSystemPackages(env: Record<string, string | undefined>, sbin: string[] = SBIN): SystemPackage[] {
  const path = env.PATH ?? '';
  const missing: SystemPackage[] = [];
  if (!env.CHROMIUM_PATH && !onPath('chromium', path)) missing.push('chromium');
  if (!env.RL_TEST_SLURM_CONF && !SLURM_PROGRAMS.every((p) => onPath(p, [path, ...sbin].join(':')))) missing.push('slurm');
  return missing;
}

/** The one command that installs everything the suite needs (sudo keeps PATH, for an npm of nvm's). */
export const INSTALL_COMMAND = 'sudo env "PATH=$PATH" npm run test:prerequisites';

export type Plan = { kind: 'ready' } | { kind: 'install'; commands: string[][] } | { kind: 'stop'; message: string };

/** What to do about `missing`: nothing, install it (root with apt), or stop with the command that would. */
export function plan(missing: SystemPackage[], canInstall: boolean): Plan {
  if (missing.length === 0) return { kind: 'ready' };
  const what = missing.map((m) => (m === 'chromium' ? "Debian's Chromium (the dashboard's browser test)" : 'Slurm, munge and MariaDB (the Slurm placement tests)'));
  if (!canInstall) {
    return { kind: 'stop', message: `The suite needs ${what.join(' and ')}, which it installs only as root on a machine with apt-get. Run:\n  ${INSTALL_COMMAND}\nthen npm test again.` };
  }
  const commands: string[][] = [];
  if (missing.includes('chromium')) commands.push(['apt-get', 'update', '-qq'], ['apt-get', 'install', '-y', '-qq', 'chromium']);
  if (missing.includes('slurm')) commands.push(['bash', join('scripts', 'install-slurm.sh')]);
  return { kind: 'install', commands };
}

/** Root, and apt-get on PATH: what installing needs. */
export function canInstall(env: Record<string, string | undefined>, uid: number): boolean {
  return uid === 0 && onPath('apt-get', [env.PATH ?? '', ...SBIN].join(':'));
}
