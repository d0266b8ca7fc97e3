/**
 * Lock files shared by every process of ours that shares RL_HOME, on this host and on others (a
 * cluster's login nodes over NFS). A lock is a lease (lease.ts): it names its holder by host, pid,
 * process start time and token (two runtimes in one process differ by token); a holder on this host
 * is judged by the process table, one on another host by the lease's age. Creation is atomic (a
 * complete file hard-linked into place: link fails if the name exists, on NFS too), so a lock is
 * never seen half-written and of two processes taking it only one wins. A lock whose holder is
 * gone (or whose lease expired, where that may be taken over) is moved aside by rename, then taken.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, closeSync, fstatSync, linkSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { hostRelation, THIS_HOST } from './host.js';
import { type HolderVerdict, judgeHolder, type LockHolder, mayTakeOver } from './lease.js';
import { isSameProcess, processStartTime } from './processTable.js';

export type { LockHolder } from './lease.js';

const OWN_START_TIME = processStartTime(process.pid) ?? null;

/** A lock file as read: its holder, and when its file server last wrote it. */
interface LeaseFile {
  holder: LockHolder;
  mtimeMs: number;
}

/** A lock's holder as judged from here, with the lease's age on the file system's clock. */
export interface JudgedHolder {
  holder: LockHolder;
  verdict: HolderVerdict;
  ageMs: number;
}

/**
 * Read through one open file and fstat'ed through it: on NFS, an open revalidates what the client
 * cached (close-to-open consistency), so the mtime is the server's latest.
 */
