/**
 * The framework seam: what differs between the training frameworks a run can belong to (an
 * Atropos run is three processes started in order and read through the trainer's log and the
 * Atropos API; a tinker-cookbook run is one process read through the files it writes under its
 * log_path). Supervision, the registry, health, budgets, adoption and every answer are one code
 * path for all of them and ask the run's framework (`frameworkOf`, choice/frameworks.ts) only for this.
 */
import type { JsonValue } from '../../../core/json.js';
import type { Logger } from '../../../core/logger.js';
import type { RunProcess } from '../../../core/files/home.js';
import type { SecretRedactor } from '../../../core/redact.js';
import type { Settings } from '../../../core/settings.js';
import type { RunEstimate } from '../../cost/estimate.js';
import type { DatasetBatches } from '../../environments/report.js';
import type { TinkerFacts } from '../../environments/tinkerReadiness.js';
import type { FrameworkName, PlacementName, RunNames, RunObservations, RunRecord, UntrainedSteps } from './record.js';

/** What a run trains: the environment (or recipe) and its config values (ConfigSelection.forRun). */
export interface RunSelection {
  /** A cookbook environment also names its recipe and, for a verifiers environment, its id. */
  environment: { name: string; file_path: string; framework?: FrameworkName; recipe?: string; vf_env_id?: string; dataset_batches?: DatasetBatches[] };
  /** Current values of the non-locked fields; null = unset. */
  values: Record<string, JsonValue>;
  wandbProject: string;
  /** What an Atropos environment's code says about training on Tinker (managed_server, server config shape). */
  tinker?: TinkerFacts;
}

/** A start's request as a framework sees it: before the start lock (`preflight`) and under it (`plan`). */
export interface StartRequest {
  settings: Settings;
  selection: RunSelection;
  runId: string;
  /** The run's directory, not created yet. */
  runDir: string;
  /** Where the run is placed, and the address its processes' servers listen on so the server reaches them. */
  placement: { name: PlacementName; bindHost: string };
  signal?: AbortSignal;
}

/** What a preflight found (the executables a run launches), handed to `plan`. */
export interface Preflight {
  executables: Record<string, string>;
}

/** A new run as its framework lays it out, settled under the start lock. */
export interface RunPlan {
  names: RunNames;
  ports: RunRecord['ports'];
  /** argv of each process (never a secret) and where each runs, when not the install's root. */
  commands: Partial<Record<RunProcess, string[]>>;
  cwds: Partial<Record<RunProcess, string>>;
  /** The config file the processes read. */
  configPath: string;
  /** The config values the run trains with, as the start's answer shows them. */
  shownConfig: Record<string, JsonValue>;
  estimate: RunEstimate;
  /** Writes the run's own files into its new directory (its config, working directories); nothing secret. */
  write(redactor: SecretRedactor): void;
}

/** How a run ended, decided by its framework's outcome rules (or by the watchdog: a stall, a budget). */
export interface Verdict {
  /** `stopped`: the supervisor ended a run that had not failed (its budget was reached). */
  status: 'completed' | 'failed' | 'stopped';
  error?: string;
  error_process?: RunProcess;
}

/** Ready, not yet (it may still become so), or a verdict when it never can. */
export type Readiness = 'ready' | 'waiting' | Verdict;

/**
 * What a run recorded of its training so far, in one shape for every framework: its checkpoints,
 * how far it got, whether it finished, its first error and its recent numbers.
 */
export interface TrainingSummary {
  /**
   * Every sampler checkpoint in order (tinker:// paths). Their training runs are how Tinker's own
   * records of the run are found (its sessions' billing, all its checkpoints: runs/usage.ts), so a
   * framework names here the paths its runs save, wherever it reads them from.
   */
  checkpoints: string[];
  /** The last checkpoint actually saved: the real final weights. */
  latest: string | null;
  /** A final path the trainer printed (tinker-atropos prints one that is never saved). */
  final_reported: string | null;
  /** The first line saying training failed. */
  error_line: string | null;
  /** The trainer said it finished (true even after an error: check error_line). */
  completed: boolean;
  /** The trainer is set up (an Atropos trainer: registered with the API). */
  registered: boolean;
  /** The step the trainer began last (0-based): it may still wait for its batch. */
  step?: number;
  total_steps?: number;
  steps_completed: number;
  /** Steps trained, when the record says so directly (else one per checkpoint after an Atropos run's step_0). */
  trained_steps?: number;
  /** Sampler checkpoints by the step they were saved after, when their paths do not say it (a cookbook run's `000020`, `final`). */
  saved?: { step: number; path: string }[];
  /** Sequences trained in the finished steps; undefined when never said. */
  sequences_trained?: number;
  /**
   * The latest finished steps, in a row, that trained nothing (every group of their batches scored
   * alike: zero advantages); undefined when the latest finished step trained something.
   */
  untrained_steps?: UntrainedSteps;
  /** The latest per-step mean rewards, oldest first, and the last loss. */
  recent_rewards: number[];
  last_loss?: number;
  /** Per-step `[step, value]` of every reward and loss, only when asked for. */
  series?: { reward: [number, number][]; loss: [number, number][] };
  /** Figures the trainer's record never carries, and why (a cookbook run logs no loss): an empty curve is not "no data yet". */
  not_logged?: { loss?: string };
}

