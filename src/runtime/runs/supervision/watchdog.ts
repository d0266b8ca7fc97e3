/**
 * The stall watchdog of a training run. Every few seconds it looks at the run (its framework's observer),
 * keeps what it saw in run.json, moves the phase from `waiting_for_data` to `training` once data
 * reaches the API, and judges health: a stall (no trainer step and no new data for
 * RL_STALL_SECONDS, twice that before the first step) is logged, and with RL_STALL_ACTION=stop it
 * ends the run as failed; a run whose estimated spend reached RL_MAX_RUN_COST_USD, or once the spend
 * ledger's window total (every run, evaluation and inference test of RL_HOME) reached
 * RL_MAX_TOTAL_COST_USD, ends stopped (spend: the estimate, or what Tinker billed when more, asked
 * again every RL_BILLING_REFRESH_SECONDS while the run trains; the run's own figure reaches the
 * ledger with every write of its run.json, registry/store.ts).
 * The upstream trainer waits
 * for a batch for ever, so without this a run whose environment produces nothing stays "running"
 * while sampling is paid for.
 */
import type { Logger } from '../../../core/logger.js';
import type { Settings } from '../../../core/settings.js';
import { assessHealth } from '../watching/health.js';
import type { RunFramework, RunObserver, Verdict } from '../seams/framework.js';
import { now, type TrackedRun } from './trackedRun.js';
import { budgetStop, recordRunSpend, runLedgerEntry, type TotalBudget } from '../watching/runCost.js';
import { budgetWindowOf } from '../../ledger/budget.js';
import { ledgerOf } from '../../ledger/ledger.js';
import type { RunRecord } from '../seams/record.js';
import type { RunTinkerUsage } from '../../tinker/usage.js';

/** Tinker's word on a run's usage (runs/usage.ts): whether it is due to be asked again, and asking it. */
export interface UsageSource {
  dueWhileTraining(record: RunRecord): boolean;
  lookUp(record: RunRecord): Promise<RunTinkerUsage>;
}

/** How often the watchdog looks. */
export const OBSERVE_MS = 2_000;
/** A change is written at most this often; with no change, run.json is still stamped this often. */
const WRITE_EVERY_MS = 5_000;
const HEARTBEAT_MS = 30_000;

export class Watchdog {
  /** Also the supervisor's, for the last look once the processes are gone. */
  readonly observer: RunObserver;
  private readonly timer: NodeJS.Timeout;
  /** The look under way, if any: looks never overlap. */
  private looking?: Promise<void>;
  private lastWrite = 0;
  private warnedStall = false;
  /** A question to Tinker about the run's usage under way: at most one, never awaited by a look. */
  private asking?: Promise<void>;
  private closed = false;

  constructor(
    private readonly ctx: {
      settings: Settings;
      logger: Logger;
      framework: RunFramework;
      /** The runs active now, any server's: the window's spend is said as theirs when it holds nothing else. */
      activeRunIds(): string[];
      usage: UsageSource;
    },
    private readonly run: TrackedRun,
    /** Called once when the run must end: a stall with RL_STALL_ACTION=stop, or its spend reached its budget. */
    private readonly onStall: (verdict: Verdict) => void,
  ) {
    this.observer = ctx.framework.observer(() => run.record);
    this.timer = setInterval(() => void this.tick(), OBSERVE_MS);
    this.timer.unref();
    void this.tick();
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
  }

  /** A look before the run's outcome is recorded, kept whatever the write throttle says. */
  async flush(): Promise<void> {
    this.close();
    await this.looking;
    this.lastWrite = 0;
    await this.tick();
  }

  private tick(): Promise<void> {
    this.looking ??= this.lookOnce()
      // A timer must not crash the server: the next look tries again.
      .catch((err: unknown) => this.ctx.logger.error({ err, run_id: this.run.runId }, 'watchdog look failed'))
      .finally(() => (this.looking = undefined));
    return this.looking;
  }

