/**
 * A private single-node Slurm cluster (scripts/slurm-cluster.sh) for the tests that need a real
 * one: started in a fresh state directory, stopped when the test file ends, and a way to find
 * any process of it left behind. The placement's tests may run against a cluster of one's own
 * instead (`clusterForTests`, RL_TEST_SLURM_CONF): it is used, never started or stopped.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after } from 'node:test';
import { promisify } from 'node:util';
import { REPO_ROOT, tempDir } from './tmp.js';

const SCRIPT = join(REPO_ROOT, 'scripts', 'slurm-cluster.sh');
const execFileP = promisify(execFile);

/** Why Slurm cannot run here (which programs are missing), or undefined when it can. */
export function slurmMissing(opts: { accounting?: boolean } = {}): string | undefined {
  // Debian puts the daemons in /usr/sbin, which a developer's PATH may lack.
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin'];
  const programs = ['slurmctld', 'slurmd', 'sbatch', 'munged', ...(opts.accounting ? ['slurmdbd', 'mariadbd'] : [])];
  const missing = programs.filter((p) => !dirs.some((d) => d && existsSync(join(d, p))));
  if (missing.length === 0) return undefined;
  return `Slurm is not installed here (no ${missing.join(', ')}); scripts/install-slurm.sh installs it`;
}

export interface SlurmCluster {
  /** Its state directory: config, logs, pid files, spool; empty for a cluster of one's own. */
  dir: string;
  /** What the script printed to use it: SLURM_CONF, SLURM_TEST_PARTITION, SLURM_TEST_NODE, ... */
  vars: Record<string, string>;
  /** This process's environment with `vars`: what Slurm's commands need. */
  env: Record<string, string>;
  /** Runs a Slurm command against the cluster; rejects on a nonzero exit. */
  run(command: string, args: string[]): Promise<string>;
  /** Stops every daemon and job process of it (idempotent). */
  stop(): Promise<void>;
}

/** A cluster of its own, up and running a step; stopped when the test file ends, even on failure. */
export async function startSlurmCluster(opts: { accounting?: boolean } = {}): Promise<SlurmCluster> {
  // Registered before tempDir's removal, so it runs first: the script finds its pid files.
  let dir = '';
  const stop = async () => {
    if (dir) await execFileP('bash', [SCRIPT, 'stop', dir], { timeout: 60_000 });
  };
  after(stop);
  dir = tempDir('rlmcp-slurm-');
  const { stdout } = await execFileP('bash', [SCRIPT, 'start', dir, ...(opts.accounting ? ['--accounting'] : [])], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  const vars = Object.fromEntries(
    stdout
      .trim()
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  const env = { ...(process.env as Record<string, string>), ...vars };
  const run = async (command: string, args: string[]) =>
    (await execFileP(command, args, { env, encoding: 'utf8', timeout: 60_000 })).stdout;
  return { dir, vars, env, run, stop };
}

/**
 * Live processes of the cluster in `dir`: the daemons (their argv names the directory, or their
 * environment carries the script's marker, as slurmstepd inherits it) and the jobs' own (their
 * working directory lies under it, or their environment names its slurm.conf).
 */
export function clusterProcesses(dir: string): number[] {
  const marks = [`SLURM_CLUSTER_STATE_DIR=${dir}`, `SLURM_CONF=${join(dir, 'slurm.conf')}`];
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      if (argv.includes(dir) || cwd === dir || cwd.startsWith(`${dir}/`) || marks.some((m) => environ.includes(m))) found.push(pid);
    } catch {
      // Gone meanwhile, or a kernel thread.
    }
  }
  return found;
}

/**
 * A cluster of one's own, named by RL_TEST_SLURM_CONF (its slurm.conf), with RL_TEST_SLURM_PARTITION
 * (default: the cluster's default partition) and RL_TEST_SLURM_ACCOUNTING=1 when sacct answers.
 */
function ownCluster(conf: string): SlurmCluster {
  const vars: Record<string, string> = {
    SLURM_CONF: conf,
    ...(process.env.RL_TEST_SLURM_PARTITION ? { SLURM_TEST_PARTITION: process.env.RL_TEST_SLURM_PARTITION } : {}),
    SLURM_TEST_ACCOUNTING: process.env.RL_TEST_SLURM_ACCOUNTING === '1' ? '1' : '0',
  };
  const env = { ...(process.env as Record<string, string>), ...vars };
  const run = async (command: string, args: string[]) => (await execFileP(command, args, { env, encoding: 'utf8', timeout: 60_000 })).stdout;
  return { dir: '', vars, env, run, stop: () => Promise.resolve() };
}

/** Why the Slurm placement's tests cannot run here; a cluster of one's own needs only the client commands. */
export function slurmTestsCannotRun(opts: { accounting?: boolean } = {}): string | undefined {
  if (!process.env.RL_TEST_SLURM_CONF) return slurmMissing(opts);
  const dirs = (process.env.PATH ?? '').split(':');
  const missing = ['sbatch', 'squeue', 'scancel', 'scontrol', 'srun'].filter((p) => !dirs.some((d) => d && existsSync(join(d, p))));
  return missing.length > 0 ? `Slurm's ${missing.join(', ')} not found on PATH` : undefined;
}

/** The cluster the placement's tests use: one's own (RL_TEST_SLURM_CONF), else a private one for the file. */
export function clusterForTests(opts: { accounting?: boolean } = {}): Promise<SlurmCluster> {
  const conf = process.env.RL_TEST_SLURM_CONF;
  return conf ? Promise.resolve(ownCluster(conf)) : startSlurmCluster(opts);
}
