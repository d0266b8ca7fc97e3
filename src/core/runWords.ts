/**
 * The words of a run, shared by every service that speaks of runs (config, setup, environments,
 * the run registry and what answers about runs): its statuses, phases, frameworks, placements and
 * process states. A leaf: it imports nothing of ours.
 */

/** Every status a run can be reported in; `unknown` = its run.json is damaged or missing. */
export const RUN_STATUSES = ['starting', 'running', 'stopping', 'completed', 'failed', 'stopped', 'unknown'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const ACTIVE_STATUSES: readonly RunStatus[] = ['starting', 'running', 'stopping'];
export const ENDED_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'stopped'];
export const isActive = (status: RunStatus): boolean => ACTIVE_STATUSES.includes(status);
export const isEnded = (status: RunStatus): boolean => ENDED_STATUSES.includes(status);

/** The training frameworks a run can belong to: Atropos (API, trainer, environment) and tinker-cookbook (one recipe process). */
export const FRAMEWORKS = ['atropos', 'cookbook'] as const;
export type FrameworkName = (typeof FRAMEWORKS)[number];

/** Where a run's processes live: detached children of this host, or steps of a Slurm job. */
export const PLACEMENTS = ['local', 'slurm'] as const;
export type PlacementName = (typeof PLACEMENTS)[number];

/**
 * Where a run is within its status: `queued` while its placement waits for resources (a Slurm job
 * pending), which start-up stage; once running, `waiting_for_data` until data first reaches the
 * Atropos API, then `training`; stopping; done.
 */
export type RunPhase = 'queued' | 'starting_api' | 'starting_trainer' | 'starting_env' | 'waiting_for_data' | 'training' | 'stopping' | 'done';

export type ProcessState = 'not_started' | 'running' | 'exited';
