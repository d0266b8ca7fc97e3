/**
 * A run's record, RL_HOME/runs/<run_id>/run.json: its shape, the vocabulary of run states, and the
 * one parser every reader uses (the registry, the resources, the listings), so a record is usable
 * or damaged for all of them alike.
 */
import { RUN_PROCESSES, type RunProcess } from '../../../core/files/home.js';
import type { CostPlan, LoggedTokens } from '../../cost/spend.js';
import type { RunTinkerUsage } from '../../tinker/usage.js';
import { type HostId, THIS_HOST } from '../../../core/os/host.js';
import { FRAMEWORKS, type FrameworkName, isActive, isEnded, PLACEMENTS, type PlacementName, type ProcessState, type RunPhase, type RunStatus } from '../../../core/runWords.js';

/** One log line worth quoting, with how often its kind was seen. */
export interface LogEvidence {
  line: string;
  count: number;
  /** When the latest line of this kind was seen (ISO), by whoever fed the scanner. */
  at: string;
}

export interface EnvLogSignals {
  /** The model endpoint (the trainer's inference server, or a spread-out localhost:900x) cannot be reached. */
  connection_errors?: LogEvidence;
  /** Groups the environment threw away: all scores equal, or no usable rollout ("Failed to process group"). */
  dropped_groups?: LogEvidence;
  /** Other errors atroposlib logs and survives: collecting, scoring, sending, registering. */
  errors?: LogEvidence;
}

export interface BatchTokens {
  /** Batches counted, and their sequences' prompt and completion tokens, summed. */
  batches: number;
  sequences: number;
  prompt_tokens: number;
  completion_tokens: number;
}

// The runs code reads the words of a run where it reads the record.
export * from '../../../core/runWords.js';

/** The processes each framework's runs have, in start-up order (a tinker-cookbook run's one recipe process is called the trainer). */
export const FRAMEWORK_PROCESSES: Record<FrameworkName, readonly RunProcess[]> = { atropos: RUN_PROCESSES, cookbook: ['trainer'] };

/** A process its placement ended before it ended by itself (a Slurm job ended by its time limit, a cancel, a node failure), and what the run became. */
export interface PlacementEnd {
  status: 'failed' | 'stopped';
  /** In the placement's own words (Slurm's state and reason). */
  reason: string;
}

/** A process that is a step of a Slurm job: the job, the step's name in it, and the directory the server and the job's script meet in. */
export interface SlurmStep {
  job_id: string;
  name: string;
  dir: string;
}

export interface ProcessRecord {
  state: ProcessState;
  pid: number | null;
  /** Process group id (= pid: each child leads its own group). */
  pgid: number | null;
  /** The OS start time of `pid`, so a reused pid is never mistaken for this process. */
  start_time: string | null;
  /** argv (never holds a secret). */
  command: string[];
  /** Where it runs when not the checkout root (the trainer: its run's own directory). */
  cwd?: string;
  started_at: string | null;
  ended_at: string | null;
  /** null while running, when killed by a signal, or when an adopted process ended unseen. */
  exit_code: number | null;
  signal: string | null;
  /** Set when its placement ended it (see PlacementEnd). */
  ended_by?: PlacementEnd;
  /** A Slurm run's process (placement `slurm`); pid and start time are then null. */
  slurm_step?: SlurmStep;
  /** The host a local process runs on (its pid means nothing elsewhere); absent in records written before hosts were named: the run's origin. */
  host?: HostId;
}