/** A run's training record followed by a reader that asks often (the dashboard): each read costs only what was added. */
export interface TrainingFollower {
  read(): Promise<TrainingSummary>;
}

/** The start-up of one run as its framework probes it; one per start-up, so it may keep state between probes. */
export interface StartUpProbe {
  /** Whether `stage` is ready, probing only what it still needs. */
  readiness(stage: RunProcess): Promise<Readiness>;
  /** Files whose writes may make `stage` ready (a log announcing it): a write wakes the wait at once. */
  wakeOn(stage: RunProcess): string[];
}

/** A look at a training run: the observations it leads to, and whether anything a reader cares about changed. */
export interface RunLook {
  next: RunObservations;
  changed: boolean;
}

/** Reads only what the run's files gained since the last look. */
export interface RunObserver {
  look(previous: RunObservations | undefined, at: string): Promise<RunLook>;
}

/** Where a resumed run continues: the state it loads (with its optimizer) and the step training restarts at. */
export interface ResumePoint {
  from_step: number;
  state_path: string;
}

/** The words health uses for a framework's runs. */
export interface HealthTerms {
  /** That no data came yet (before `data_first_at`): "no data has reached the Atropos API". */
  noData: string;
  /** That nothing moved since: "no trainer step and no new data". */
  noProgress: string;
  /** Why a stall costs money: what the trainer does while nothing comes. */
  stallConsequence: string;
  /** The process a stall is put down to when no log line says otherwise (the one whose data is missing). */
  stallProcess: RunProcess;
}

export interface RunFramework {
  readonly name: FrameworkName;
  /**
   * Every refusal of a start that does not depend on the other runs (a config that would stall,
   * the install's requirements): slow checks, run before the start lock, concurrently with other
   * starts.
   */
  preflight(request: StartRequest): Promise<Preflight>;
  /**
   * The run laid out beside the `active` ones (its ports, files, commands), under the start lock;
   * refusals that depend on them are thrown here. `neighbours`: the active runs and the ended ones
   * whose processes are still being stopped; they may still hold their ports.
   */
  plan(request: StartRequest & { active: readonly RunRecord[]; neighbours: readonly RunRecord[]; preflight: Preflight }): Promise<RunPlan>;
  /** What a run of `selection` would cost, before it starts. */
  estimate(settings: Settings, selection: RunSelection): RunEstimate;
  /** The processes of a run, in the order they start; they stop in `stopOrder`. */
  readonly startOrder: readonly RunProcess[];
  readonly stopOrder: readonly RunProcess[];
  /** What messages call each process. */
  processName(name: RunProcess): string;
  /** What start-up waits for at `stage` (quoted when it times out or fails there). */
  stageGoal(stage: RunProcess): string;
  startUpProbe(run: () => RunRecord, logger: Logger): StartUpProbe;
  /** The outcome rules: a verdict once the run ended, undefined while it goes on. */
  judge(record: RunRecord): Promise<Verdict | undefined>;
  /** The first line of a failed process's log a user can act on (the cause under a wrapper's last line). */
  firstCause(lines: readonly string[]): string | undefined;
  observer(run: () => RunRecord): RunObserver;
  /** The run's training record read whole (steps, checkpoints, numbers); `series` keeps every step's values. */
  readSummary(record: RunRecord, opts?: { series?: boolean }): Promise<TrainingSummary>;
  follower(record: RunRecord): TrainingFollower;
  /**
   * The run's metrics as its trainer records them itself, one row per step in step order (`step`
   * and every key the step logged; the last row of a repeated step wins); absent when only W&B
   * holds them (an Atropos run).
   */
  metricRows?(record: RunRecord): Promise<Record<string, JsonValue>[]>;
  /** What each process may see of the server's environment: an allow-list, keys only where needed. */
  childEnvironments(settings: Settings, record: RunRecord): Partial<Record<RunProcess, Record<string, string>>>;
  /**
   * Where a resume of this ended run would continue from, or a UserError saying why it cannot
   * (a framework whose trainer cannot load a saved state refuses every run).
   */
  resumePoint(record: RunRecord): Promise<ResumePoint>;
  readonly healthTerms: HealthTerms;
}