function readLease(path: string): LeaseFile | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const value = JSON.parse(readFileSync(fd, 'utf8')) as Partial<LockHolder>;
    if (typeof value.pid !== 'number' || typeof value.token !== 'string') return undefined;
    const holder: LockHolder = { ...value, pid: value.pid, start_time: value.start_time ?? null, token: value.token, since: String(value.since ?? '') };
    return { holder, mtimeMs: fstatSync(fd).mtimeMs };
  } catch {
    // Unreadable: no holder.
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

/** How far a file system's clock is ahead of this process's, by device: measured again after a while. */
const clockOffsets = new Map<number, { offsetMs: number; measuredAt: number }>();
const CLOCK_REMEASURE_MS = 30_000;

/** Now on the clock of the file system holding `dir`: the mtime of a file written there this moment. */
export function fileSystemNow(dir: string): number {
  const device = statSync(dir, { throwIfNoEntry: false })?.dev ?? -1;
  const known = clockOffsets.get(device);
  if (known && Date.now() - known.measuredAt < CLOCK_REMEASURE_MS) return Date.now() + known.offsetMs;
  const probe = join(dir, `.clock.${process.pid}.${randomBytes(4).toString('hex')}`);
  try {
    const fd = openSync(probe, 'w');
    try {
      writeFileSync(fd, '.');
      const offsetMs = fstatSync(fd).mtimeMs - Date.now();
      clockOffsets.set(device, { offsetMs, measuredAt: Date.now() });
      return Date.now() + offsetMs;
    } finally {
      closeSync(fd);
      unlinkQuietly(probe);
    }
  } catch {
    // A directory we cannot write to: this host's clock is all there is.
    return Date.now();
  }
}

function judge(path: string, file: LeaseFile): JudgedHolder {
  const { holder } = file;
  const relation = hostRelation(holder.host);
  const ageMs = relation === 'elsewhere' ? fileSystemNow(dirname(path)) - file.mtimeMs : 0;
  const facts = { relation, processAlive: relation === 'here' && isSameProcess(holder.pid, holder.start_time), released: holder.released === true, ageMs };
  return { holder, verdict: judgeHolder(facts), ageMs };
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

export interface LockOptions {
  /** An append-only file where each taking, hand-over and release of the lock is written (a run's keepers). */
  history?: string;
}

export class FileLock {
  /** A lock handed over to this process (a run's keeper) names its token; a new lock draws one. */
  constructor(
    readonly path: string,
    readonly token = randomBytes(8).toString('hex'),
    private readonly options: LockOptions = {},
  ) {}

  /** True while the lock file names this lock object. */
  isHeld(): boolean {
    return readLease(this.path)?.holder.token === this.token;
  }

  /**
   * Takes the lock unless its holder lives (on this host) or its lease is fresh (on another); a
   * lock whose holder is gone is taken over, and one whose lease expired too when `remote` (what
   * it guards can be reached from this host). Never waits.
   */
  tryAcquire(remote = true): boolean {
    const temp = `${this.path}.${process.pid}.${randomBytes(4).toString('hex')}`;
    try {
      // Inside the try: a write a full disk cut short leaves no temp file behind.
      writeFileSync(temp, JSON.stringify(this.holderFor(process.pid, OWN_START_TIME, this.token)));
      let judged: JudgedHolder | undefined;
      for (let attempt = 0; attempt < 3; attempt++) {
        try {
          linkSync(temp, this.path);
          this.note('acquired', judged && { host: judged.holder.host?.hostname, pid: judged.holder.pid, verdict: judged.verdict, lease_age_ms: Math.round(judged.ageMs) });
          return true;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        }
        const current = readLease(this.path);
        if (current?.holder.token === this.token) return true;
        if (current) {
          judged = judge(this.path, current);
          if (!mayTakeOver(judged.verdict, remote)) return false;
        }
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
        const holder = readLease(this.path)?.holder;
        throw new Error(`${this.path} is held by pid ${holder?.pid ?? '?'}${holder?.host ? ` on ${holder.host.hostname}` : ''} for more than ${timeoutMs} ms`);
      }
      Atomics.wait(sleeper, 0, 0, pause);
    }
  }

  release(): void {
    if (!this.isHeld()) return;
    unlinkQuietly(this.path);
    this.note('released');
  }

  /**
   * Renews the lease: the file rewritten in one rename, so its file server stamps a new mtime.
   * False when the lock no longer names this lock object (taken over: let go of what it guards).
   * The check and the rename are microseconds apart, and only a holder already a whole lease late
   * can have been taken over in between.
   */
  renew(released = false): boolean {
    const current = readLease(this.path)?.holder;
    if (current?.token !== this.token) return false;
    this.replace({ ...current, host: THIS_HOST, renewed_at: new Date().toISOString(), ...(released ? { released: true } : {}) });
    if (released) this.note('released');
    return true;
  }

  /**
   * Names another live process of this host as the holder (a run's keeper, just spawned), by
   * `token`, in one rename so the lock is never free meanwhile. False when this lock was not held.
   */
  handTo(pid: number, startTime: string | null, token: string): boolean {
    if (!this.isHeld()) return false;
    this.replace(this.holderFor(pid, startTime, token));
    this.note('handed', { pid, token });
    return true;
  }

  /** The holder and how it stands from here; undefined when nothing holds the lock. */
  judged(): JudgedHolder | undefined {
    const file = readLease(this.path);
    return file && judge(this.path, file);
  }

  /** The holder's pid while it lives (this host) or its lease is fresh (another host). */
  holder(): number | undefined {
    const j = this.judged();
    return j && (j.verdict === 'alive' || j.verdict === 'fresh') ? j.holder.pid : undefined;
  }

  private holderFor(pid: number, startTime: string | null, token: string): LockHolder {
    const at = new Date().toISOString();
    return { pid, start_time: startTime, token, since: at, host: THIS_HOST, renewed_at: at };
  }

  private replace(holder: LockHolder): void {
    const temp = `${this.path}.${process.pid}.${randomBytes(4).toString('hex')}`;
    try {
      writeFileSync(temp, JSON.stringify(holder));
      renameSync(temp, this.path);
    } finally {
      unlinkQuietly(temp);
    }
  }

  /** A line of the lock's history, when it keeps one; a history that cannot be written loses the line, not the lock. */
  private note(event: 'acquired' | 'handed' | 'released', detail?: Record<string, unknown>): void {
    if (this.options.history === undefined) return;
    const line = { at: new Date().toISOString(), event, host: THIS_HOST.hostname, pid: process.pid, token: this.token, ...(detail ? { detail } : {}) };
    try {
      appendFileSync(this.options.history, `${JSON.stringify(line)}\n`);
    } catch {
      // Full disk, or the directory went with its run.
    }
  }

  /**
   * Moves a stale lock aside rather than unlinking it, then checks that what moved is the lock
   * judged stale (same token, not renewed since): if its holder renewed it or another process
   * replaced it in the meantime, it is put back.
   */
  private removeStale(judged: LeaseFile | undefined): void {
    const aside = `${this.path}.stale.${process.pid}.${randomBytes(4).toString('hex')}`;
    try {
      renameSync(this.path, aside);
    } catch {
      return;
    }
    const moved = readLease(aside);
    if (moved?.holder.token !== judged?.holder.token || moved?.mtimeMs !== judged?.mtimeMs) {
      try {
        linkSync(aside, this.path);
      } catch {
        // Someone created a new lock already; theirs stands.
      }
    }
    unlinkQuietly(aside);
  }
}
