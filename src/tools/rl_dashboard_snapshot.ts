/**
 * rl_dashboard_snapshot: what the dashboard view (MCP Apps) draws, for the view alone
 * (visibility ["app"]): the host hides it from its model, and only clients that render Apps list it.
 */
import * as z from 'zod';
import { zString, zNumber, zInt, zBoolean } from '../core/schemaLeaves.js';
import { MAX_DASHBOARD_RUNS } from '../runtime/wiring/dashboard.js';
import { RUN_PROCESSES } from '../core/files/home.js';
import { DASHBOARD_URI } from '../core/resourceUris.js';
import { HEALTH_VERDICTS } from '../runtime/runs/watching/health.js';
import { KEY_METRICS } from '../runtime/wandb/keyMetrics.js';
import { runCostSchema, spendSchema } from './costSchemas.js';
import { defineTool } from './define.js';
import { perProcess, processState, runIdInput, runStatus } from './runSchemas.js';

const chartSeries = z.object({
  source: z.enum(['wandb', 'trainer_log']),
  points: z.array(z.tuple([zNumber, zNumber])).describe('[step, value], finite values in step order'),
  thinned_from: zInt.optional(),
  non_finite: zInt.optional(),
});

const dashboardRun = z.object({
  run_id: zString,
  status: runStatus,
  phase: zString.optional(),
  environment: zString.optional(),
  health: z
    .object({
      verdict: z.enum(HEALTH_VERDICTS),
      reasons: z.array(z.object({ code: zString, message: zString, line: zString.optional() })),
      last_step: zInt.nullable(),
      seconds_since_progress: zInt.nullable(),
      observed_at: zString.nullable(),
    })
    .optional(),
  processes: perProcess(processState).optional(),
  progress: z.object({ step: zInt, total_steps: zInt }).optional(),
  checkpoint: zString.nullable().optional(),
  started_at: zString.optional(),
  ended_at: zString.optional(),
  running_time_minutes: zNumber.optional(),
  cost: runCostSchema.optional().describe('The spend estimate rl_check_status gives, when the run has one'),
  error: zString.optional(),
  error_process: z.enum(RUN_PROCESSES).optional(),
  log_tail: zString.optional(),
  series: z.partialRecord(z.enum(KEY_METRICS), chartSeries),
  not_logged: z.object({ loss: zString.optional() }).optional().describe('Curves the run never logs, and why'),
  wandb_url: zString.optional(),
  wandb_error: zString.optional(),
});

export const rlDashboardSnapshot = defineTool({
  name: 'rl_dashboard_snapshot',
  title: 'Dashboard snapshot (for the dashboard view)',
  description:
    "For the training dashboard view (MCP Apps), not the model: per run its status, health, processes, latest checkpoint, a failed process's log tail and curves; the budget window's spend. Read-only.",
  input: z
    .object({
      run_ids: z
        .array(runIdInput)
        .min(1)
        .max(MAX_DASHBOARD_RUNS)
        .refine((ids) => new Set(ids).size === ids.length, 'run_ids must be distinct')
        .describe(`1 to ${MAX_DASHBOARD_RUNS} distinct run ids`),
    })
    .strict(),
  output: z.object({
    generated_at: zString,
    active: zBoolean,
    poll_after_seconds: zNumber.nullable(),
    runs: z.array(dashboardRun),
    spend: spendSchema,
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  ui: { resourceUri: DASHBOARD_URI, visibility: ['app'] },
  handler: ({ run_ids }, { runtime, signal }) => runtime.dashboard.snapshot(run_ids, signal),
});
