/**
 * Replacing a shared file so that a reader, in this process or another server sharing RL_HOME,
 * sees the old content or the new, never half of it: a temp file beside it, then a rename. The
 * temp file is flushed to disk first (fsync) unless the caller says the write need not survive a
 * power cut: on a host busy starting runs a flush takes 10 to 20 ms, which a run's record pays
 * at every phase of its start-up (docs/architecture.md, "A keeper per run").
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';

export function writeAtomically(path: string, text: string, flush = true): void {
  const temp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const fd = openSync(temp, 'w', 0o600);
  try {
    try {
      writeSync(fd, text);
      if (flush) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (err) {
    // A full disk fails the write: its part-written temp file goes, the file stays as it was.
    rmSync(temp, { force: true });
    throw err;
  }
}
