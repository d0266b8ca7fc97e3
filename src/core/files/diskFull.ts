/**
 * RL_HOME on a full file system: every write fails with ENOSPC (EDQUOT over a quota). A tool call
 * says so with the fix instead of an internal error; a job that would write for minutes is refused
 * before it starts. Reads go on: they need no space.
 */
import { statfsSync } from 'node:fs';
import { UserError } from '../errors.js';

/** Below this much free space a new test, evaluation or run is refused: its first files would not fit. */
export const MIN_FREE_BYTES = 1024 * 1024;

export function isDiskFull(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

export function diskFullError(home: string): UserError {
  return new UserError(
    `RL_HOME's file system is full: free space on the file system holding ${home} (see \`df -h ${home}\`: remove old runs, evaluations or inference tests there, or other files), then call again. Reading runs, logs and results still works.`,
    { rl_home: home, cause: 'ENOSPC' },
  );
}

/** Refuses with diskFullError() when the file system holding `home` has less than MIN_FREE_BYTES available. */
export function refuseWhenFull(home: string): void {
  let free: number;
  try {
    const stats = statfsSync(home);
    free = stats.bavail * stats.bsize;
  } catch {
    // Not there yet, or statfs unsupported: the write itself will say.
    return;
  }
  if (free < MIN_FREE_BYTES) throw diskFullError(home);
}
