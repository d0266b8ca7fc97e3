/**
 * The placement seam: where a run's processes live. `local`: detached children of this host, each
 * leading its own process group; `slurm`: steps of one Slurm job. Supervision starts, watches,
 * adopts and stops processes only through this, so the life of a run is one code path whatever
 * its placement.
 */
import type { RunProcess } from '../../../core/files/home.js';
import type { PlacementName, ProcessRecord, RunRecord } from '../registry/record.js';

/** What identifies a live process to its placement (locally: pid and start time), as the run index keeps it. */
export type ProcessHandle = Partial<ProcessRecord>;

export interface ExitInfo {
  exit_code: number | null;
  signal: string | null;
  /** Why the process could not be started at all (e.g. ENOENT). */
  spawn_error?: string;
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

/** `unkillable`: it outlived SIGKILL by seconds (stuck in the kernel, e.g. on a dead mount). */
export type StopResult = 'already_gone' | 'terminated' | 'killed' | 'unkillable';

export interface Placement {
  readonly name: PlacementName;
  /** The launcher for `run`'s processes, once what it needs is loaded. */
  launcher(run: RunRecord): Promise<Launch>;
  /** Whether the process its record describes is alive now, as far as this host can tell at once. */
  isAlive(p: ProcessHandle): boolean;
  /** What the run index keeps of a process the record calls running, enough for `isAlive`. */
  handle(p: ProcessRecord): ProcessHandle;
  /** Follows a process an earlier server started: its exit code may be unknowable. `stop()` ends the following. */
  watchAdopted(p: ProcessRecord, pollMs: number): { exited: Promise<ExitInfo>; stop(): void };
  /** SIGTERM, then SIGKILL once `graceMs` passed with it alive; resolves when it is gone or cannot be killed. */
  stop(p: ProcessRecord, graceMs: number, exited?: Promise<unknown>): Promise<StopResult>;
}
