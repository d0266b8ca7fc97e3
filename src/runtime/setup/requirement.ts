/**
 * The shape of one requirement for training (requirements.ts lists them): its doctor name,
 * whether it is required, whether a start checks it, and the check, whose failure carries the
 * one sentence (cause and fix) that a start refuses with and the doctor shows as the fix.
 */
import { UserError } from '../../core/errors.js';
import type { Settings } from '../../core/settings.js';
import type { DiscoveryReport } from '../environments/report.js';
import type { TinkerFacts } from '../environments/tinkerReadiness.js';
import type { WandbAccess } from '../wandb/reader.js';
import type { InterpreterProbe } from './installation.js';
import type { LiveModels } from '../tinker/models.js';
import type { PlacementName } from '../../core/runWords.js';
import type { SlurmProbe } from './slurmProbe.js';

/** A requirement met (what was found), or not: `message` is the whole sentence with the fix. */
export type Outcome = { ok: true; detail: string } | { ok: false; detail: string; message: string; hints: Record<string, unknown> };

/** What the checks a start makes read. */
export interface StartContext {
  settings: Settings;
  /** Whether the run uses W&B (runUsesWandb): WANDB_API_KEY is required only then. */
  useWandb: boolean;
  /** The selected environment's file, when there is a selection: it must import as its process imports it. */
  environmentFile?: string;
  /** What the selected environment's code says about training on Tinker, when there is a selection. */
  tinker?: TinkerFacts;
  signal?: AbortSignal;
  /** Where the run is placed (the doctor: RL_PLACEMENT): Slurm's checks concern Slurm runs, the ports local ones. */
  placement: PlacementName;
  /** RL_PYTHON's version and imports: one interpreter launch, shared by the checks that need it. */
  interpreter(): Promise<InterpreterProbe>;
  /** The base model the run trains (the locked one when not given). */
  model?: string;
  /** A cookbook run's recipe (verifiers_rl for a verifiers environment), when the selection is one. */
  recipe?: string;
  /** The base models Tinker serves now (cached an hour), or why they could not be had. */
  liveModels(): Promise<LiveModels>;
  /** Slurm's commands and controller as this server finds them: one look, shared by the Slurm checks. */
  slurm(): Promise<SlurmProbe>;
  /** Ids of the runs active on this host, named in a busy port's detail (the doctor's). */
  activeRuns?(): string[];
}

/** What the doctor-only checks read besides. */
export interface DoctorContext extends StartContext {
  scanEnvironments(): Promise<DiscoveryReport>;
  checkWandbAccess(signal?: AbortSignal): Promise<WandbAccess>;
}

interface RequirementBase {
  /** The doctor's name for the check. */
  check: string;
  /**
   * Checked by a start under the start lock, where the run is placed, against the runs every server
   * recorded (the first run's ports): checked before it, another server's run started a moment
   * earlier could hold them.
   */
  placement?: true;
  /** False for what only some tools need; may depend on whether the run uses W&B. */
  required(ctx: StartContext): boolean;
  /** Whether it concerns this start (and the doctor's report) at all: Slurm's checks only where runs go to Slurm. Absent: always. */
  applies?(ctx: StartContext): boolean;
}

/** Checked by every start (and the doctor), or by the doctor only, which may find it not applicable (undefined). */
export type Requirement =
  | (RequirementBase & { atStart: true; evaluate(ctx: StartContext): Outcome | Promise<Outcome> })
  | (RequirementBase & { atStart: false; evaluate(ctx: DoctorContext): Outcome | undefined | Promise<Outcome | undefined> });

export const always = (): boolean => true;
export const never = (): boolean => false;

export function met(detail: string): Outcome {
  return { ok: true, detail };
}

export function unmet(detail: string, message: string, hints: Record<string, unknown> = {}): Outcome {
  return { ok: false, detail, message, hints };
}

/** A lookup that throws UserError with its own fix: found (its result is the detail) or not. */
export function lookup(find: () => string): Outcome {
  try {
    return met(find());
  } catch (err) {
    if (!(err instanceof UserError)) throw err;
    return unmet('not found', err.message, err.hints);
  }
}