export interface RunRecord {
  version: 1;
  run_id: string;
  /** Records written before frameworks existed have none: they are read as `atropos`. */
  framework: FrameworkName;
  /** Records written before placements existed have none: they are read as `local`. */
  placement: PlacementName;
  /** The Slurm job holding the run's processes (placement `slurm`), once submitted. */
  slurm_job_id?: string;
  /** Where the server reaches the run's processes (a Slurm job's node address); absent: this host. */
  host?: string;
  /** Where the run was created (or last resumed): a local run's processes live there, and only a process of ours there keeps them. Absent in older records: the reader's host. */
  origin?: HostId;
  /** While the run waits for its placement (phase `queued`): why, in the placement's words, and since when. */
  queued?: { reason: string; since: string };
  environment: string;
  environment_file: string;
  status: Exclude<RunStatus, 'unknown'>;
  phase: RunPhase;
  /** When the current phase began: start-up stage deadlines count from here, across restarts. */
  phase_started_at: string;
  created_at: string;
  /** When rl_start_training was called (= created_at; listed by rl_list_runs). */
  started_at: string;
  /** When the run reached `running`. */
  running_at?: string;
  ended_at?: string;
  wandb_project: string;
  /** tinker.wandb_run_name = <env>-<run_id>. */
  wandb_run_name: string;
  /** The trainer's actual W&B run name: <wandb_run_name>-trainer-<wandb_run_suffix>. */
  trainer_wandb_run_name: string;
  wandb_run_suffix: string;
  /** = run_id: the trainer and the environment W&B runs share it. */
  wandb_group: string;
  /** env.wandb_name (the environment's W&B prefix). */
  wandb_name: string;
  use_wandb: boolean;
  config_path: string;
  /** One log and one process per process of the run's framework (`runProcesses`). */
  logs: Partial<Record<RunProcess, string>>;
  /** The ports the run's processes serve on (an Atropos run: its API and its trainer's inference server). */
  ports: { api: number; inference: number };
  processes: Partial<Record<RunProcess, ProcessRecord>>;
  error?: string;
  /** The first meaningful line of the failed process's log (what `error` quotes as its cause). */
  error_cause?: string;
  /** The process whose log explains `error`. */
  error_process?: RunProcess;
  /** Things worth knowing that are not errors (e.g. the environment finished its data). */
  notes?: string[];
  stop_requested_at?: string;
  /**
   * The outcome decided while the run's processes are still being stopped (status `stopping`): it
   * becomes the status once they are gone, whichever server finishes the stop.
   */
  outcome?: 'completed' | 'failed' | 'stopped';
  observed?: RunObservations;
  /** The cost estimate at start (an estimate: its figures say from what); spend is counted from it. */
  cost?: CostPlan;
  /** The most its spend estimate was counted at (runCost.ts holdSpend): shown and budgeted when a later one is lower. */
  spent_high_usd?: number;
  /** What Tinker itself said of the run: billed usage and checkpoint storage (runs/usage.ts), asked at most every RL_BILLING_REFRESH_SECONDS. */
  tinker?: RunTinkerUsage;
  /** Status rate limit: when the last full rl_check_status answer was given. */
  last_full_check_at?: string;
  /** Each time the ended run was started again (rl_resume_training, or its keeper on a transient cause): when, from which step and saved state, and how it had ended. */
  resumes?: RunResume[];
}

export interface RunResume {
  at: string;
  from_step: number;
  state_path: string;
  /** The status and error the run had ended with. */
  after: { status: 'failed' | 'stopped'; error?: string; ended_at?: string };
  /** Set when its keeper resumed it unattended (RL_AUTO_RESUME): the transient cause it was resumed from. */
  automatic?: { cause: string };
}

/**
 * What the supervisor has seen of a run's progress, kept in run.json so that every server (and a
 * status check that reads nothing else) can judge the run's health from it.
 */
