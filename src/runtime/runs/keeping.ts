/**
 * Where a run lives and who keeps it, as this host can tell: its keeper from the run's lock (a
 * keeper of this host from the process table, one of another host from its lease), its processes'
 * host from the record. A local run of another host is never judged from here: its processes
 * cannot be seen, and the answer says so, with what is known (docs/architecture.md, "Several hosts").
 */
import { hostName, hostRelation, THIS_HOST } from '../../core/os/host.js';
import type { FileLock } from '../../core/os/fileLock.js';
import type { RunRecord } from './seams/record.js';

/** `alive`: a keeper of this host, in its process table; `lease_fresh` / `lease_expired`: a keeper of another host, by its lease; `none`. */
export const KEEPER_STATES = ['alive', 'lease_fresh', 'lease_expired', 'none'] as const;
export type KeeperState = (typeof KEEPER_STATES)[number];

export interface KeeperView {
  state: KeeperState;
  host?: string;
  pid?: number;
  /** When it last renewed its lease, by its own host's clock. */
  lease_renewed_at?: string;
  /** How long ago the lease was written, on the shared file system's clock (another host's keeper). */
  lease_age_seconds?: number;
}

export interface WhereView {
  /** The host its processes run on (a local run), or its Slurm job (and node). */
  lives_on: string;
  /** The host answering. */
  seen_from: string;
  keeper: KeeperView;
  /** Set when this host cannot see the run's processes: what the answer rests on. */
  note?: string;
}

/** The run's keeper as its lock says, judged from this host. */
export function keeperView(lock: FileLock): KeeperView {
  const judged = lock.judged();
  if (judged === undefined) return { state: 'none' };
  const { holder, verdict, ageMs } = judged;
  const state: KeeperState = verdict === 'alive' ? 'alive' : verdict === 'fresh' ? 'lease_fresh' : verdict === 'expired' ? 'lease_expired' : 'none';
  if (state === 'none') return { state };
  const remote = state !== 'alive';
  return {
    state,
    host: hostName(holder.host),
    pid: holder.pid,
    ...(remote && holder.renewed_at !== undefined ? { lease_renewed_at: holder.renewed_at } : {}),
    ...(remote ? { lease_age_seconds: Math.round(ageMs / 100) / 10 } : {}),
  };
}

/** Whether the run's processes live on another host (a local run created elsewhere). */
export const livesElsewhere = (record: Pick<RunRecord, 'placement' | 'origin'>): boolean => record.placement === 'local' && hostRelation(record.origin) === 'elsewhere';

/** Where the run lives and who keeps it; a note when this host cannot see its processes. */
export function whereView(record: RunRecord, keeper: KeeperView): WhereView {
  const lives_on = record.placement === 'slurm' ? `Slurm job ${record.slurm_job_id ?? '(not submitted)'}${record.host ? ` on ${record.host}` : ''}` : hostName(record.origin);
  const view: WhereView = { lives_on, seen_from: THIS_HOST.hostname, keeper };
  if (!livesElsewhere(record)) return view;
  const kept =
    keeper.state === 'lease_fresh'
      ? `kept by its keeper there (pid ${keeper.pid}, lease renewed ${keeper.lease_age_seconds} s ago)`
      : keeper.state === 'lease_expired'
        ? `nothing there is known to keep them: its keeper's lease expired (written ${keeper.lease_age_seconds} s ago, last renewed at ${keeper.lease_renewed_at ?? 'an unknown time'} by that host's clock)`
        : 'no keeper holds its lock';
  view.note = `This host (${THIS_HOST.hostname}) cannot see the run's processes: they live on ${lives_on}, ${kept}. Status, steps and spend are the record's as last written there.`;
  return view;
}
