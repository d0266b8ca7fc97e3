/**
 * The files through which the server and a Slurm run's job script start and follow its steps, in
 * the run's `slurm/` directory (on the file system the nodes share):
 *
 *   job.sh            the job script as submitted; batch.out its own output
 *   <step>.start      the server asks for the step (its previous one is ready); the script takes it
 *                     by renaming it <step>.started, or the server's stop withdraws it first
 *                     (<step>.withdrawn): one rename wins, so a step is either started or not
 *   <step>.env        its environment with its keys (0600), written just before .start; the step
 *                     reads it and removes it, and a release removes one never read
 *   <step>.exit       srun's exit status, written by the script when the step ends
 */
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SlurmStep } from '../../seams/record.js';

export const JOB_SCRIPT = 'job.sh';
export const BATCH_OUTPUT = 'batch.out';

export const stepFile = (step: Pick<SlurmStep, 'dir' | 'name'>, kind: 'start' | 'started' | 'withdrawn' | 'env' | 'exit'): string => join(step.dir, `${step.name}.${kind}`);

/** A shell word that is `text` exactly (single quotes; a quote inside closes, escapes and reopens). */
export const shellWord = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;

const SHELL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Asks the job's script for the step: its environment first (0600, renamed into place whole), then
 * the request. Synchronous, so nothing runs between the supervisor's state check and the request.
 */
export function requestStart(step: SlurmStep, env: Record<string, string>): void {
  const lines = Object.entries(env)
    .filter(([name]) => SHELL_NAME.test(name))
    .map(([name, value]) => `export ${name}=${shellWord(value)}\n`);
  const envFile = stepFile(step, 'env');
  writeFileSync(`${envFile}.tmp`, lines.join(''), { mode: 0o600 });
  renameSync(`${envFile}.tmp`, envFile);
  writeFileSync(stepFile(step, 'start'), '');
}

/** Takes a request the script has not taken yet back; true when it was not (the step will never start). */
export function withdrawStart(step: SlurmStep): boolean {
  try {
    renameSync(stepFile(step, 'start'), stepFile(step, 'withdrawn'));
    return true;
  } catch {
    return false;
  }
}

/** What the script recorded of the step's end: srun's exit status, `withdrawn` when it never started, undefined while it runs. */
export function stepEnded(step: SlurmStep): number | 'withdrawn' | undefined {
  if (existsSync(stepFile(step, 'withdrawn'))) return 'withdrawn';
  try {
    const status = Number(readFileSync(stepFile(step, 'exit'), 'utf8').trim());
    return Number.isInteger(status) ? status : undefined;
  } catch {
    return undefined;
  }
}

/** Environment files no step read (the job ended first): they hold keys. */
export function removeUnreadEnvFiles(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) if (name.endsWith('.env') || name.endsWith('.env.tmp')) rmSync(join(dir, name), { force: true });
}
