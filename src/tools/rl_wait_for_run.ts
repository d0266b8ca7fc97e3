/** rl_wait_for_run: waits, within one call, until a run is running, made one more step, or ended. */
import * as z from 'zod';
import { zString, zNumber, zInt, zBoolean } from '../core/schemaLeaves.js';
import { UserError } from '../core/errors.js';
import { isDamaged, isEnded } from '../runtime/runs/seams/record.js';
import { DEFAULT_WAIT_SECONDS, MAX_WAIT_SECONDS, stepsOf, WAIT_CONDITIONS, type WaitAnswer, type WaitCondition } from '../runtime/runs/waiting.js';
import { defineTool, type TaskJob, type TaskSupport, type ToolContext } from './define.js';
import { healthSchema, runIdInput, runStatus } from './runSchemas.js';

/** One look at the run, as the tool answers it, with the seconds since the task began. */
async function look(job: TaskJob, ctx: ToolContext, since: Date): Promise<WaitAnswer> {
  if (job.kind !== 'run') throw new Error(`a run wait was given a ${job.kind} job`);
  const answer = await ctx.runtime.runs.waitFor(job.run_id, { until: job.until, timeoutSeconds: 0, baseline: job.baseline });
  return { ...answer, waited_seconds: Math.round((Date.now() - since.getTime()) / 100) / 10 };
}

/** What ends a wait but its timeout: the condition, the run's end, a record that cannot be read. */
const finished = (answer: WaitAnswer): boolean => answer.reached || answer.status === 'unknown' || isEnded(answer.status);

/** As a task the wait has no client timeout to fit: it lasts until the condition holds or the run ends; a look each poll. */
function waitTask(): TaskSupport<{ run_id: string; until: WaitCondition }> {
  return {
    async start({ run_id, until }, ctx) {
      const entry = ctx.runtime.runs.current(run_id);
      if (isDamaged(entry)) throw new UserError(`Run '${run_id}' cannot be read: ${entry.damaged}`, { run_id });
      // "step" means one more than when the task began.
      const job: TaskJob = { kind: 'run', run_id, until, baseline: stepsOf(entry) };
      const answer = await look(job, ctx, new Date());
      return finished(answer) ? { answer } : { answer, job };
    },
    async poll(job, ctx, since) {
      const answer = await look(job, ctx, since);
      const step = answer.progress ? `, step ${answer.progress.step}/${answer.progress.total_steps}` : '';
      return { answer, state: finished(answer) ? 'completed' : 'working', message: `${answer.status}${answer.phase ? `, ${answer.phase}` : ''}${step}` };
    },
    // Nothing runs for a wait: a cancel just ends the task (tasks.ts marks it).
  };
}

export const rlWaitForRun = defineTool({
  name: 'rl_wait_for_run',
  title: 'Wait for a training run',
  description:
    "Waits until a run is running, made one more step, or ended (until), for at most timeout_seconds, then answers its status; reached: false means call again. Not rate limited. As an MCP task it waits until the condition holds or the run ends. Next, once ended: rl_get_results.",
  input: z
    .object({
      run_id: runIdInput,
      until: z.enum(WAIT_CONDITIONS).describe('running: the run is running (or ran); step: one more trainer step; ended: completed, failed or stopped'),
      timeout_seconds: zInt.min(1).max(MAX_WAIT_SECONDS).default(DEFAULT_WAIT_SECONDS).describe('Longest wait; clients give up on a call after about 60 s'),
    })
    .strict(),
  output: z.object({
    run_id: zString,
    reached: zBoolean.describe('Whether the condition holds; false when the run ended first or the wait timed out'),
    until: z.enum(WAIT_CONDITIONS),
    waited_seconds: zNumber,
    status: runStatus,
    phase: zString.optional(),
    health: healthSchema.optional(),
    progress: z.object({ step: zInt, total_steps: zInt }).optional().describe('Trainer steps completed out of the total, as observed'),
    error: zString.optional().describe('Why the run record cannot be read (status unknown)'),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  task: waitTask(),
  handler: ({ run_id, until, timeout_seconds }, { runtime, signal, progress }) =>
    runtime.runs.waitFor(run_id, { until, timeoutSeconds: timeout_seconds, signal, onProgress: progress }),
});
