/** rl_resume_training: start a failed or stopped cookbook run again where it left off, same run id. */
import { z } from 'zod';
import { runLogUri } from '../core/resourceUris.js';
import type { RunProcess } from '../core/files/home.js';
import { defineTool } from './define.js';
import { processLogUris, runIdInput, runKind } from './runSchemas.js';

export const rlResumeTraining = defineTool({
  name: 'rl_resume_training',
  title: 'Resume a training run',
  description:
    'Start a run that ended failed or stopped again where it left off: the same run id, directory and log_path, from the last state it saved ' +
    '(with its optimizer; the batch after that checkpoint runs again), so its steps, metrics history and spend carry on. Works for cookbook runs ' +
    "(tinker-cookbook recipes and verifiers environments); an Atropos run is refused with the reason (its trainer cannot load a saved state), as is a run " +
    'that saved no state yet, a completed or active one. Counts against RL_MAX_CONCURRENT_RUNS like a start, and costs Tinker compute again. Returns at once ' +
    'with status "starting"; follow it with rl_wait_for_run or rl_check_status.',
  input: z.object({ run_id: runIdInput }).strict(),
  output: z.object({
    run_id: z.string(),
    status: z.literal('starting'),
    ...runKind,
    environment: z.string(),
    resumed_from_step: z.number().int().describe('The step training restarts at: the batch of the last saved state (checkpoints.jsonl)'),
    state_path: z.string().describe('The tinker:// state (weights and optimizer) it loads'),
    resumes: z.number().int().describe('How many times this run has been resumed, this one included'),
    log_uris: processLogUris,
    message: z.string(),
  }),
  // Not idempotent: each call starts (and bills) the run again. Open world: it drives the paid Tinker service.
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async handler({ run_id }, { runtime }) {
    const { record, point } = await runtime.runs.resume(run_id);
    const after = record.resumes?.at(-1)?.after;
    return {
      run_id,
      status: 'starting' as const,
      framework: record.framework,
      placement: record.placement,
      environment: record.environment,
      resumed_from_step: point.from_step,
      state_path: point.state_path,
      resumes: record.resumes?.length ?? 1,
      log_uris: Object.fromEntries(Object.keys(record.logs).map((name) => [name, runLogUri(run_id, name as RunProcess)])),
      message:
        `Resuming run '${run_id}' (it had ${after?.status ?? 'ended'}) from step ${point.from_step}, loading ${point.state_path} with its optimizer. ` +
        `Its history and spend carry on. Follow it with rl_wait_for_run('${run_id}') or rl_check_status('${run_id}').`,
    };
  },
});
