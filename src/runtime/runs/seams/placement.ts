/**
 * The placement seam: where a run's processes live. `local`: detached children of this host, each
 * leading its own process group; `slurm`: steps of one Slurm job. Supervision starts, watches,
 * adopts and stops processes only through this, so the life of a run is one code path whatever
 * its placement.
 */
import type { Logger } from '../../../core/logger.js';
import type { RunProcess } from '../../../core/files/home.js';
import type { Settings } from '../../../core/settings.js';
import type { Verdict } from './framework.js';
import type { PlacementEnd, PlacementName, ProcessRecord, RunRecord } from './record.js';

/** What identifies a live process to its placement (locally: pid and start time), as the run index keeps it. */
export type ProcessHandle = Partial<ProcessRecord>;

export interface ExitInfo {
  exit_code: number | null;
  signal: string | null;
  /** Why the process could not be started at all (e.g. ENOENT). */
  spawn_error?: string;
  /** Its placement ended it (a Slurm job ended by its time limit, a cancel, a node failure): the run's outcome then. */
  ended_by?: PlacementEnd;
}

export interface LaunchSpec {
  process: RunProcess;
  command: readonly string[];
  cwd: string;
  env: Record<string, string>;
  logPath: string;
}

export interface Launched {
  /** What identifies the process from now on, written to its record at once (pid, start time, ...); undefined when it could not be started. */
  identity?: Partial<ProcessRecord>;
  /** Resolves when it ends; carries spawn_error when it could not be started. */
  exited: Promise<ExitInfo>;
}

/** Starts one process; synchronous up to its identity, so nothing runs between a state check and the launch. */
export type Launch = (spec: LaunchSpec) => Launched;

/** `unkillable`: it outlived SIGKILL by seconds (stuck in the kernel, e.g. on a dead mount), or its end could not be confirmed. */
export type StopResult = 'already_gone' | 'terminated' | 'killed' | 'unkillable';

/** Resources a start asks of its placement (a Slurm job's); each unset one comes from the settings. */
export interface PlacementOptions {
  partition?: string;
  account?: string;
  time_limit?: string;
  cpus_per_process?: number;
  mem_per_process?: string;
}

/** A run laid out where it is placed, before its directory exists: what a dry run shows, and what goes into the directory. */
export interface PlacedRun {
  /** The Slurm job's script, rendered as it will be submitted; none locally. */
  script?: string;
  /** Writes the placement's files into the new run directory (nothing secret). */
  write(): void;
}

/**
 * What the placement may do to the run's record while it acquires what the run runs in: note
 * facts (the job id, the host), say why the run waits and since when, and check that the
 * supervisor still wants the start (a stop may come at any time).
 */
export interface AllocationContext {
  record(): RunRecord;
  note(fields: Pick<RunRecord, 'slurm_job_id' | 'host'>): void;
  /** The run waits for its placement (phase `queued`) for `reason`; undefined: it no longer waits. */
  queued(reason: string | undefined): void;
  starting(): boolean;
  /** Waits `ms`, less when the supervisor's state changes. */
  sleep(ms: number): Promise<void>;
  logger: Logger;
}

/** How many runs of a placement may be active at once, the setting that says so, and where they run (for the refusal). */
export interface RunLimit {
  max: number;
  setting: string;
  where: string;
}

/**
 * What a record's processes are to their placement, read without acting on them: whether one
 * lives, what the run index keeps of it, how messages name it. Readers (status answers, the run
 * index) need nothing of the server for this; acting on processes (`Placement`) does.
 */
export interface ProcessIdentity {
  /** Whether the process its record describes is alive now, as far as this host can tell at once. */
  isAlive(p: ProcessHandle): boolean;
  /** What the run index keeps of a process the record calls running, enough for `isAlive`. */
  handle(p: ProcessRecord): ProcessHandle;
  /** How messages name the process (a process group, a job step). */
  describe(p: ProcessRecord): string;
}

/** A placement as one server acts through it (made from its settings: Slurm's commands need SLURM_CONF). */
export interface Placement extends ProcessIdentity {
  readonly name: PlacementName;
  /** The address the processes' servers listen on so that the server reaches them: this host's loopback, or every address of a node. */
  readonly bindHost: string;
  limit(settings: Settings): RunLimit;
  /** Why an ended run of this placement cannot be started again in place (rl_resume_training); undefined when it can. */
  readonly resumeRefusal: string | undefined;
  /** The run placed with the start's `options` (refused with the fix when they do not apply); nothing is written yet. */
  prepare(run: RunRecord, options: PlacementOptions): PlacedRun;
  /**
   * What the run's processes run in, before its first stage: nothing locally; a Slurm job,
   * submitted once and waited for while it is queued. `ready`, `interrupted` (the supervisor no
   * longer starts the run), or a verdict (the job could not be submitted, or ended first).
   */
  allocate(ctx: AllocationContext): Promise<'ready' | 'interrupted' | Verdict>;
  /** The launcher for `run`'s processes, once what it needs is loaded. */
  launcher(run: RunRecord): Promise<Launch>;
  /** Follows a process an earlier server started: its exit code may be unknowable. `stop()` ends the following. */
  watchAdopted(p: ProcessRecord, pollMs: number): { exited: Promise<ExitInfo>; stop(): void };
  /** SIGTERM, then SIGKILL once `graceMs` passed with it alive; resolves when it is gone or cannot be killed. */
  stop(p: ProcessRecord, graceMs: number, exited?: Promise<unknown>): Promise<StopResult>;
  /** Once the processes are stopped, what held them goes too (the Slurm job); a note when that failed. */
  release(run: RunRecord): Promise<string | undefined>;
}
