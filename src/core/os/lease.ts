/**
 * Every lock file of ours is a lease. Its holder names its host, pid, start time and token; a
 * holder that keeps a lock for long (a run's keeper) renews it every `renewMs` by rewriting it.
 * On its own host a holder is judged by the process table, at once. On another host, where its pid
 * means nothing, it is judged by its lease: alive while the lock file was written less than
 * `durationMs + graceMs` ago. That age is read on the file system's own clock (the mtime its file
 * server stamps, against the mtime of a file the reader has just written beside it), never one
 * host's clock against another's: hosts' clocks drift apart, one file server stamps both files.
 * The grace covers mtime granularity (a second on some servers) and a renewal delayed by a busy host.
 * The decisions are pure, tested as tables in test/unit/lease.test.ts.
 */
import type { HostId } from './host.js';

export interface LeaseTimes {
  renewMs: number;
  durationMs: number;
  graceMs: number;
}

export const LEASE: LeaseTimes = { renewMs: 2_000, durationMs: 10_000, graceMs: 3_000 };

/**
 * What a reader can say of a lock's holder: `alive` or `gone` (on this host, from the process
 * table, or gone for certain: an earlier boot, or released), `fresh` or `expired` (on another host,
 * from its lease).
 */
export type HolderVerdict = 'alive' | 'gone' | 'fresh' | 'expired';

export interface HolderFacts {
  relation: 'here' | 'rebooted' | 'elsewhere';
  /** On this host: whether its process (pid and start time) lives. */
  processAlive: boolean;
  /** The holder wrote that it let go (a keeper whose run ended, on its way out). */
  released: boolean;
  /** The lock file's age on the file system's clock. */
  ageMs: number;
}

export function judgeHolder(f: HolderFacts, times: LeaseTimes = LEASE): HolderVerdict {
  if (f.relation === 'here') return f.processAlive ? 'alive' : 'gone';
  if (f.relation === 'rebooted' || f.released) return 'gone';
  return f.ageMs <= times.durationMs + times.graceMs ? 'fresh' : 'expired';
}

/**
 * Whether a lock so judged may be taken over. A holder gone is gone; a lease expired on another
 * host may be taken only where what the lock guards can be reached from here (`remote`): a Slurm
 * run's job, a short lock's file section; never a run whose processes live on that host.
 */
export function mayTakeOver(verdict: HolderVerdict, remote: boolean): boolean {
  return verdict === 'gone' || (verdict === 'expired' && remote);
}

/** A holder's side of its lease. */
export type HoldState = 'held' | 'lost' | 'released';

/**
 * One step of a holder's renewal: what the lock file says now (`namesUs`: it still names our
 * token) and how long since our last renewal. `renew` rewrites the lease; `detach` lets go of what
 * the lock guards without touching it (another process holds the lock now).
 */
export function renewalStep(state: HoldState, namesUs: boolean, sinceRenewalMs: number, times: LeaseTimes = LEASE): { state: HoldState; action: 'renew' | 'wait' | 'detach' | 'none' } {
  if (state !== 'held') return { state, action: 'none' };
  if (!namesUs) return { state: 'lost', action: 'detach' };
  return { state, action: sinceRenewalMs >= times.renewMs ? 'renew' : 'wait' };
}

/** Who holds a lock, as its file says. */
export interface LockHolder {
  pid: number;
  start_time: string | null;
  token: string;
  /** When it took the lock (its own clock). */
  since: string;
  /** Absent in locks written before hosts were named: this host's. */
  host?: HostId;
  /** When it last renewed the lease (its own clock: for people, not for judging). */
  renewed_at?: string;
  /** It let go, and exits. */
  released?: boolean;
}
