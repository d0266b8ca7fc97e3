/** rl_compare_runs: runs of a sweep side by side, what differs between them and which is best. */
import * as z from 'zod';
import { zString, zNumber, zInt, zUnknown } from '../core/schemaLeaves.js';
import { compareRuns } from '../runtime/wiring/compare.js';
import { DIRECTIONS, KEY_METRICS } from '../runtime/wandb/keyMetrics.js';
import { DASHBOARD_URI } from '../core/resourceUris.js';
import { defineTool } from './define.js';
import { jsonValue } from './rl_edit_config.js';
import { healthSchema, listedRunFields, runIdInput, wandbNumber } from './runSchemas.js';

const MAX_COMPARED_RUNS = 10;

const metricSummary = z.object({
  final: wandbNumber.describe('W&B summary value (the last one logged)'),
  best: zNumber.nullable().describe('Best finite value over the sampled history'),
  sparkline: zString.optional(),
});

export const rlCompareRuns = defineTool({
  name: 'rl_compare_runs',
  title: 'Compare training runs',
  description:
    "Compares 2 to 10 runs (a sweep): the config fields that differ, and per run status, steps and W&B final and best metrics with sparklines; best names the winner by metric. Read-only, one W&B lookup per run. Next: rl_get_results on the best run.",
  input: z
    .object({
      run_ids: z
        .array(runIdInput)
        .min(2)
        .max(MAX_COMPARED_RUNS)
        .refine((ids) => new Set(ids).size === ids.length, 'run_ids must be distinct')
        .describe(`2 to ${MAX_COMPARED_RUNS} distinct run ids from rl_list_runs`),
      metric: z
        .enum(KEY_METRICS)
        .default('reward_mean')
        .describe(`Metric that picks the best run: ${KEY_METRICS.map((m) => `${m} (${DIRECTIONS[m]} is better)`).join(', ')}`),
    })
    .strict(),
  output: z.object({
    metric: z.enum(KEY_METRICS),
    best: z
      .object({
        run_id: zString,
        metric: z.enum(KEY_METRICS),
        value: zNumber,
        direction: z.enum(['higher', 'lower']),
        rule: zString,
        tied_with: z.array(zString).optional(),
        left_out: z.array(zString).optional(),
      })
      .nullable(),
    best_unavailable: zString.optional().describe('Why best is null'),
    differing_config: z.record(zString, z.record(zString, zUnknown)).describe('Field -> run_id -> value (null = absent)'),
    differing_fields: zInt,
    differing_config_omitted: z.array(zString).optional(),
    same_config_fields: zInt,
    run_names: z.record(zString, z.object({ wandb_name: jsonValue, wandb_run_name: jsonValue })),
    runs: z.array(
      z.object({
        ...listedRunFields,
        health: healthSchema.optional().describe('As in rl_list_runs: the main reason only'),
        steps: zInt.nullable().describe('Trainer steps completed'),
        metrics: z.partialRecord(z.enum(KEY_METRICS), metricSummary).optional(),
        wandb_url: zString.optional(),
        wandb_error: zString.optional(),
        metrics_source: zString.optional().describe('Where the metrics came from when not W&B: the run\'s own metrics.jsonl (a cookbook run)'),
        config_error: zString.optional(),
        assigned: z
          .object({ rollout_server_url: jsonValue, base_urls: z.array(jsonValue), checkpoint_dir: jsonValue })
          .optional()
          .describe("What the server gave this run of its own (its ports' URLs, its checkpoint directory): never a config difference"),
      }),
    ),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  ui: { resourceUri: DASHBOARD_URI },
  handler: ({ run_ids, metric }, { runtime, signal }) => compareRuns(runtime, run_ids, metric, signal),
});