  private async lookOnce(): Promise<void> {
    const { next, changed } = await this.observer.look(this.run.record.observed, now());
    if (this.run.record.status !== 'running') return;
    const force = this.lastWrite === 0;
    const firstData = this.run.record.phase === 'waiting_for_data' && next.data_first_at !== undefined;
    // A kind of trouble seen for the first time is evidence a status check should have at once.
    const newSignal = Object.keys(next.env ?? {}).length > Object.keys(this.run.record.observed?.env ?? {}).length;
    // A finished step, or a batch that moves the spend figure, is written at once: the other runs'
    // watchdogs read the spend in the ledger for the total budget, and run.json keeps its highest.
    const stepped = next.steps_completed !== this.run.record.observed?.steps_completed || runLedgerEntry({ ...this.run.record, observed: next })?.usd !== runLedgerEntry(this.run.record)?.usd;
    const since = Date.now() - this.lastWrite;
    if (force || firstData || newSignal || stepped || (changed && since >= WRITE_EVERY_MS) || since >= HEARTBEAT_MS) {
      this.run.update((r) => {
        r.observed = next;
        if (firstData) {
          r.phase = 'training';
          r.phase_started_at = next.data_first_at!;
        }
      });
      this.lastWrite = Date.now();
    }
    this.judge({ ...this.run.record, observed: next });
    this.askUsageWhenDue();
  }

  /** Billed spend moves budgets too: asked in the background, written to run.json, judged at the next look. */
  private askUsageWhenDue(): void {
    const { usage } = this.ctx;
    if (this.closed || this.asking !== undefined || this.run.record.status !== 'running' || !usage.dueWhileTraining(this.run.record)) return;
    this.asking = usage
      .lookUp(this.run.record)
      .then((found) => {
        if (this.closed) return;
        this.run.update((r) => {
          r.tinker = found;
        });
      })
      .catch((err: unknown) => this.ctx.logger.warn({ err, run_id: this.run.runId }, "could not ask Tinker for the run's usage"))
      .finally(() => (this.asking = undefined));
  }

  /** The campaign budget as the ledger's window holds it now; none without RL_MAX_TOTAL_COST_USD. */
  private totalBudget(record: RunRecord): TotalBudget | undefined {
    const { settings } = this.ctx;
    const capUsd = settings.cost.maxTotalUsd;
    if (capUsd === undefined) return undefined;
    const window = budgetWindowOf(settings);
    const ledger = ledgerOf(settings.home);
    // This look's figure may not be written to run.json yet (writes are throttled): the ledger has it first.
    recordRunSpend(ledger, record, this.ctx.logger);
    return { capUsd, window, totals: ledger.totals(window), activeRunIds: new Set(this.ctx.activeRunIds()) };
  }

  private judge(record: TrackedRun['record']): void {
    // Spend is an estimate from steps done: the run stops as soon as it says a budget is reached.
    const overBudget = budgetStop(record, this.totalBudget(record));
    if (overBudget !== undefined) {
      this.close();
      this.ctx.logger.warn({ run_id: this.run.runId, reason: overBudget }, 'run stopped: budget reached');
      this.onStall({ status: 'stopped', error: overBudget });
      return;
    }
    const health = assessHealth(record, Date.now(), { stallSeconds: this.ctx.settings.stall.seconds });
    if (health.verdict !== 'stalled') {
      this.warnedStall = false;
      return;
    }
    const [stall, ...evidence] = health.reasons;
    const cause = evidence.find((r) => r.evidence?.line !== undefined);
    const error = `${stall!.message}${cause ? ` Last sign from the ${cause.evidence?.process ?? 'run'}: ${cause.evidence!.line}` : ''}`;
    if (this.ctx.settings.stall.action === 'stop') {
      this.close();
      this.onStall({ status: 'failed', error, error_process: cause?.evidence?.process ?? this.ctx.framework.healthTerms.stallProcess });
    } else if (!this.warnedStall) {
      this.warnedStall = true;
      this.ctx.logger.warn({ run_id: this.run.runId, reason: error }, 'run stalled (RL_STALL_ACTION=warn: reported, not stopped)');
    }
  }
}
