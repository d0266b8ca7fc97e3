/**
 * The long jobs of a server (evaluations, inference tests), kept by one registry per kind over one
 * directory layout, RL_HOME/<kind's folder>/<id>/: result.json (the job's answer: written at an
 * evaluation's start and at every job's end), owner.json (the server process that runs it) and,
 * once a cancel was asked, cancel.request. A job is in memory in the server that runs it, and on
 * disk for every server sharing RL_HOME.
 *
 * Cancelling: the server that runs a job stops it itself and answers once its processes are gone.
 * Any other server records the cancel on disk; the owner checks for it every second while it runs
 * jobs and stops the job; the asking server answers `stopped` only once result.json says
 * cancelled, which the job writes after its processes exited. A cancel nobody carries out (the
 * owner is gone, or does not act in time) is said as such, never as stopped. The same look cancels
 * every job that samples on Tinker once the spend ledger's window total reaches
 * RL_MAX_TOTAL_COST_USD, whoever is connected.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hostRelation, type HostId, THIS_HOST } from '../../core/os/host.js';
import { isSameProcess, processStartTime } from '../../core/os/processTable.js';
import { UserError } from '../../core/errors.js';
import { refuseWhenFull } from '../../core/files/diskFull.js';
import { evaluationsRoot, inferenceTestsRoot, JOB_FILES, newId } from '../../core/files/home.js';
import { isMissing, namedSubdirs, realFileOfChild } from '../../core/files/safePath.js';
import type { CoreServices } from '../../core/services.js';
import type { WaitableJob } from './wait.js';
import { samplingStop } from '../ledger/sampling.js';

export type JobKind = 'evaluation' | 'inference_test';
export type JobStatus = 'running' | 'completed' | 'cancelled';

/** What a registry keeps of a running job. */
export interface Job extends WaitableJob {
  readonly id: string;
  readonly status: JobStatus;
  /** It samples on Tinker: cancelled once the ledger's window total reaches RL_MAX_TOTAL_COST_USD. */
  readonly paid?: boolean;
  cancel(reason: string, graceMs?: number): void;
}

/** A job's ids: 8 lowercase hex characters. */
export const JOB_ID_PATTERN = /^[0-9a-f]{8}$/;

const KINDS: Record<JobKind, { root: (home: string) => string; label: string }> = {
  evaluation: { root: evaluationsRoot, label: 'evaluation' },
  inference_test: { root: inferenceTestsRoot, label: 'inference test' },
};

/** How often an owner looks for cancels other servers recorded. */
const CANCEL_CHECK_MS = 1000;
/** How long a cancel waits for another server to stop the job before saying it has not. */
const REMOTE_CANCEL_WAIT_MS = 20_000;

/** How a cancel went: the job's processes are stopped, or why not (`ended`: the job had finished on its own first). */
export type CancelOutcome = { stopped: true } | { stopped: false; why: string; ended?: boolean };

/** The server process running a job: `host` its hostname, `host_id` with its boot (older owners have the hostname only). */
interface Owner {
  pid: number;
  host: string;
  host_id?: HostId;
  start_time?: string | null;
  started_at: string;
}

const OWN_START_TIME = processStartTime(process.pid) ?? null;

function alive(owner: Owner): boolean | undefined {
  const where = hostRelation(owner.host_id ?? { hostname: owner.host, boot_id: THIS_HOST.boot_id });
  // Another host's process cannot be looked at from here; one of an earlier boot is gone.
  if (where !== 'here') return where === 'rebooted' ? false : undefined;
  return isSameProcess(owner.pid, owner.start_time);
}

export class JobRegistry<J extends Job, O extends { status: string }> {
  private readonly jobs = new Map<string, J>();
  private checking?: NodeJS.Timeout;
  closed = false;

  constructor(
    private readonly core: CoreServices,
    readonly kind: JobKind,
    private readonly keptFinished: number,
  ) {}

  get label(): string {
    return KINDS[this.kind].label;
  }

  get directory(): string {
    return KINDS[this.kind].root(this.core.settings.home);
  }

  dirOf(id: string): string {
    return join(this.directory, id);
  }

