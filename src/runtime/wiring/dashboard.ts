/**
 * The dashboard's snapshot (rl_dashboard_snapshot, called by the dashboard view, not the model):
 * per run its status, phase, health with reasons, processes, latest checkpoint, spend estimate
 * when the status has one, a failed process's last log lines, and its curves. The view polls it
 * every few seconds while a run is active, so it is cheap: run.json is read without stamping the
 * status rate limit, each trainer log is followed (only what it gained is read), and W&B is asked
 * at most every WANDB_REFRESH_MS per run, and once more when the run has ended.
 */
import type { SpendAnswer } from '../ledger/spendAnswer.js';
import { UserError } from '../../core/errors.js';
import type { RunProcess } from '../../core/files/home.js';
import type { SecretRedactor } from '../../core/redact.js';
import { isActive, isDamaged, type RunPhase, type RunRecord, type RunStatus } from '../runs/seams/record.js';
import type { RunManager } from '../runs/manager.js';
import type { TrainingFollower } from '../runs/seams/framework.js';
import { frameworkOf } from '../runs/choice/frameworks.js';
import { runCost, type RunCost } from '../runs/watching/runCost.js';
import { describeRun, type ProcessView, type RunView } from '../runs/view.js';
import type { HealthVerdict } from '../runs/watching/health.js';
import { WANDB_OFF, type WandbKeySeries, type WandbReader } from '../wandb/reader.js';
import { pickSeries, pointsPerSeries, type RunSeries } from './dashboardSeries.js';

/** Runs one view shows at once (a comparison of more shows the first ones and says so). */
export const MAX_DASHBOARD_RUNS = 4;
/** How often the view asks again while a run is active. */
export const DASHBOARD_POLL_SECONDS = 3;
/** W&B is asked at most this often per run: the view polls faster than metrics move. */
const WANDB_REFRESH_MS = 15_000;
/** A failed process's last lines, as much as the view shows. */
const LOG_TAIL_LINES = 12;
const LOG_TAIL_MAX_CHARS = 2000;
const EVIDENCE_MAX_CHARS = 200;
/** Followed trainer logs kept; the least recently polled is dropped past this. */
const MAX_FOLLOWED_LOGS = 16;

export interface DashboardRun {
  run_id: string;
  status: RunStatus;
  phase?: RunPhase;
  environment?: string;
  health?: {
    verdict: HealthVerdict;
    reasons: { code: string; message: string; line?: string }[];
    last_step: number | null;
    seconds_since_progress: number | null;
    observed_at: string | null;
  };
  processes?: Partial<Record<RunProcess, ProcessView>>;
  progress?: { step: number; total_steps: number };
  /** The latest tinker:// checkpoint the trainer saved. */
  checkpoint?: string | null;
  started_at?: string;
  ended_at?: string;
  running_time_minutes?: number;
  /** The spend estimate of the status answer, when it has one. */
  /** The run's spend and expected total: estimates, said so in the object itself. */
  cost?: RunCost;
  error?: string;
  error_process?: RunProcess;
  /** The last lines of the failed process's log (secrets redacted). */
  log_tail?: string;
  series: RunSeries;
  /** Series the run's trainer never logs, and why. */
  not_logged?: { loss?: string };
  wandb_url?: string;
  wandb_error?: string;
}

export interface DashboardSnapshot {
  generated_at: string;
  /** The budget window's spend from the ledger, as rl_estimate_cost and rl_list_runs answer it. */
  spend: SpendAnswer;
  /** True while any run shown is active or has a process still running: the view asks again after `poll_after_seconds`. */
  active: boolean;
  poll_after_seconds: number | null;
  runs: DashboardRun[];
}

interface CachedWandb {
  at: number;
  /** Fetched while the run was active: asked again once it has ended, for the final points. */
  whileActive: boolean;
  value: WandbKeySeries;
}

export interface DashboardServices {
  runs: RunManager;
  /** The budget window's spend now (ledger/spendAnswer.ts). */
  spend(): SpendAnswer;
  wandb: WandbReader;
  redactor: SecretRedactor;
}

export class Dashboard {
  private readonly wandbCache = new Map<string, CachedWandb>();
  private readonly logs = new Map<string, TrainingFollower>();

  constructor(private readonly services: DashboardServices) {}

  async snapshot(runIds: readonly string[], signal?: AbortSignal): Promise<DashboardSnapshot> {
    const cap = pointsPerSeries(runIds.length);
    const runs = await Promise.all(runIds.map((id) => this.run(id, cap, signal)));
    // A run's outcome is written before its last processes are stopped: the view keeps asking
    // until they are gone, so its last picture is the settled one.
    const active = runs.some((r) => isActive(r.status) || Object.values(r.processes ?? {}).some((p) => p.state === 'running'));
    return { generated_at: new Date().toISOString(), active, poll_after_seconds: active ? DASHBOARD_POLL_SECONDS : null, runs, spend: this.services.spend() };
  }

