/**
 * Is the run learning? A verdict from what the supervisor observed (run.json's `observed`), so a
 * status check, rate limited or not, judges it without reading a log. "Alive" is not "healthy":
 * the upstream trainer waits for a batch for ever, so a run whose environment produces nothing
 * keeps every process alive while it pays for sampling. See docs/architecture.md, "Health".
 */
import type { RunProcess } from '../../../core/files/home.js';
import { frameworkOf } from '../choice/frameworks.js';
import type { EnvLogSignals, LogEvidence, RunRecord, TrainerLogSignals } from '../seams/record.js';

export const HEALTH_VERDICTS = ['starting', 'waiting_for_data', 'healthy', 'degraded', 'stalled', 'stopping', 'completed', 'failed', 'stopped', 'unknown'] as const;
export type HealthVerdict = (typeof HEALTH_VERDICTS)[number];

export interface HealthReason {
  code: string;
  message: string;
  evidence?: { line?: string; count?: number; at?: string; process?: RunProcess };
}

export interface Health {
  verdict: HealthVerdict;
  reasons: HealthReason[];
  /** Trainer steps completed, and when the last one completed (as observed). */
  last_step: number | null;
  last_step_at: string | null;
  /** Since the last trainer step or new data (or since training began, before either). */
  seconds_since_progress: number | null;
  /** When the supervisor last looked at the run; null when it never did. */
  observed_at: string | null;
}

export interface HealthPolicy {
  /** RL_STALL_SECONDS: no step and no new data for this long is a stall. */
  stallSeconds: number;
}

/**
 * Before the first trainer step the stall limit is this many times RL_STALL_SECONDS: the trainer
 * loads the model and the environment its data set, and the first batch needs a full queue.
 */
export const FIRST_STEP_ALLOWANCE = 2;

const ENV_SIGNALS: Record<keyof EnvLogSignals, { code: string; what: string }> = {
  connection_errors: { code: 'env_connection_errors', what: 'the environment cannot reach its model server' },
  dropped_groups: { code: 'env_dropped_groups', what: 'the environment drops groups (all scores equal, or no usable rollout): no learning signal from them' },
  errors: { code: 'env_errors', what: 'the environment logs errors and carries on' },
};

const iso = (ms: number): string => new Date(ms).toISOString();
const msOf = (at: string | undefined): number | undefined => {
  const ms = Date.parse(at ?? '');
  return Number.isNaN(ms) ? undefined : ms;
};
const latest = (...values: (number | undefined)[]): number | undefined => {
  const known = values.filter((v): v is number => v !== undefined);
  return known.length > 0 ? Math.max(...known) : undefined;
};

const TRAINER_SIGNALS: Record<keyof TrainerLogSignals, { code: string; what: string }> = {
  billing_paused: { code: 'billing_paused', what: 'Tinker paused the job for billing (HTTP 402): the SDK waits and retries, and no batch finishes until the balance is settled' },
  errors: { code: 'trainer_errors', what: 'the trainer logs errors and carries on' },
};

/** The log signals seen since `sinceMs`, each a reason quoting its latest line. */
function signalReasons<K extends string>(signals: Partial<Record<K, LogEvidence>> | undefined, about: Record<K, { code: string; what: string }>, process: RunProcess, sinceMs: number): HealthReason[] {
  const reasons: HealthReason[] = [];
  for (const kind of Object.keys(about) as K[]) {
    const seen: LogEvidence | undefined = signals?.[kind];
    if (seen === undefined || (msOf(seen.at) ?? 0) < sinceMs) continue;
    const { code, what } = about[kind];
    reasons.push({ code, message: `${what} (${seen.count} time${seen.count === 1 ? '' : 's'} so far)`, evidence: { line: seen.line, count: seen.count, at: seen.at, process } });
  }
  return reasons;
}

const envReasons = (seen: RunRecord['observed'], sinceMs: number): HealthReason[] => [
  ...signalReasons<keyof TrainerLogSignals>(seen?.trainer_signals, TRAINER_SIGNALS, 'trainer', sinceMs),
  ...signalReasons<keyof EnvLogSignals>(seen?.env, ENV_SIGNALS, 'env', sinceMs),
];

function endedHealth(record: RunRecord, base: Omit<Health, 'verdict' | 'reasons'>): Health {
  const reasons: HealthReason[] = [];
  if (record.error) reasons.push({ code: record.status, message: record.error, evidence: { at: record.ended_at, ...(record.error_process ? { process: record.error_process } : {}) } });
  return { ...base, verdict: record.status as HealthVerdict, reasons };
}

/** Flat rewards over this many steps mean the policy gets the same reward whatever it does. */
export const FLAT_REWARD_STEPS = 10;

/** What the trainer's own numbers say: a loss that is not a number, a reward that does not move. */
function trainerReasons(seen: RunRecord['observed']): HealthReason[] {
  const reasons: HealthReason[] = [];
  if (typeof seen?.last_loss === 'string') {
    reasons.push({ code: 'loss_not_finite', message: `The trainer's last loss is ${seen.last_loss}: training has diverged.`, evidence: { line: `Loss: ${seen.last_loss.toLowerCase()}`, process: 'trainer' } });
  }
  const untrained = seen?.untrained_steps;
  if (untrained !== undefined) {
    const steps = untrained.steps === 1 ? 'last step' : `last ${untrained.steps} steps`;
    reasons.push({
      code: 'no_learning_signal',
      message:
        `The trainer's ${steps} trained nothing: every group of their batches scored alike (all right or all wrong), so every advantage is zero ` +
        '("Got 0 Datum objects"); sampling is paid for and nothing is learned. The model finds these items too easy or too hard: ' +
        'rl_test_inference shows how each model scores them; a model nearer their difficulty, or harder or easier items, gives a signal.',
      evidence: { line: untrained.line, count: untrained.steps, process: 'trainer' },
    });
  }
  const rewards = seen?.recent_rewards ?? [];
  if (rewards.length >= FLAT_REWARD_STEPS && rewards.every((r) => r === rewards[0])) {
    reasons.push({
      code: 'reward_flat',
      message: `reward/mean has been ${String(rewards[0])} for the last ${rewards.length} steps: no learning signal reaches the trainer (every group scores alike).`,
      evidence: { line: `Reward/mean: ${String(rewards[0])}`, count: rewards.length, process: 'trainer' },
    });
  }
  return reasons;
}