  /** A new job's directory, never another job's, with its owner record; refused on a full disk. */
  async create(): Promise<{ id: string; dir: string }> {
    // A job that writes for minutes is refused before it starts, not left failing halfway.
    refuseWhenFull(this.core.settings.home);
    await mkdir(this.directory, { recursive: true });
    for (;;) {
      const id = newId();
      const dir = this.dirOf(id);
      try {
        // Not recursive: an existing directory is another job's id, so its files are never reused.
        await mkdir(dir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw err;
      }
      const owner: Owner = { pid: process.pid, host: THIS_HOST.hostname, host_id: THIS_HOST, start_time: OWN_START_TIME, started_at: new Date().toISOString() };
      await writeFile(join(dir, JOB_FILES.owner), JSON.stringify(owner));
      return { id, dir };
    }
  }

  /** Keeps a started job (the newest `keptFinished` finished ones stay in memory too). */
  add(job: J): void {
    this.jobs.set(job.id, job);
    const finished = this.list().filter((j) => j.status !== 'running');
    for (const j of finished.slice(this.keptFinished)) this.jobs.delete(j.id);
    this.checking ??= setInterval(() => this.carryOutCancels(), CANCEL_CHECK_MS).unref();
  }

  get(id: string): J | undefined {
    return this.jobs.get(id);
  }

  /** This server's jobs, newest first. */
  list(): J[] {
    return [...this.jobs.values()].reverse();
  }

  running(): J[] {
    return this.list().filter((j) => j.status === 'running');
  }

  /** Every job id under RL_HOME, any server's. */
  ids(): Promise<string[]> {
    return namedSubdirs(this.directory, JOB_ID_PATTERN);
  }

  /** Whether the job's directory exists (a job started, by any server). */
  exists(id: string): Promise<boolean> {
    return JOB_ID_PATTERN.test(id) ? stat(this.dirOf(id)).then((s) => s.isDirectory(), () => false) : Promise.resolve(false);
  }

  /** The job's result.json, or undefined when it has none (yet); a damaged one is said. */
  async stored(id: string): Promise<O | undefined> {
    if (!JOB_ID_PATTERN.test(id)) return undefined;
    let text: string;
    try {
      const path = realFileOfChild(this.directory, id, JOB_FILES.result, this.label);
      if (path === undefined) return undefined;
      text = await readFile(path, 'utf8');
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
    try {
      return JSON.parse(text) as O;
    } catch {
      throw new UserError(`The ${this.label} '${id}' left a damaged result.json in ${this.dirOf(id)}; its logs are there; start it again.`);
    }
  }

  /**
   * Cancels a job, run here or by another server sharing RL_HOME; answers once its processes are
   * stopped, or says why they are not.
   */
  async cancel(id: string, reason: string): Promise<CancelOutcome> {
    const local = this.jobs.get(id);
    if (local !== undefined) {
      if (local.status !== 'running') return this.endedBefore(local.status);
      local.cancel(reason);
      await local.done;
      return this.ended(local.status);
    }
    const before = await this.stored(id);
    if (before !== undefined && before.status !== 'running') return this.endedBefore(before.status);
    if (!(await this.exists(id))) throw new UserError(`The ${this.label} '${id}' was not found under ${this.directory}`);
    await writeFile(join(this.dirOf(id), JOB_FILES.cancelRequest), reason);
    const owner = this.owner(id);
    const deadline = Date.now() + REMOTE_CANCEL_WAIT_MS;
    for (;;) {
      const now = await this.stored(id);
      if (now !== undefined && now.status !== 'running') return this.ended(now.status);
      if (owner === undefined || alive(owner) === false) {
        const who = owner === undefined ? 'no server is recorded as running it' : `the server process that ran it (pid ${owner.pid}) has exited`;
        return { stopped: false, why: `The cancel is recorded, but ${who}: nothing carries it out, and whether any of its processes are left is not known. Look for them under ${this.dirOf(id)}.` };
      }
      if (Date.now() >= deadline) {
        return { stopped: false, why: `The cancel is recorded; the server running it (pid ${owner.pid} on ${owner.host}) has not stopped it within ${REMOTE_CANCEL_WAIT_MS / 1000} s. Its status says when it has.` };
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** Server exit: every running job is stopped at once (no grace) and its result written. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.checking);
    const running = this.running();
    for (const job of running) job.cancel('the server exited', 0);
    await Promise.all(running.map((j) => j.done));
  }

  /** A job that had ended before the cancel was asked: nothing to stop. */
  private endedBefore(status: string): CancelOutcome {
    return { stopped: false, ended: true, why: `The ${this.label} had already ${status === 'cancelled' ? 'been cancelled' : status}.` };
  }

  /** How a job the cancel was carried out on ended. */
  private ended(status: string): CancelOutcome {
    return status === 'cancelled' ? { stopped: true } : { stopped: false, ended: true, why: `The ${this.label} had already ${status} before the cancel reached it.` };
  }

  private owner(id: string): Owner | undefined {
    try {
      return JSON.parse(readFileSync(join(this.dirOf(id), JOB_FILES.owner), 'utf8')) as Owner;
    } catch {
      return undefined;
    }
  }

  /** The cancels other servers recorded for the jobs running here, and the campaign budget's. */
  private carryOutCancels(): void {
    const running = this.running();
    if (running.length === 0) {
      clearInterval(this.checking);
      this.checking = undefined;
      return;
    }
    const overBudget = running.some((j) => j.paid) ? samplingStop(this.core.settings) : undefined;
    for (const job of running) {
      if (overBudget !== undefined && job.paid) {
        this.core.logger.warn({ kind: this.kind, id: job.id, reason: overBudget }, 'cancelled: budget reached');
        job.cancel(overBudget);
        continue;
      }
      const request = join(this.dirOf(job.id), JOB_FILES.cancelRequest);
      if (!existsSync(request)) continue;
      let reason = 'another server sharing RL_HOME cancelled it';
      try {
        reason = readFileSync(request, 'utf8').trim() || reason;
      } catch {
        // Read as it was removed: the default reason.
      }
      this.core.logger.info({ kind: this.kind, id: job.id, reason }, 'cancel recorded by another server');
      job.cancel(reason);
    }
  }
}
