/**
 * Slurm's client commands as the server runs them: sbatch, squeue, scontrol, scancel, sacct, srun.
 * Each gets a small environment (the job inherits sbatch's, and slurmctld keeps it on its disk, so
 * no key may be in it) with SLURM_CONF passed through, and a deadline: with the controller down
 * every command retries for 9-18 s before it fails. Parsing is apart (jobState.ts) and pure.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { childProcess } from '../../core/onDemand.js';

const ALLOWED = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LANGUAGE', 'TZ', 'TMPDIR', 'SLURM_CONF'];
const COMMAND_TIMEOUT_MS = 30_000;

/** What Slurm's commands (and so a submitted job) see of the server's environment: no key, ever. */
export function slurmEnv(processEnv: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(processEnv)) {
    if (value !== undefined && (ALLOWED.includes(name) || name.startsWith('LC_'))) env[name] = value;
  }
  return env;
}

export interface CommandResult {
  /** The exit code; `missing` when the program is not installed, `timeout` past the deadline. */
  code: number | 'missing' | 'timeout';
  stdout: string;
  stderr: string;
}

/** Runs one Slurm command; never throws. */
export function runSlurm(env: Record<string, string>, command: string, args: readonly string[], timeoutMs = COMMAND_TIMEOUT_MS): Promise<CommandResult> {
  return new Promise((resolve) => {
    childProcess().execFile(command, args, { env, encoding: 'utf8', timeout: timeoutMs, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
      if (err === null) return resolve({ code: 0, stdout, stderr });
      const e = err as NodeJS.ErrnoException & { code?: unknown; killed?: boolean };
      if (e.code === 'ENOENT') return resolve({ code: 'missing', stdout: '', stderr: `${command}: command not found` });
      if (e.killed) return resolve({ code: 'timeout', stdout, stderr: `${command} did not answer within ${timeoutMs / 1000} s` });
      resolve({ code: typeof e.code === 'number' ? e.code : 1, stdout, stderr });
    });
  });
}

/** The first line Slurm printed about a failure, without its program prefix's noise. */
export function failureText(result: CommandResult): string {
  const lines = `${result.stderr}\n${result.stdout}`.split('\n').map((l) => l.trim()).filter(Boolean);
  // sbatch prints the specific error first, then "Batch job submission failed: <the same, in general>".
  return lines[0] ?? (typeof result.code === 'number' ? `exit code ${result.code}` : result.code);
}

/** Which of `programs` are on the environment's PATH. */
export function missingPrograms(env: Record<string, string>, programs: readonly string[]): string[] {
  const dirs = (env.PATH ?? '').split(delimiter).filter(Boolean);
  return programs.filter(
    (program) =>
      !dirs.some((dir) => {
        try {
          accessSync(join(dir, program), constants.X_OK);
          return true;
        } catch {
          return false;
        }
      }),
  );
}

/** Submits a script; the job id, or the reason Slurm gave. */
export async function submitJob(env: Record<string, string>, scriptPath: string): Promise<{ jobId: string } | { error: string }> {
  const result = await runSlurm(env, 'sbatch', ['--parsable', scriptPath], 60_000);
  // --parsable prints "<id>" or "<id>;<cluster>".
  const jobId = result.stdout.trim().split(';')[0] ?? '';
  return result.code === 0 && /^\d+$/.test(jobId) ? { jobId } : { error: failureText(result) };
}

/** squeue's line for a job (any state): `<state>|<reason>|<nodes>`; `unknown` once Slurm forgot it; undefined when it cannot be asked. */
export async function queueLine(env: Record<string, string>, jobId: string): Promise<string | 'unknown' | undefined> {
  const result = await runSlurm(env, 'squeue', ['-h', '-j', jobId, '-t', 'all', '-o', '%T|%r|%N']);
  if (result.code === 0) return result.stdout.trim() === '' ? 'unknown' : result.stdout.trim().split('\n')[0];
  return /Invalid job id/i.test(result.stderr) ? 'unknown' : undefined;
}

/** sacct's job row `<state>|<reason>|<exit code>`, where accounting keeps one; undefined otherwise. */
export async function accountingLine(env: Record<string, string>, jobId: string): Promise<string | undefined> {
  const result = await runSlurm(env, 'sacct', ['-j', jobId, '-X', '-n', '-P', '-o', 'State,Reason,ExitCode']);
  const line = result.stdout.trim().split('\n')[0];
  return result.code === 0 && line ? line : undefined;
}

/** The job's running steps as `<job>.<step>|<name>|` lines; undefined when Slurm cannot be asked. */
export async function stepLines(env: Record<string, string>, jobId: string): Promise<string[] | undefined> {
  const result = await runSlurm(env, 'squeue', ['-h', '-s', '-j', jobId, '-O', 'StepId:|,StepName:|']);
  if (result.code !== 0) return /Invalid job id/i.test(result.stderr) ? [] : undefined;
  return result.stdout.split('\n').filter((l) => l.trim() !== '');
}

/** The address a node is reached at (its NodeAddr: node names need not resolve). */
export async function nodeAddress(env: Record<string, string>, node: string): Promise<string | undefined> {
  const result = await runSlurm(env, 'scontrol', ['-o', 'show', 'node', node]);
  return result.code === 0 ? /(?:^|\s)NodeAddr=(\S+)/.exec(result.stdout)?.[1] : undefined;
}

/** scancel with `args`; the failure text, or undefined when it was accepted. */
export async function cancel(env: Record<string, string>, args: readonly string[]): Promise<string | undefined> {
  const result = await runSlurm(env, 'scancel', args);
  return result.code === 0 ? undefined : failureText(result);
}

/** Active jobs of this user named `name` (a submission the server did not live to record). */
export async function jobsNamed(env: Record<string, string>, name: string): Promise<string[] | undefined> {
  const result = await runSlurm(env, 'squeue', ['-h', '--me', '-n', name, '-o', '%i']);
  return result.code === 0 ? result.stdout.split('\n').map((l) => l.trim()).filter(Boolean) : undefined;
}
