/** rl_wait_for_run: waits, within one call, until a run is running, made one more step, or ended. */
import { z } from 'zod';
import { DEFAULT_WAIT_SECONDS, MAX_WAIT_SECONDS, WAIT_CONDITIONS } from '../runtime/runs/waiting.js';
import { defineTool } from './define.js';
import { healthSchema, runIdInput, runStatus } from './runSchemas.js';

export const rlWaitForRun = defineTool({
  name: 'rl_wait_for_run',
  title: 'Wait for a training run',
  description:
    'Waits until a run reaches a point, then answers: until "running" (the run reached running), "step" (the trainer completed one ' +
    'more step than when the call began) or "ended" (completed, failed or stopped). Returns as soon as that holds, when the run ends ' +
    `whatever until says, or after timeout_seconds (1-${MAX_WAIT_SECONDS}, default ${DEFAULT_WAIT_SECONDS}) with reached: false; call it again to keep waiting. ` +
    'Answers status, phase, health and progress from the run record; not rate limited and does not use up rl_check_status\'s window. ' +
    'Sends progress notifications while it waits when the client asks for them.',
  input: z
    .object({
      run_id: runIdInput,
      until: z.enum(WAIT_CONDITIONS).describe('running: the run is running (or ran); step: one more trainer step; ended: completed, failed or stopped'),
      timeout_seconds: z.number().int().min(1).max(MAX_WAIT_SECONDS).default(DEFAULT_WAIT_SECONDS).describe('Longest wait; clients give up on a call after about 60 s'),
    })
    .strict(),
  output: z.object({
    run_id: z.string(),
    reached: z.boolean().describe('Whether the condition holds; false when the run ended first or the wait timed out'),
    until: z.enum(WAIT_CONDITIONS),
    waited_seconds: z.number(),
    status: runStatus,
    phase: z.string().optional(),
    health: healthSchema.optional(),
    progress: z.object({ step: z.number().int(), total_steps: z.number().int() }).optional().describe('Trainer steps completed out of the total, as observed'),
    error: z.string().optional().describe('Why the run record cannot be read (status unknown)'),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: ({ run_id, until, timeout_seconds }, { runtime, signal, progress }) =>
    runtime.runs.waitFor(run_id, { until, timeoutSeconds: timeout_seconds, signal, onProgress: progress }),
});
