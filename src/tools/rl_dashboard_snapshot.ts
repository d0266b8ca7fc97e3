/**
 * rl_dashboard_snapshot: what the dashboard view (MCP Apps) draws, for the view alone
 * (visibility ["app"]): the host hides it from its model, and only clients that render Apps list it.
 */
import * as z from 'zod';
import { MAX_DASHBOARD_RUNS } from '../runtime/wiring/dashboard.js';
import { RUN_PROCESSES } from '../core/files/home.js';
import { DASHBOARD_URI } from '../core/resourceUris.js';
import { HEALTH_VERDICTS } from '../runtime/runs/watching/health.js';
import { KEY_METRICS } from '../runtime/wandb/keyMetrics.js';
import { runCostSchema } from './costSchemas.js';
import { defineTool } from './define.js';
import { perProcess, processState, runIdInput, runStatus } from './runSchemas.js';

const chartSeries = z.object({
  source: z.enum(['wandb', 'trainer_log']),
  points: z.array(z.tuple([z.number(), z.number()])).describe('[step, value], finite values in step order'),
  thinned_from: z.number().int().optional(),
  non_finite: z.number().int().optional(),
});

const dashboardRun = z.object({
  run_id: z.string(),
  status: runStatus,
  phase: z.string().optional(),
  environment: z.string().optional(),
  health: z
    .object({
      verdict: z.enum(HEALTH_VERDICTS),
      reasons: z.array(z.object({ code: z.string(), message: z.string(), line: z.string().optional() })),
      last_step: z.number().int().nullable(),
      seconds_since_progress: z.number().int().nullable(),
      observed_at: z.string().nullable(),
    })
    .optional(),
  processes: perProcess(processState).optional(),
  progress: z.object({ step: z.number().int(), total_steps: z.number().int() }).optional(),
  checkpoint: z.string().nullable().optional(),
  started_at: z.string().optional(),
  ended_at: z.string().optional(),
  running_time_minutes: z.number().optional(),
  cost: runCostSchema.optional().describe('The spend estimate rl_check_status gives, when the run has one'),
  error: z.string().optional(),
  error_process: z.enum(RUN_PROCESSES).optional(),
  log_tail: z.string().optional(),
  series: z.partialRecord(z.enum(KEY_METRICS), chartSeries),
  not_logged: z.object({ loss: z.string().optional() }).optional().describe('Curves the run never logs, and why'),
  wandb_url: z.string().optional(),
  wandb_error: z.string().optional(),
});

export const rlDashboardSnapshot = defineTool({
  name: 'rl_dashboard_snapshot',
  title: 'Dashboard snapshot (for the dashboard view)',
  description:
    "For the training dashboard view (MCP Apps), not the model: per run its status, health, processes, latest checkpoint, a failed process's log tail and curves. Read-only.",
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
    generated_at: z.string(),
    active: z.boolean(),
    poll_after_seconds: z.number().nullable(),
    runs: z.array(dashboardRun),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  ui: { resourceUri: DASHBOARD_URI, visibility: ['app'] },
  handler: ({ run_ids }, { runtime, signal }) => runtime.dashboard.snapshot(run_ids, signal),
});
