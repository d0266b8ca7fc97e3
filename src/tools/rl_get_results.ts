/** rl_get_results: outcome, trained weights and W&B metrics of a run (Hermes tool 8). */
import * as z from 'zod';
import { zString, zNumber, zInt, zUnknown } from '../core/schemaLeaves.js';
import { runResults } from '../runtime/wiring/reports.js';
import { DEFAULT_HISTORY_SAMPLES, MAX_HISTORY_SAMPLES } from '../runtime/wandb/reader.js';
import { runCostSchema } from './costSchemas.js';
import { DASHBOARD_URI } from '../core/resourceUris.js';
import { defineTool } from './define.js';
import { runIdInput, runStatus, wandbNumber } from './runSchemas.js';

export const rlGetResults = defineTool({
  name: 'rl_get_results',
  title: 'Get a run\'s results',
  description:
    "Results of a training run, ended or still running: outcome and reason, trained weights (tinker:// checkpoints), final W&B metrics with a sampled history and sparklines, spend and checkpoint storage cost. Not rate limited. Next: rl_evaluate (did training help?) and rl_checkpoints (keep or delete weights).",
  input: z
    .object({
      run_id: runIdInput,
      samples: zInt.min(1).max(MAX_HISTORY_SAMPLES).default(DEFAULT_HISTORY_SAMPLES).describe('History rows to return'),
    })
    .strict(),
  output: z.object({
    run_id: zString,
    status: runStatus,
    environment: zString,
    wandb_project: zString,
    wandb_run_name: zString,
    wandb_url: zString.optional(),
    final_metrics: z.record(zString, zUnknown).optional(),
    history: z.array(z.record(zString, zUnknown)).optional().describe('Rows joined on _step; non-finite values are the strings "NaN"/"Infinity", null = not logged at that step'),
    history_summary: z
      .record(zString, z.object({ points: zInt, first_step: zNumber, last_step: zNumber, first: wandbNumber, last: wandbNumber, min: zNumber.nullable(), max: zNumber.nullable(), mean: zNumber.nullable() }))
      .optional()
      .describe('Per history key over its sampled points'),
    history_file: zString.optional().describe('Every sampled row, when history holds fewer'),
    history_note: zString.optional(),
    sparklines: z.record(zString, zString).optional(),
    wandb_error: zString.optional(),
    metrics_source: zString.optional().describe('Where the metrics came from when not W&B: the run\'s own metrics.jsonl (a cookbook run)'),
    weights: z.object({
      latest: zString.nullable(),
      checkpoints: z.array(zString),
      checkpoint_count: zInt,
      final_reported: zString.nullable(),
    }),
    outcome: z.object({ status: runStatus, reason: zString }),
    progress: z.object({ step: zInt, total_steps: zInt }).optional(),
    cost: runCostSchema.optional(),
    storage: z
      .object({ checkpoints: zInt.nullable(), size_bytes: zNumber.nullable(), monthly_cost_usd: zNumber.nullable(), checked_at: zString, note: zString })
      .optional()
      .describe("What the run's checkpoints on Tinker hold and cost to keep per month ($0.10/GB-month, from their sizes); rl_checkpoints acts on them"),
    evaluations: z
      .array(z.object({ eval_id: zString, created_at: zString, status: zString, method: zString, checkpoints: z.array(zString), verdict: zString.optional(), summary: zString.optional() }))
      .optional()
      .describe("rl_evaluate's evaluations of this run, newest first (at most 10); rl_evaluate({eval_id}) for one in full"),
    test_metrics: z
      .object({ steps: z.tuple([zInt, zInt]), metrics: z.record(zString, z.object({ base: zNumber, trained: zNumber, diff: zNumber })), note: zString })
      .optional()
      .describe("A cookbook recipe's own test-set metrics (test/ keys of metrics.jsonl): first logged step (0: the base model) against the last"),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  ui: { resourceUri: DASHBOARD_URI },
  handler: ({ run_id, samples }, { runtime, signal }) => runResults(runtime, run_id, samples, signal),
});
