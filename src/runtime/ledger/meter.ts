/**
 * What a sampling job (an evaluation, an inference test) spends on Tinker, from the tokens the
 * endpoint reported for each exchange (`usage`: prompt tokens prefilled, completion tokens
 * sampled), priced as sampling at the price table's prefill and sample rates, and written to the
 * ledger as the job's figure so far after every exchange. Any sampler of any framework records
 * through `add`: the recording proxy (inference/wire/) for the processes that talk to Tinker's
 * OpenAI-compatible endpoint, another sampler with the usage it read.
 */
import type { Logger } from '../../core/logger.js';
import type { ModelPrice } from '../../core/settings.js';
import { tokensUsd } from '../cost/estimate.js';
import type { SpendKind, SpendTokens } from './entries.js';
import type { SpendLedger } from './ledger.js';

export interface SampledUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export class SamplingMeter {
  private readonly tokens: SpendTokens = { prefill: 0, sample: 0, train: 0 };
  private usd = 0;
  private readonly unpriced = new Set<string>();
  /** Where the exchanges counted came from (a model run's file stem): what was counted as it went is never counted again from its records. */
  private readonly sources = new Set<string>();

  constructor(
    private readonly ledger: SpendLedger,
    private readonly job: { kind: Exclude<SpendKind, 'run'>; id: string; model: string },
    /** The rates of a sampled model (a base model, or the base model a checkpoint is priced as). */
    private readonly priceOf: (model: string) => ModelPrice | undefined,
    private readonly logger?: Logger,
  ) {}

  /** What was spent so far, in dollars. */
  get spentUsd(): number {
    return this.usd;
  }

  /** Whether an exchange from `source` was counted. */
  saw(source: string): boolean {
    return this.sources.has(source);
  }

  /** One exchange's usage on `model` (from `source`, when said); its dollars join the job's figure in the ledger. */
  add(model: string, usage: SampledUsage, source?: string): void {
    if (source !== undefined) this.sources.add(source);
    const tokens = { prefill: usage.prompt_tokens, sample: usage.completion_tokens, train: 0 };
    this.tokens.prefill += tokens.prefill;
    this.tokens.sample += tokens.sample;
    const price = this.priceOf(model);
    if (price === undefined) {
      if (!this.unpriced.has(model)) this.logger?.warn({ [`${this.job.kind}_id`]: this.job.id, model }, 'no price for a sampled model: its tokens are not counted in dollars');
      this.unpriced.add(model);
    } else this.usd += tokensUsd(tokens, price);
    try {
      this.ledger.record({ ...this.job, usd: this.usd, tokens: { ...this.tokens }, basis: 'estimate' });
    } catch (err) {
      this.logger?.warn({ err, id: this.job.id }, 'could not write a sampling spend to the ledger');
    }
  }
}
