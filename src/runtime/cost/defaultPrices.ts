/**
 * The price table shipped with the server: Tinker's per-million-token rates, per base model, as
 * read on the date given. Only models whose prefill, sample and train rates were all found are
 * listed; the operator adds or replaces entries under `prices` in the RL_MCP_CONFIG file, and the
 * doctor warns when the table is old or lacks the locked model (docs/architecture.md, "Cost").
 */
import type { ModelPrice } from '../../core/settings.js';

/** Tinker's Models & Pricing page, where these figures were read. */
export const TINKER_PRICING_URL = 'https://tinker-docs.thinkingmachines.ai/tinker/models/models_and_pricing/';

export const DEFAULT_PRICES: Readonly<Record<string, ModelPrice>> = {
  // Read after the rate rise of 2026-07-17.
  'Qwen/Qwen3-8B': { prefill: 0.195, sample: 0.6, train: 0.44, as_of: '2026-10-07', source: TINKER_PRICING_URL },
};
