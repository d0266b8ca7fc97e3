/** rl_get_results: outcome, trained weights and W&B metrics of a run (Hermes tool 8). */
import * as z from 'zod';
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
      samples: z.number().int().min(1).max(MAX_HISTORY_SAMPLES).default(DEFAULT_HISTORY_SAMPLES).describe('History rows to return'),
    })
    .strict(),
  output: z.object({
    run_id: z.string(),
    status: runStatus,
    environment: z.string(),
    wandb_project: z.string(),
    wandb_run_name: z.string(),
    wandb_url: z.string().optional(),
    final_metrics: z.record(z.string(), z.unknown()).optional(),
    history: z.array(z.record(z.string(), z.unknown())).optional().describe('Rows joined on _step; non-finite values are the strings "NaN"/"Infinity", null = not logged at that step'),
    history_summary: z
      .record(z.string(), z.object({ points: z.number().int(), first_step: z.number(), last_step: z.number(), first: wandbNumber, last: wandbNumber, min: z.number().nullable(), max: z.number().nullable(), mean: z.number().nullable() }))
      .optional()
      .describe('Per history key over its sampled points'),
    history_file: z.string().optional().describe('Every sampled row, when history holds fewer'),
    history_note: z.string().optional(),
    sparklines: z.record(z.string(), z.string()).optional(),
    wandb_error: z.string().optional(),
    metrics_source: z.string().optional().describe('Where the metrics came from when not W&B: the run\'s own metrics.jsonl (a cookbook run)'),
    weights: z.object({
      latest: z.string().nullable(),
      checkpoints: z.array(z.string()),
      checkpoint_count: z.number().int(),
      final_reported: z.string().nullable(),
    }),
    outcome: z.object({ status: runStatus, reason: z.string() }),
    progress: z.object({ step: z.number().int(), total_steps: z.number().int() }).optional(),
    cost: runCostSchema.optional(),
    storage: z
      .object({ checkpoints: z.number().int().nullable(), size_bytes: z.number().nullable(), monthly_cost_usd: z.number().nullable(), checked_at: z.string(), note: z.string() })
      .optional()
      .describe("What the run's checkpoints on Tinker hold and cost to keep per month ($0.10/GB-month, from their sizes); rl_checkpoints acts on them"),
    evaluations: z
      .array(z.object({ eval_id: z.string(), created_at: z.string(), status: z.string(), method: z.string(), checkpoints: z.array(z.string()), verdict: z.string().optional(), summary: z.string().optional() }))
      .optional()
      .describe("rl_evaluate's evaluations of this run, newest first (at most 10); rl_evaluate({eval_id}) for one in full"),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  ui: { resourceUri: DASHBOARD_URI },
  handler: ({ run_id, samples }, { runtime, signal }) => runResults(runtime, run_id, samples, signal),
});
