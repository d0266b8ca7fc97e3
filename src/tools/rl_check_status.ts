/** rl_check_status: a run's status, processes, progress and weights, rate limited per run (Hermes tool 6). */
import * as z from 'zod';
import { zString, zNumber, zInt, zBoolean } from '../core/schemaLeaves.js';
import { statusWithMetrics } from '../runtime/wiring/reports.js';
import { runCostSchema } from './costSchemas.js';
import { DASHBOARD_URI } from '../core/resourceUris.js';
import { defineTool } from './define.js';
import { healthSchema, perProcess, runKind, processLogs, processLogUris, processState, runIdInput, runStatus, wandbNumber, whereSchema } from './runSchemas.js';


export const rlCheckStatus = defineTool({
  name: 'rl_check_status',
  title: 'Check a training run',
  description:
    "Status of a training run: phase, processes, progress, health, latest checkpoint (tinker:// path) and spend; on failure the error and the log tail. Rate limited to one full check per run per window (default 30 minutes): inside it the answer is the current status with rate_limited: true. To wait for a change, call rl_wait_for_run.",
  input: z.object({ run_id: runIdInput }).strict(),
  output: z.object({
    run_id: zString,
    status: runStatus,
    rate_limited: z.literal(true).optional(),
    message: zString.optional(),
    next_check_in_seconds: zInt.optional(),
    phase: zString.optional().describe('queued (a Slurm job pending), starting_api, starting_trainer, starting_env, waiting_for_data, training, stopping or done'),
    health: healthSchema.optional(),
    environment: zString.optional(),
    framework: runKind.framework.optional(),
    placement: runKind.placement.optional(),
    slurm_job_id: zString.optional().describe('The Slurm job whose steps are the run\'s processes (placement slurm)'),
    running_time_minutes: zNumber.optional(),
    processes: perProcess(processState).optional(),
    wandb_project: zString.optional(),
    wandb_run_name: zString.optional(),
    trainer_wandb_run_name: zString.optional(),
    wandb_group: zString.optional(),
    logs: processLogs.optional(),
    log_uris: processLogUris.optional(),
    weights: zString.nullable().optional().describe('Latest tinker:// checkpoint the trainer saved'),
    progress: z.object({ step: zInt, total_steps: zInt }).optional().describe("Trainer steps completed (its 'Step k complete' lines) out of total_steps; on a rate-limited answer, as the watchdog last saw them"),
    started_at: zString.optional(),
    ended_at: zString.optional(),
    error: zString.optional(),
    log_tail: zString.optional().describe('Last lines of the log of the process at fault (secrets redacted)'),
    notes: z.array(zString).optional(),
    resumes: z
      .array(z.object({ at: zString, from_step: zInt, after: z.enum(['failed', 'stopped']), automatic: zBoolean, cause: zString.optional() }))
      .optional()
      .describe('Each time the run was started again: by rl_resume_training, or automatic (its keeper, on a transient cause, RL_AUTO_RESUME)'),
    cost: runCostSchema.optional(),
    where: whereSchema.optional(),
    metrics: z
      .object({
        step: wandbNumber,
        reward_mean: wandbNumber,
        loss: wandbNumber,
        percent_correct: wandbNumber,
        eval_percent_correct: wandbNumber,
        state: zString.nullable(),
        training: z.record(zString, wandbNumber).optional().describe("A cookbook run's training figures instead of a loss: the optimizer's metrics, KL, entropy (its optim/ keys)"),
        not_logged: z.record(zString, zString).optional().describe('Metrics this run never logs, and why (their null is not "not yet")'),
      })
      .optional()
      .describe('From W&B, the keys really logged: trainer step, reward/mean, train/loss, run state; environment train/eval percent_correct. null = not logged yet'),
    wandb_url: zString.optional(),
    wandb_error: zString.optional(),
    metrics_source: zString.optional().describe('Where the metrics came from when not W&B: the run\'s own metrics.jsonl (a cookbook run)'),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  ui: { resourceUri: DASHBOARD_URI },
  handler: ({ run_id }, { runtime, signal }) => statusWithMetrics(runtime, run_id, signal),
});
