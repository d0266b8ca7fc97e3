/**
 * What rl_check_status and rl_list_runs report about a run, read from its record, the OS and its
 * logs. A process the record calls running but that is gone (its supervisor died with it) is
 * reported as exited: the answer never claims more than the system shows.
 */
import { tailLines } from '../../core/files/logTail.js';
import type { SecretRedactor } from '../../core/redact.js';
import { runLogUri } from '../../core/resourceUris.js';
import type { RunProcess } from '../../core/files/home.js';
import type { TrainingSummary } from './seams/framework.js';
import { frameworkOf } from './choice/frameworks.js';
import { processIdentity } from './choice/placements.js';
import { logOf, processOf, runProcesses, type FrameworkName, type PlacementName, type ProcessState, type RunPhase, type RunRecord, type RunStatus } from './seams/record.js';
import { assessHealth, type Health, type HealthPolicy } from './watching/health.js';
import { runCost, type RunCost } from './watching/runCost.js';

const LOG_TAIL_LINES = 20;
const LOG_TAIL_MAX_CHARS = 4000;

export interface ProcessView {
  state: ProcessState;
  pid: number | null;
  exit_code: number | null;
  signal?: string;
}

export interface RunView {
  run_id: string;
  framework: FrameworkName;
  placement: PlacementName;
  /** The Slurm job holding the run's processes (placement `slurm`), once submitted. */
  slurm_job_id?: string;
  status: RunStatus;
  phase: RunPhase;
  health: Health;
  environment: string;
  running_time_minutes: number;
  /** One per process of the run's framework. */
  processes: Partial<Record<RunProcess, ProcessView>>;
  wandb_project: string;
  wandb_run_name: string;
  trainer_wandb_run_name: string;
  wandb_group: string;
  logs: Partial<Record<RunProcess, string>>;
  log_uris: Partial<Record<RunProcess, string>>;
  /** The latest tinker:// checkpoint the trainer saved. */
  weights: string | null;
  progress?: { step: number; total_steps: number };
  started_at: string;
  ended_at?: string;
  error?: string;
  /** Last lines of the process that explains `error`, secrets redacted. */
  log_tail?: string;
  notes?: string[];
  /** Each time the run was started again: when, from which step, how it had ended, and the transient cause when its keeper did it unattended. */
  resumes?: ResumeView[];
  /** Spend so far and the rest, estimated (each figure says from what). */
  cost?: RunCost;
}

export interface ResumeView {
  at: string;
  from_step: number;
  after: 'failed' | 'stopped';
  automatic: boolean;
  cause?: string;
}

export function processView(record: RunRecord, name: RunProcess): ProcessView {
  const p = processOf(record, name);
  const gone = p.state === 'running' && !processIdentity(record.placement).isAlive(p);
  return {
    state: gone ? 'exited' : p.state,
    pid: p.pid,
    exit_code: p.exit_code,
    ...(p.signal !== null ? { signal: p.signal } : {}),
  };
}

export function runningMinutes(record: RunRecord, nowMs = Date.now()): number {
  const from = Date.parse(record.running_at ?? '');
  if (Number.isNaN(from)) return 0;
  const to = Date.parse(record.ended_at ?? '') || nowMs;
  return Math.round(Math.max(0, to - from) / 6000) / 10;
}

/** One entry per process of the run, in its framework's order. */
export function perProcess<T>(record: RunRecord, value: (name: RunProcess) => T): Partial<Record<RunProcess, T>> {
  return Object.fromEntries(runProcesses(record).map((name) => [name, value(name)]));
}

/** `trainer`: the run's training summary as a caller that follows it already read it (else it is read here). */
export async function describeRun(record: RunRecord, redactor: SecretRedactor, policy: HealthPolicy, trainer?: TrainingSummary): Promise<RunView> {
  trainer ??= await frameworkOf(record).readSummary(record);
  const view: RunView = {
    run_id: record.run_id,
    framework: record.framework,
    placement: record.placement,
    ...(record.slurm_job_id !== undefined ? { slurm_job_id: record.slurm_job_id } : {}),
    status: record.status,
    phase: record.phase,
    health: assessHealth(record, Date.now(), policy),
    environment: record.environment,
    running_time_minutes: runningMinutes(record),
    processes: perProcess(record, (name) => processView(record, name)),
    wandb_project: record.wandb_project,
    wandb_run_name: record.wandb_run_name,
    trainer_wandb_run_name: record.trainer_wandb_run_name,
    wandb_group: record.wandb_group,
    logs: record.logs,
    log_uris: perProcess(record, (name) => runLogUri(record.run_id, name)),
    weights: trainer.latest,
    started_at: record.started_at,
  };
  if (trainer.total_steps !== undefined) view.progress = { step: trainer.steps_completed, total_steps: trainer.total_steps };
  if (record.ended_at) view.ended_at = record.ended_at;
  if (record.error) view.error = record.error;
  if (record.error_process) {
    // Redacted before it is cut: a cut inside a key leaves a part redact() cannot recognise.
    let tail = redactor.redact((await tailLines(logOf(record, record.error_process), LOG_TAIL_LINES)).join('\n'));
    if (tail.length > LOG_TAIL_MAX_CHARS) tail = tail.slice(-LOG_TAIL_MAX_CHARS);
    // The cause may sit above the last lines: the tail shows it first, marked.
    if (record.error_cause !== undefined && !tail.includes(record.error_cause)) tail = `[cause, earlier in the log] ${record.error_cause}\n[...]\n${tail}`;
    view.log_tail = redactor.redact(tail);
  }
  if (record.notes?.length) view.notes = record.notes;
  if (record.resumes?.length) view.resumes = record.resumes.map((r) => ({ at: r.at, from_step: r.from_step, after: r.after.status, automatic: r.automatic !== undefined, ...(r.automatic ? { cause: redactor.redact(r.automatic.cause) } : {}) }));
  const cost = runCost(record);
  if (cost) view.cost = cost;
  return view;
}