export interface RunObservations {
  /** When the supervisor last looked. */
  observed_at: string;
  /** Trainer steps completed (its `Step k complete` lines), and when that count last rose. */
  steps_completed: number;
  step_completed_at?: string;
  total_steps?: number;
  /** Sequences the trainer trained in its completed steps (`Got N Datum objects`), when it printed them. */
  sequences_trained?: number;
  /** The latest completed steps, in a row, that trained nothing (every group scored alike); absent once a step trains. */
  untrained_steps?: UntrainedSteps;
  /** Tokens of the batches the trainer took (its temp.json), as far as the supervisor saw them. */
  batch_tokens?: BatchTokens;
  /** The trainer's latest `Reward/mean` values (oldest first) and last `Loss`; non-finite ones as "NaN"/"Infinity". */
  recent_rewards?: (number | string)[];
  last_loss?: number | string;
  /** The Atropos API's `/status`: groups queued and batches handed to the trainer. */
  queue_size?: number;
  batches_taken?: number;
  /** When data first reached the API, and when either count above last rose. */
  data_first_at?: string;
  data_last_at?: string;
  env?: EnvLogSignals;
  /** What the trainer's own log says is wrong while it goes on (a cookbook run's logs.log). */
  trainer_signals?: TrainerLogSignals;
  /** Tokens the trainer logged for its batches (a cookbook run's metrics.jsonl): spend is counted from them. */
  logged_tokens?: LoggedTokens;
}

export interface TrainerLogSignals {
  /** Tinker paused the job for billing (HTTP 402): the SDK waits, no batch finishes. */
  billing_paused?: LogEvidence;
  /** Errors the trainer logged and carried on after. */
  errors?: LogEvidence;
}

/** The latest finished steps, in a row, that trained nothing, with the trainer's own line about the latest of them. */
export interface UntrainedSteps {
  steps: number;
  line: string;
}

/** The W&B names of a run, fixed before it starts so it can be found later. */
export interface RunNames {
  wandb_project: string;
  wandb_group: string;
  wandb_run_name: string;
  trainer_wandb_run_name: string;
  wandb_run_suffix: string;
  wandb_name: string;
  use_wandb: boolean;
}

/** A run directory whose run.json cannot be used: reported as `unknown`, never fatal. */
export interface DamagedRun {
  run_id: string;
  status: 'unknown';
  damaged: string;
  created_at?: string;
}

export type RegistryEntry = RunRecord | DamagedRun;
export const isDamaged = (entry: RegistryEntry): entry is DamagedRun => 'damaged' in entry;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The run's processes in start-up order: those of its framework. */
export const runProcesses = (record: Pick<RunRecord, 'framework'>): readonly RunProcess[] => FRAMEWORK_PROCESSES[record.framework];

/** A process the run's framework has; a caller that names one its framework lacks is a bug. */
export function processOf(record: Pick<RunRecord, 'run_id' | 'processes'>, name: RunProcess): ProcessRecord {
  const p = record.processes[name];
  if (p === undefined) throw new Error(`run ${record.run_id} has no ${name} process`);
  return p;
}

/** A process's log; a caller that names one its framework lacks is a bug. */
export function logOf(record: Pick<RunRecord, 'run_id' | 'logs'>, name: RunProcess): string {
  const path = record.logs[name];
  if (path === undefined) throw new Error(`run ${record.run_id} has no ${name} log`);
  return path;
}

/** Why `value` is not a usable record of run `runId`, or undefined when it is. */
function defect(value: unknown, runId: string): string | undefined {
  if (!isObject(value)) return 'run.json does not hold a JSON object';
  if (value.run_id !== runId) return `run.json names run ${JSON.stringify(value.run_id)?.slice(0, 40)}, not ${runId}`;
  const status = value.status as RunStatus;
  if (!isActive(status) && !isEnded(status)) return `run.json has no valid status (${JSON.stringify(value.status)?.slice(0, 40)})`;
  if (typeof value.environment !== 'string' || typeof value.created_at !== 'string') return 'run.json lacks environment or created_at';
  if (value.framework !== undefined && !(FRAMEWORKS as readonly unknown[]).includes(value.framework)) return `run.json names an unknown framework (${JSON.stringify(value.framework).slice(0, 40)})`;
  if (value.placement !== undefined && !(PLACEMENTS as readonly unknown[]).includes(value.placement)) return `run.json names an unknown placement (${JSON.stringify(value.placement).slice(0, 40)})`;
  const { processes, logs } = value;
  if (!isObject(processes) || !isObject(logs)) return 'run.json lacks processes or logs';
  for (const name of FRAMEWORK_PROCESSES[(value.framework as FrameworkName | undefined) ?? 'atropos']) {
    const p = processes[name];
    if (!isObject(p) || typeof p.state !== 'string' || typeof logs[name] !== 'string') return `run.json lacks the ${name} process`;
  }
  return undefined;
}

