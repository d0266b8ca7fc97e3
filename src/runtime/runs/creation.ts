/**
 * Creating a run, under the start lock shared by every server on RL_HOME: the limit of its
 * placement checked again against the runs every server recorded, the run laid out by its
 * framework (ports, files, commands) and placed by its placement (a Slurm job's script), the
 * budgets, then its directory and record. A dry run stops before anything is written.
 */
import { writeFileSync } from 'node:fs';
import type { CoreServices } from '../../core/services.js';
import { startLockPath } from '../../core/files/home.js';
import { FileLock } from '../../core/os/fileLock.js';
import type { StartedRun } from './answers.js';
import type { Preflight, RunFramework, RunPlan, StartRequest } from './seams/framework.js';
import type { Placement, PlacementOptions } from './seams/placement.js';
import { refuseAtLimit } from './placement/host.js';
import { livesElsewhere } from './keeping.js';
import { initialRecord, type RunRecord } from './seams/record.js';
import type { RunStore } from './registry/store.js';
import { planFor, refuseOverBudget } from './watching/runCost.js';

const START_LOCK_TIMEOUT_MS = 5_000;

export interface CreationContext {
  core: CoreServices;
  store: RunStore;
  /** The active runs of every placement, read fresh. */
  activeRuns(): RunRecord[];
  /** Ended runs whose leftovers still live (they may hold ports while they stop). */
  endingRuns(): RunRecord[];
}

export interface RunToCreate {
  framework: RunFramework;
  placement: Placement;
  request: StartRequest & { preflight: Preflight };
  resources: PlacementOptions;
  dryRun: boolean;
}

/** The active runs a placement's limit counts: its own; the local limit, this host's (a local run of another host uses none of it). */
export const activeOf = (active: readonly RunRecord[], placement: Placement): RunRecord[] => active.filter((r) => r.placement === placement.name && !livesElsewhere(r));

function newRecord(store: RunStore, { framework, placement, request }: RunToCreate, plan: RunPlan): RunRecord {
  const { runId } = request;
  return initialRecord({
    runId,
    framework: framework.name,
    placement: placement.name,
    selection: request.selection,
    names: plan.names,
    configPath: plan.configPath,
    logs: Object.fromEntries(framework.startOrder.map((name) => [name, store.logPath(runId, name)])),
    ports: plan.ports,
    commands: plan.commands,
    cwds: plan.cwds,
  });
}

/** Creates the run directory and its files; the supervisor lock is held before run.json exists. */
function create(ctx: CreationContext, record: RunRecord, writes: (() => void)[]): FileLock {
  const dir = ctx.store.dir(record.run_id);
  let lock: FileLock | undefined;
  ctx.store.create(record, () => {
    // Taken before run.json exists, so no other server can adopt the run before we supervise it.
    lock = ctx.store.supervisorLock(record.run_id);
    if (!lock.tryAcquire()) throw new Error(`cannot lock the new run directory ${dir}`);
    for (const write of writes) write();
    for (const path of Object.values(record.logs)) writeFileSync(path, '', { flag: 'a' });
  });
  return lock!;
}

/** The new run and the supervisor lock it holds; no lock for a dry run, which writes nothing. */
export async function createRun(ctx: CreationContext, run: RunToCreate): Promise<StartedRun & { lock?: FileLock }> {
  const { settings } = ctx.core;
  const { framework, placement, request } = run;
  request.signal?.throwIfAborted();
  // Servers sharing RL_HOME: the active-run checks, the choice of ports and the creation must not interleave.
  ctx.store.ensureRoot();
  const startLock = new FileLock(startLockPath(settings.home));
  startLock.acquireBlocking(START_LOCK_TIMEOUT_MS);
  try {
    const active = ctx.activeRuns();
    refuseAtLimit(activeOf(active, placement), placement.limit(settings));
    const plan = await framework.plan({ ...request, active, neighbours: [...active, ...ctx.endingRuns()] });
    refuseOverBudget(settings, plan.estimate, active);
    const record = { ...newRecord(ctx.store, run, plan), cost: planFor(settings, plan.estimate) };
    const placed = placement.prepare(record, run.resources);
    const started = { record, config: plan.shownConfig, estimate: plan.estimate, ...(placed.script !== undefined ? { script: placed.script } : {}) };
    if (run.dryRun) return started;
    const lock = create(ctx, record, [() => plan.write(ctx.core.redactor), placed.write]);
    ctx.core.logger.info({ run_id: record.run_id, framework: framework.name, placement: placement.name, environment: record.environment, ports: record.ports }, 'run starting');
    return { ...started, lock };
  } finally {
    startLock.release();
  }
}
