/**
 * Lock files shared by every server process on the host (they may share RL_HOME). A lock names
 * its holder by pid, process start time and a token (two runtimes in one process differ by
 * token); a lock whose holder process is gone is stale and may be taken over. Creation is atomic
 * (a complete file hard-linked into place), so a lock is never seen half-written.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { isSameProcess, processStartTime } from './processTable.js';

export interface LockHolder {
  pid: number;
  start_time: string | null;
  token: string;
  since: string;
}

const OWN_START_TIME = processStartTime(process.pid) ?? null;

function readHolder(path: string): LockHolder | undefined {
  try {
    const value = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockHolder>;
    if (typeof value.pid === 'number' && typeof value.token === 'string') {
      return { pid: value.pid, start_time: value.start_time ?? null, token: value.token, since: String(value.since ?? '') };
    }
  } catch {
    // Missing or unreadable: no holder.
  }
  return undefined;
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

export class FileLock {
  /** A lock handed over to this process (a run's keeper) names its token; a new lock draws one. */
  constructor(
    readonly path: string,
    readonly token = randomBytes(8).toString('hex'),
  ) {}

  /** True while the lock file names this lock object. */
  isHeld(): boolean {
    return readHolder(this.path)?.token === this.token;
  }

  /** Takes the lock unless a live holder has it; a stale lock is taken over. Never waits. */
  tryAcquire(): boolean {
    const temp = `${this.path}.${process.pid}.${randomBytes(4).toString('hex')}`;
    const holder: LockHolder = { pid: process.pid, start_time: OWN_START_TIME, token: this.token, since: new Date().toISOString() };
    try {
      // Inside the try: a write a full disk cut short leaves no temp file behind.
      writeFileSync(temp, JSON.stringify(holder));
      for (let attempt = 0; attempt < 3; attempt++) {
        try {
          linkSync(temp, this.path);
          return true;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        }
        const current = readHolder(this.path);
        if (current?.token === this.token) return true;
        if (current && isSameProcess(current.pid, current.start_time)) return false;
        this.removeStale(current);
      }
      return false;
    } finally {
      unlinkQuietly(temp);
    }
  }

  /**
   * Waits (synchronously: the section it guards is a few file operations) until the lock is
   * free, taking stale locks over. Throws after `timeoutMs`.
   */
  acquireBlocking(timeoutMs: number): void {
    const deadline = Date.now() + timeoutMs;
    for (let pause = 1; !this.tryAcquire(); pause = Math.min(pause * 2, 50)) {
      if (Date.now() > deadline) {
        const holder = readHolder(this.path);
        throw new Error(`${this.path} is held by pid ${holder?.pid ?? '?'} for more than ${timeoutMs} ms`);
      }
      Atomics.wait(sleeper, 0, 0, pause);
    }
  }

  release(): void {
    if (this.isHeld()) unlinkQuietly(this.path);
  }

  /**
   * Names another live process as the holder (a run's keeper, just spawned), by `token`, in one
   * rename so the lock is never free meanwhile. False when this lock was not held.
   */
  handTo(pid: number, startTime: string | null, token: string): boolean {
    if (!this.isHeld()) return false;
    const holder: LockHolder = { pid, start_time: startTime, token, since: new Date().toISOString() };
    const temp = `${this.path}.${process.pid}.${randomBytes(4).toString('hex')}`;
    try {
      writeFileSync(temp, JSON.stringify(holder));
      renameSync(temp, this.path);
    } finally {
      unlinkQuietly(temp);
    }
    return true;
  }

  /** The live process holding the lock, if any. */
  holder(): number | undefined {
    const current = readHolder(this.path);
    return current && isSameProcess(current.pid, current.start_time) ? current.pid : undefined;
  }

  /**
   * Moves a stale lock aside rather than unlinking it, then checks that what moved is the lock
   * judged stale: if another server replaced it in the meantime, its lock is put back.
   */
  private removeStale(judged: LockHolder | undefined): void {
    const aside = `${this.path}.stale.${process.pid}.${randomBytes(4).toString('hex')}`;
    try {
      renameSync(this.path, aside);
    } catch {
      return;
    }
    if (readHolder(aside)?.token !== judged?.token) {
      try {
        linkSync(aside, this.path);
      } catch {
        // Someone created a new lock already; theirs stands.
      }
    }
    unlinkQuietly(aside);
  }
}