  private async run(runId: string, cap: number, signal?: AbortSignal): Promise<DashboardRun> {
    let entry;
    try {
      entry = this.services.runs.current(runId);
    } catch (err) {
      if (err instanceof UserError) return { run_id: runId, status: 'unknown', error: err.message, series: {} };
      throw err;
    }
    if (isDamaged(entry)) return { run_id: runId, status: 'unknown', error: entry.damaged, series: {} };
    const trainer = await this.follower(entry).read();
    const [view, wandb] = await Promise.all([
      describeRun(entry, this.services.redactor, this.services.runs.healthPolicy, trainer),
      this.wandbSeries(entry, cap, signal),
    ]);
    return {
      ...describe(view, entry, this.services.redactor),
      series: pickSeries(wandb.series, trainer.series, cap),
      ...(trainer.not_logged !== undefined && wandb.series?.loss === undefined ? { not_logged: trainer.not_logged } : {}),
      ...(wandb.wandb_url !== undefined ? { wandb_url: wandb.wandb_url } : {}),
      ...(wandb.wandb_error !== undefined ? { wandb_error: wandb.wandb_error } : {}),
    };
  }

  private follower(run: RunRecord): TrainingFollower {
    let follower = this.logs.get(run.run_id);
    if (follower === undefined) follower = frameworkOf(run).follower(run);
    // Re-inserted, so the map's first key is the least recently polled run.
    this.logs.delete(run.run_id);
    this.logs.set(run.run_id, follower);
    if (this.logs.size > MAX_FOLLOWED_LOGS) this.logs.delete(this.logs.keys().next().value!);
    return follower;
  }

  private async wandbSeries(run: RunRecord, cap: number, signal?: AbortSignal): Promise<WandbKeySeries> {
    if (!run.use_wandb) return { wandb_error: WANDB_OFF };
    const cached = this.wandbCache.get(run.run_id);
    const active = isActive(run.status);
    const fresh = cached !== undefined && Date.now() - cached.at < WANDB_REFRESH_MS && (active || !cached.whileActive);
    if (fresh) return cached.value;
    const value = await this.services.wandb.keySeries(run, cap, signal);
    this.wandbCache.set(run.run_id, { at: Date.now(), whileActive: active, value });
    if (this.wandbCache.size > MAX_FOLLOWED_LOGS) this.wandbCache.delete(this.wandbCache.keys().next().value!);
    return value;
  }
}

/** What the view shows of a run's status answer, cut to the view's size (redacted first: a cut inside a key hides it from redact()). */
function describe(view: RunView, record: RunRecord, redactor: SecretRedactor): Omit<DashboardRun, 'series'> {
  const { health } = view;
  const cost = runCost(record);
  return {
    run_id: view.run_id,
    status: view.status,
    phase: view.phase,
    environment: view.environment,
    health: {
      verdict: health.verdict,
      reasons: health.reasons.map((r) => ({ code: r.code, message: r.message, ...(r.evidence?.line !== undefined ? { line: redactor.redact(r.evidence.line).slice(0, EVIDENCE_MAX_CHARS) } : {}) })),
      last_step: health.last_step,
      seconds_since_progress: health.seconds_since_progress,
      observed_at: health.observed_at,
    },
    processes: view.processes,
    ...(view.progress !== undefined ? { progress: view.progress } : {}),
    checkpoint: view.weights,
    started_at: view.started_at,
    ...(view.ended_at !== undefined ? { ended_at: view.ended_at } : {}),
    running_time_minutes: view.running_time_minutes,
    ...(cost !== undefined ? { cost } : {}),
    ...(view.error !== undefined ? { error: view.error } : {}),
    ...(record.error_process !== undefined ? { error_process: record.error_process } : {}),
    ...(view.log_tail !== undefined ? { log_tail: lastLines(view.log_tail) } : {}),
  };
}

/** The last lines; the cause the status view puts first (`[cause, earlier in the log] ...`) stays first. */
function lastLines(text: string): string {
  const lines = text.split('\n');
  const cause = lines[0]?.startsWith('[cause') ? lines.slice(0, 2) : [];
  let rest = lines.slice(cause.length).slice(-(LOG_TAIL_LINES - cause.length)).join('\n');
  if (rest.length > LOG_TAIL_MAX_CHARS) rest = rest.slice(-LOG_TAIL_MAX_CHARS);
  return [...cause, rest].join('\n');
}