/** The text of run `runId`'s run.json as a record, or as a DamagedRun saying why it cannot be used; never throws. */
export function parseRunRecord(text: string, runId: string): RegistryEntry {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    // The parser's message quotes the text; what a file holds is never repeated in an answer.
    return damagedRun(runId, `run.json is not valid JSON (${(err as Error).message.replace(/, ".*$/s, '')})`);
  }
  const problem = defect(value, runId);
  if (problem) return damagedRun(runId, problem);
  const record = value as RunRecord;
  // Written before runs had a framework and a placement: every such run was an Atropos run on this host.
  record.framework ??= 'atropos';
  record.placement ??= 'local';
  return record;
}

export function damagedRun(runId: string, reason: string, createdAt?: string): DamagedRun {
  return { run_id: runId, status: 'unknown', damaged: reason, ...(createdAt !== undefined ? { created_at: createdAt } : {}) };
}

/** The address the run's processes serve on as the server reaches them. */
export const hostOf = (record: Pick<RunRecord, 'host'>): string => record.host ?? '127.0.0.1';

/** Trainer steps completed out of the total, as the watchdog last saw them; undefined before it saw a total. */
export function observedProgress(record: RunRecord): { step: number; total_steps: number } | undefined {
  const total = record.observed?.total_steps;
  return total === undefined ? undefined : { step: record.observed?.steps_completed ?? 0, total_steps: total };
}

export function emptyProcess(command: string[], cwd?: string): ProcessRecord {
  return { state: 'not_started', pid: null, pgid: null, start_time: null, command, ...(cwd !== undefined ? { cwd } : {}), started_at: null, ended_at: null, exit_code: null, signal: null };
}

export interface NewRun {
  runId: string;
  framework: FrameworkName;
  placement: PlacementName;
  selection: { environment: { name: string; file_path: string } };
  names: RunNames;
  configPath: string;
  /** One per process of the framework. */
  logs: Partial<Record<RunProcess, string>>;
  ports: RunRecord['ports'];
  /** argv of each process of the framework (never holds a secret). */
  commands: Partial<Record<RunProcess, string[]>>;
  /** Working directories other than the checkout root. */
  cwds?: Partial<Record<RunProcess, string>>;
}

/** The first record of a run, before anything is spawned: `starting`, at its first stage. */
export function initialRecord(run: NewRun): RunRecord {
  const created = new Date().toISOString();
  const { names } = run;
  const order = FRAMEWORK_PROCESSES[run.framework];
  return {
    version: 1,
    run_id: run.runId,
    framework: run.framework,
    placement: run.placement,
    origin: THIS_HOST,
    environment: run.selection.environment.name,
    environment_file: run.selection.environment.file_path,
    status: 'starting',
    phase: `starting_${order[0]!}`,
    phase_started_at: created,
    created_at: created,
    started_at: created,
    wandb_project: names.wandb_project,
    wandb_run_name: names.wandb_run_name,
    trainer_wandb_run_name: names.trainer_wandb_run_name,
    wandb_run_suffix: names.wandb_run_suffix,
    wandb_group: names.wandb_group,
    wandb_name: names.wandb_name,
    use_wandb: names.use_wandb,
    config_path: run.configPath,
    logs: run.logs,
    ports: run.ports,
    processes: Object.fromEntries(order.map((name) => [name, emptyProcess(run.commands[name] ?? [], run.cwds?.[name])])),
  };
}
