/**
 * The values a Slurm job is asked with, as sbatch reads them: a time limit, an amount of memory,
 * a partition or account name. Checked before they reach a job script: a bad one is refused with
 * the accepted forms, never written into a `#SBATCH` line.
 */

/** sbatch --time: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, or UNLIMITED. */
const TIME_LIMIT = /^(?:\d+(?::\d{1,2}){0,2}|\d+-\d{1,2}(?::\d{1,2}){0,2}|UNLIMITED|INFINITE)$/;
const MEMORY = /^(\d+)([KMGT]?)B?$/i;
/** Partition lists (a,b) and account names as Slurm allows them, nothing a shell or sbatch would read otherwise. */
const NAME = /^[A-Za-z0-9_.+-]+(?:,[A-Za-z0-9_.+-]+)*$/;

export const TIME_LIMIT_FORMS = 'minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED';
export const MEMORY_FORMS = 'a whole number with an optional unit K, M, G or T (M when none), e.g. 4G or 500M';

export function isTimeLimit(text: string): boolean {
  return TIME_LIMIT.test(text);
}

/** Megabytes (sbatch's unit), or undefined when `text` is not an amount of memory. */
export function memoryMb(text: string): number | undefined {
  const m = MEMORY.exec(text.trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  const factor = { K: 1 / 1024, '': 1, M: 1, G: 1024, T: 1024 * 1024 }[m[2]!.toUpperCase() as 'K' | '' | 'M' | 'G' | 'T'];
  const mb = Math.ceil(n * factor);
  return mb > 0 && Number.isSafeInteger(mb) ? mb : undefined;
}

export function isSlurmName(text: string): boolean {
  return text.length <= 200 && NAME.test(text);
}