/** The verdict of a run that trains: waiting for data, healthy, degraded or stalled. */
function trainingHealth(record: RunRecord, nowMs: number, policy: HealthPolicy, base: Omit<Health, 'verdict' | 'reasons'>): Health {
  const seen = record.observed;
  const began = msOf(record.running_at) ?? msOf(record.phase_started_at) ?? nowMs;
  // A resumed run began again: what it did before its last start is no progress of this one.
  const progressMs = latest(msOf(seen?.step_completed_at), msOf(seen?.data_last_at), began)!;
  const firstStep = (msOf(seen?.step_completed_at) ?? -Infinity) < began;
  const limit = policy.stallSeconds * (firstStep ? FIRST_STEP_ALLOWANCE : 1);
  const idle = Math.max(0, Math.round((nowMs - progressMs) / 1000));
  const recent = envReasons(seen, nowMs - limit * 1000);
  // An environment that exited without failing the run (exit 0) stops once it has queued enough
  // data: normal, worth saying, not trouble. If the trainer then starves, the stall says so.
  const envGone = record.processes.env?.state === 'exited' ? [{ code: 'env_finished', message: 'the environment has exited (it stops once it has queued enough data); the trainer goes on with what is queued', evidence: { at: record.processes.env.ended_at ?? undefined, process: 'env' as const } }] : [];
  const terms = frameworkOf(record).healthTerms;
  const withIdle = { ...base, seconds_since_progress: idle };
  if (idle > limit) {
    const what = seen?.data_first_at === undefined ? terms.noData : terms.noProgress;
    const allowance = firstStep ? ` (before the first step${record.resumes?.length ? ' since the run resumed' : ''} the limit is ${FIRST_STEP_ALLOWANCE} x RL_STALL_SECONDS=${policy.stallSeconds})` : ' (RL_STALL_SECONDS)';
    const stalled: HealthReason = { code: 'stalled', message: `Stalled: ${what} for ${idle} s, more than ${limit} s${allowance}; ${terms.stallConsequence}.`, evidence: { at: iso(progressMs) } };
    // Every sign since the last progress is evidence of the stall, however long ago (a billing pause is logged once a minute).
    return { ...withIdle, verdict: 'stalled', reasons: [stalled, ...envReasons(seen, progressMs), ...envGone] };
  }
  if (seen?.data_first_at === undefined) {
    const waiting: HealthReason = { code: 'waiting_for_data', message: `${terms.noData.charAt(0).toUpperCase()}${terms.noData.slice(1)} yet (${idle} s since training began; stalled after ${limit} s).`, evidence: { at: iso(began) } };
    return { ...withIdle, verdict: 'waiting_for_data', reasons: [waiting, ...recent, ...envGone] };
  }
  // Connection errors and other errors since the last new data mean the data is drying up.
  const lastData = msOf(seen.data_last_at) ?? began;
  const troubling = [...trainerReasons(seen), ...recent.filter((r) => (msOf(r.evidence?.at) ?? 0) >= lastData)];
  if (troubling.length > 0) return { ...withIdle, verdict: 'degraded', reasons: [...troubling, ...recent.filter((r) => !troubling.includes(r)), ...envGone] };
  return { ...withIdle, verdict: 'healthy', reasons: [...recent, ...envGone] };
}

/** For listings: the verdict with only its main reason, evidence lines cut short. */
export function mainReasonOnly(health: Health): Health {
  const [main] = health.reasons;
  const line = main?.evidence?.line;
  const evidence = main?.evidence && line !== undefined && line.length > 160 ? { ...main.evidence, line: `${line.slice(0, 160)}...` } : main?.evidence;
  return { ...health, reasons: main ? [{ ...main, message: main.message.slice(0, 300), ...(evidence ? { evidence } : {}) }] : [] };
}

/** The health of a run at `nowMs`, from its record alone. */
export function assessHealth(record: RunRecord, nowMs: number, policy: HealthPolicy): Health {
  const seen = record.observed;
  const base = {
    last_step: seen?.steps_completed ?? null,
    last_step_at: seen?.step_completed_at ?? null,
    seconds_since_progress: null,
    observed_at: seen?.observed_at ?? null,
  };
  switch (record.status) {
    case 'completed':
    case 'failed':
    case 'stopped':
      return endedHealth(record, base);
    case 'stopping': {
      const message = record.outcome === undefined ? 'The run is being stopped.' : `The run ended ${record.outcome}${record.error ? ` (${record.error})` : ''}; its processes are being stopped.`;
      return { ...base, verdict: 'stopping', reasons: [{ code: 'stopping', message, evidence: { at: record.stop_requested_at ?? record.phase_started_at } }] };
    }
    case 'starting':
      if (record.queued !== undefined) return { ...base, verdict: 'starting', reasons: [{ code: 'queued', message: `Queued: ${record.queued.reason}`, evidence: { at: record.queued.since } }] };
      return { ...base, verdict: 'starting', reasons: [{ code: record.phase, message: `Starting (${record.phase}).`, evidence: { at: record.phase_started_at } }] };
    case 'running':
      return trainingHealth(record, nowMs, policy, base);
  }
}
