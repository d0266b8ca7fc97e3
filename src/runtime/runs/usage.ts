/**
 * A run's usage as Tinker itself reports it (billed dollars, checkpoint storage), kept in its
 * run.json (`tinker`) so that every reader has it without asking: budgets (of any server), the
 * listing, the rate-limited status. It is asked again only once older than
 * RL_BILLING_REFRESH_SECONDS, by the run's watchdog while it trains and by the full answers
 * (rl_check_status, rl_get_results) otherwise, one question per run at a time.
 *
 * Which Tinker training runs are the run's: those its tinker:// paths name, as its framework's
 * training summary lists them (`TrainingSummary.checkpoints` and `latest`, framework.ts), so a
 * framework says where its paths come from by filling its summary, not by being named here.
 */
import type { CoreServices } from '../../core/services.js';
import type { TinkerApi } from '../tinker/helper.js';
import { trainingRunIdsOf } from '../tinker/paths.js';
import { USAGE_ANSWER, usageBeforeCheckpoints, usageOf, type RunTinkerUsage } from '../tinker/usage.js';
import { storageOf, type TinkerCheckpoint } from '../tinker/checkpoints.js';
import type { TrainingSummary } from './seams/framework.js';
import { frameworkOf } from './choice/frameworks.js';
import { isDamaged, type RunRecord } from './seams/record.js';
import type { RunStore } from './registry/store.js';

/** The deadline of one question: a full status answer waits for it at most this long. */
export const USAGE_QUESTION_SECONDS = 30;
/** A run that had no checkpoint yet is looked at again this soon: its first one names its session. */
const BEFORE_CHECKPOINTS_SECONDS = 30;

export class RunUsage {
  private readonly asking = new Map<string, Promise<RunTinkerUsage>>();

  constructor(
    private readonly core: CoreServices,
    private readonly api: TinkerApi,
    private readonly store: RunStore,
  ) {}

  /**
   * Never asked, asked before the run last ended (its last checkpoints came after), or asked longer
   * ago than RL_BILLING_REFRESH_SECONDS (30 s while the run had no checkpoint).
   */
  due(record: RunRecord, nowMs = Date.now()): boolean {
    const { tinker } = record;
    const checked = Date.parse(tinker?.checked_at ?? '');
    if (record.ended_at && checked < Date.parse(record.ended_at)) return true;
    const refresh = this.core.settings.cost.billingRefreshSeconds;
    const wait = tinker?.training_run_ids.length === 0 ? Math.min(refresh, BEFORE_CHECKPOINTS_SECONDS) : refresh;
    return !(nowMs - checked < wait * 1000);
  }

  /** The watchdog's rule: due, and the run trained that long already (Tinker's billing lags by hours: a new run has none). */
  dueWhileTraining(record: RunRecord, nowMs = Date.now()): boolean {
    const running = Date.parse(record.running_at ?? '');
    return this.due(record, nowMs) && nowMs - running >= this.core.settings.cost.billingRefreshSeconds * 1000;
  }

  /** Asks Tinker about the run now; a question already under way for it is shared. */
  lookUp(record: RunRecord, summary?: TrainingSummary): Promise<RunTinkerUsage> {
    const pending = this.asking.get(record.run_id);
    if (pending) return pending;
    const question = this.ask(record, summary).finally(() => this.asking.delete(record.run_id));
    this.asking.set(record.run_id, question);
    return question;
  }

  /** The record with its usage fresh: asked when due and written to run.json; as it was otherwise (an answer never fails for it). */
  async current(record: RunRecord, summary?: TrainingSummary): Promise<RunRecord> {
    if (!this.due(record)) return record;
    let usage: RunTinkerUsage;
    try {
      usage = await this.lookUp(record, summary);
    } catch (err) {
      this.core.logger.warn({ err, run_id: record.run_id }, "could not ask Tinker for the run's usage");
      return record;
    }
    const written = this.store.tryUpdate(record.run_id, (r) => {
      r.tinker = usage;
    });
    return written === undefined || isDamaged(written) ? { ...record, tinker: usage } : written;
  }

  /** After checkpoints were deleted: the storage the run holds now, kept until the next question. */
  recordStorage(runId: string, remaining: readonly TinkerCheckpoint[]): void {
    this.store.tryUpdate(runId, (r) => {
      if (r.tinker === undefined) return false;
      r.tinker.storage = storageOf(remaining, Date.now());
      delete r.tinker.storage_error;
    });
  }

  private async ask(record: RunRecord, summary?: TrainingSummary): Promise<RunTinkerUsage> {
    summary ??= await frameworkOf(record).readSummary(record);
    const ids = trainingRunIdsOf([...summary.checkpoints, summary.latest]);
    if (ids.length === 0) return usageBeforeCheckpoints(Date.now());
    const window = { start: record.started_at, ...(record.ended_at ? { end: record.ended_at } : {}) };
    const answer = await this.api.ask('usage', { training_run_ids: ids, ...window }, USAGE_ANSWER, { timeoutSeconds: USAGE_QUESTION_SECONDS });
    const { prices } = this.core.settings.cost;
    // The table as it is now, else the rates the run started with.
    const priceOf = (model: string | null) => (model === null ? undefined : (prices[model] ?? (record.cost?.model === model ? record.cost.price : undefined)));
    return usageOf(answer, ids, priceOf, Date.now());
  }
}
