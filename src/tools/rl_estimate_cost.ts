/** rl_estimate_cost: what a training run would cost on Tinker, before starting it. */
import * as z from 'zod';
import { zString } from '../core/schemaLeaves.js';
import type { JsonValue } from '../core/json.js';
import { costEstimate } from '../runtime/wiring/costs.js';
import { estimateSchema } from './costSchemas.js';
import { defineTool } from './define.js';
import { configValue } from './rl_edit_config.js';
import { environmentName } from './rl_select_environment.js';

export const rlEstimateCost = defineTool({
  name: 'rl_estimate_cost',
  title: 'Estimate what a run would cost',
  description:
    "Estimates the Tinker dollars (low / expected / high) of the training run rl_start_training would start with the same arguments; starts nothing. Run rl_test_inference first: without the lengths it measured only the high bound is known. Also says whether a start fits the operator's cost limits.",
  input: z
    .object({
      environment: environmentName.optional().describe("Estimate a run of this environment from its config_init() values instead of the saved selection's"),
      config: z.record(zString.min(1).max(128), configValue).optional().describe('Field -> value for this estimate only, as rl_start_training takes them'),
    })
    .strict(),
  output: estimateSchema,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(args, { runtime, signal }) {
    const selected = await runtime.selection.forRun({ ...args, config: args.config as Record<string, JsonValue> | undefined }, signal);
    return costEstimate(runtime, selected.config);
  },
});
