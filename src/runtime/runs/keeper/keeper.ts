/**
 * A run's keeper: one small detached process per run (src/keeper.ts, `node dist/keeper.js`),
 * the run's processes' parent from their start to their end, as podman's conmon is a container's.
 * It holds the run's lock for the run's life and runs the run's supervisor (supervision/supervisor.ts):
 * start-up in the framework's order, readiness, health, stalls, budgets, billed usage, the outcome
 * rules, stops asked for through stop.request (supervision/requests.ts), the final record; a run
 * that failed for a transient cause it resumes (recovery.ts, RL_AUTO_RESUME); then it exits.
 * Servers only create runs, spawn keepers (../keeperSpawn.ts), read the records and write requests, so a
 * run is guarded with no server alive. A keeper started for a run whose keeper died takes the
 * live processes over (the supervisor's `adopt`): their exit codes are then unknown.
 */
import { watch } from 'node:fs';
import { basename, resolve } from 'node:path';
import { createLogger, type Logger } from '../../../core/logger.js';
import { RUN_FILES, runIndexPath } from '../../../core/files/home.js';
import { SecretRedactor } from '../../../core/redact.js';
import type { CoreServices } from '../../../core/services.js';
import { secretValues, type Settings } from '../../../core/settings.js';
import type { FileLock } from '../../../core/os/fileLock.js';
import { hostRelation } from '../../../core/os/host.js';
import { type HoldState, LEASE, renewalStep } from '../../../core/os/lease.js';
import { TinkerApi } from '../../tinker/helper.js';
import { frameworkOf } from '../choice/frameworks.js';
import { placementOf } from '../choice/placements.js';
import { isActive, isDamaged, type RunRecord } from '../seams/record.js';
import { anyAlive, recordedProcesses, RunIndex } from '../registry/runIndex.js';
import { RunStore } from '../registry/store.js';
import { resumeRun } from '../resume.js';
import { RunSupervisor } from '../supervision/supervisor.js';
import { RunUsage } from '../usage.js';
import { KeeperPartner } from './partner.js';
import { recovery } from './recovery.js';

/** A keeper spawned by a server finds the lock naming it within this long (the server renames it right after the spawn). */
const HAND_OVER_WAIT_MS = 2_000;

/**
 * Takes the run's lock: the one a server handed over (`token`), or a free or stale one (a lease
 * expired on another host only when `remote`: a Slurm run's job is reached from anywhere). False
 * when another keeper holds it.
 */
async function takeLock(lock: FileLock, handedOver: boolean, remote: boolean): Promise<boolean> {
  const deadline = Date.now() + (handedOver ? HAND_OVER_WAIT_MS : 0);
  for (;;) {
    if (lock.isHeld() || lock.tryAcquire(remote)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Whether the run needs keeping: active, or ended with processes left to stop. */
const needsKeeping = (record: RunRecord): boolean => isActive(record.status) || anyAlive({ placement: record.placement, running: recordedProcesses(record) });

interface Keeping {
  core: CoreServices & { logger: Logger };
  store: RunStore;
  lock: FileLock;
  index: RunIndex;
  usage: RunUsage;
  /** Aborted when the keeper is told to go. */
  leaving: AbortController;
}

function supervisorOf(k: Keeping, record: RunRecord): RunSupervisor {
  const { settings, logger, redactor } = k.core;
  const framework = frameworkOf(record);
  return new RunSupervisor(
    {
      settings,
      logger,
      redactor,
      store: k.store,
      lock: k.lock,
      framework,
      placement: placementOf(record, settings),
      childEnvs: framework.childEnvironments(settings, record),
      // Active, or stopped in the last minute: a reached cap stops every active run within a look or two.
      activeRunIds: () => (k.index.refresh(), k.index.runs()).filter((r) => isActive(r.status) || (r.status === 'stopped' && Date.now() - Date.parse(r.ended_at ?? '') < 60_000)).map((r) => r.run_id),
      usage: k.usage,
    },
    record,
  );
}

/**
 * Once the run ended: resumed from its last saved state when it failed for a transient cause, its
 * framework can resume and attempts are left (after a growing wait, noted in the record); the
 * resumed record, or undefined when the run stays ended.
 */
async function recover(k: Keeping, ended: RunRecord): Promise<RunRecord | undefined> {
  const { settings, logger } = k.core;
  const decision = recovery(ended, settings.autoResume);
  if (!decision.resume) return undefined;
  try {
    await frameworkOf(ended).resumePoint(ended);
  } catch {
    // An Atropos run, or a cookbook run with no saved state: there is nothing to resume from.
    return undefined;
  }
  const at = new Date(Date.now() + decision.waitMs).toISOString();
  const note = `Resuming automatically at ${at} (attempt ${decision.attempt} of RL_AUTO_RESUME=${settings.autoResume}): ${decision.cause}.`;
  k.store.update(ended.run_id, (r) => void (r.notes ??= []).push(note));
  logger.warn({ run_id: ended.run_id, attempt: decision.attempt, cause: decision.cause }, 'resuming the run automatically');
  await new Promise<void>((done) => {
    const timer = setTimeout(done, decision.waitMs);
    k.leaving.signal.addEventListener('abort', () => (clearTimeout(timer), done()), { once: true });
  });
  if (k.leaving.signal.aborted) return undefined;
  try {
    const context = { settings, logger, store: k.store, activeRuns: () => k.index.active(), supervise: () => undefined };
    return (await resumeRun(context, ended.run_id, { lock: k.lock, cause: decision.cause })).record;
  } catch (err) {
    // Refused meanwhile (a user resumed or the host is at its limit): the run stays as it ended, and says why.
    const why = `Not resumed automatically: ${(err as Error).message}`;
    k.store.update(ended.run_id, (r) => void (r.notes ??= []).push(why));
    logger.warn({ run_id: ended.run_id, err: String(err) }, 'automatic resume refused');
    return undefined;
  }
}

/** What a keeper is started with besides its run: the lock's token a server handed over, and where to start a partner from. */
export interface KeeperOptions {
  token?: string;
  /** The directory its settings were read in: a partner (partner.ts) started from there replaces the keeper if it is killed; none without. */
  partnerFrom?: string;
}

/**
 * The run's lock, taken (handed over by `token`, or free, or stale), or undefined when the run is
 * not this keeper's: kept by another, or a local run of another host (only a process of ours
 * there may keep its processes).
 */
async function lockRun(k: Pick<Keeping, 'core' | 'store'>, runId: string, token: string | undefined): Promise<FileLock | undefined> {
  const { logger } = k.core;
  const before = k.store.read(runId);
  const placement = before !== undefined && !isDamaged(before) ? before.placement : 'local';
  if (before !== undefined && !isDamaged(before) && placement === 'local' && hostRelation(before.origin) === 'elsewhere') {
    logger.warn({ run_id: runId, host: before.origin?.hostname }, 'the run lives on another host; only a keeper there keeps it');
    return undefined;
  }
  const lock = k.store.supervisorLock(runId, token);
  if (await takeLock(lock, token !== undefined, placement === 'slurm')) return lock;
  logger.info({ run_id: runId }, 'the run has a keeper already');
  return undefined;
}

/**
 * Renews the keeper's lease (lease.ts) every LEASE.renewMs: readers on other hosts judge the keeper
 * by it. A lock that names another holder now is lost: the supervisor's next look lets go.
 */
function renewLease(lock: FileLock, lost: () => void): NodeJS.Timeout {
  let state: HoldState = 'held';
  let renewedAt = Date.now();
  const timer = setInterval(() => {
    const step = renewalStep(state, lock.isHeld(), Date.now() - renewedAt);
    state = step.state;
    if (step.action === 'renew' && lock.renew()) renewedAt = Date.now();
    else if (step.action === 'detach') lost();
  }, LEASE.renewMs / 2);
  timer.unref();
  return timer;
}

/**
 * Keeps the run in `runDir` until it has ended and its processes are gone (resumed on a transient
 * cause meanwhile), or the keeper is told to go (SIGTERM, SIGINT: the processes run on and the
 * next server keeps them).
 */
export async function keepRun(settings: Settings, runDir: string, options: KeeperOptions = {}): Promise<void> {
  const redactor = new SecretRedactor(secretValues(settings));
  // Its lines go to server.log beside the servers'; a crash to the run's keeper.log (src/keeper.ts).
  const logger = createLogger({ level: settings.logLevel, home: settings.home, redactor, stderr: false });
  const core = { settings, logger, redactor };
  const store = new RunStore(settings.home);
  const runId = basename(runDir);
  if (store.dir(runId) !== resolve(runDir)) throw new Error(`${runDir} is not a run directory of RL_HOME ${settings.home}`);
  const lock = await lockRun({ core, store }, runId, options.token);
  if (lock === undefined) return;
  const record = store.read(runId);
  if (record === undefined || isDamaged(record) || !needsKeeping(record)) {
    lock.release();
    return;
  }
  const partner = options.partnerFrom !== undefined ? new KeeperPartner(runDir, options.partnerFrom) : undefined;
  const index = new RunIndex(store, runIndexPath(settings.home), { stallSeconds: settings.stall.seconds }, logger);
  const k: Keeping = { core, store, lock, index, usage: new RunUsage(core, new TinkerApi(core), store), leaving: new AbortController() };
  let ended = false;
  try {
    ended = await keepUntilEnded(k, runDir, record);
  } finally {
    // A keeper that goes while its run goes on frees the lock for the next one (one that lost the
    // lock leaves it to its holder). One whose run ended keeps naming itself until its process is
    // gone, so "the run's keeper is gone" (a stop's answer, a look at the process table) means
    // nothing of ours is left on this host; its lease says it let go, for the other hosts.
    if (ended) lock.renew(true);
    else lock.release();
    await partner?.dismiss();
  }
}

/** The supervisor's life, resumes included; true once the run has ended (false: the keeper let go of a run that goes on). */
async function keepUntilEnded(k: Keeping, runDir: string, first: RunRecord): Promise<boolean> {
  let supervisor: RunSupervisor | undefined;
  // A request written by a server is seen at once; the supervisor's tick looks every second anyway.
  // Only its name wakes the keeper: the run's logs and records are written in the same directory,
  // many times a second while the run starts.
  const requests = watch(runDir, { persistent: false }, (_event, name) => {
    if (name === null || name === RUN_FILES.stopRequest) supervisor?.look();
  });
  requests.on('error', () => requests.close());
  const leave = (): void => {
    k.leaving.abort();
    supervisor?.detach();
  };
  process.on('SIGTERM', leave).on('SIGINT', leave);
  const lease = renewLease(k.lock, () => supervisor?.look());
  // The supervisor's timers do not hold a process open (a server has other work); the keeper lives
  // for the run, taken-over processes that are not its children included, so it holds itself open.
  const open = setInterval(() => undefined, 60_000);
  k.core.logger.info({ run_id: first.run_id, pid: process.pid }, 'keeper started');
  try {
    let record: RunRecord | undefined = first;
    while (record !== undefined) {
      supervisor = supervisorOf(k, record);
      supervisor.adopt();
      await supervisor.done;
      if (supervisor.detached) return false;
      record = await recover(k, supervisor.record);
    }
    k.core.logger.info({ run_id: first.run_id, status: supervisor?.record.status }, 'keeper exits');
    return true;
  } finally {
    clearInterval(open);
    clearInterval(lease);
    requests.close();
  }
}
