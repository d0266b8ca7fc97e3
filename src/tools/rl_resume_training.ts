/** rl_resume_training: start a failed or stopped cookbook run again where it left off, same run id. */
import * as z from 'zod';
import { zString, zInt } from '../core/schemaLeaves.js';
import { runLogUri } from '../core/resourceUris.js';
import type { RunProcess } from '../core/files/home.js';
import { defineTool } from './define.js';
import { processLogUris, runIdInput, runKind } from './runSchemas.js';

export const rlResumeTraining = defineTool({
  name: 'rl_resume_training',
  title: 'Resume a training run',
  description:
    "Restarts a failed or stopped cookbook training run from its last saved state: the same run_id, with its steps, metrics and spend carried on; costs Tinker compute again. Refused with the reason for an Atropos run or a run that saved no state. Returns at once; next: rl_wait_for_run.",
  input: z.object({ run_id: runIdInput }).strict(),
  output: z.object({
    run_id: zString,
    status: z.literal('starting'),
    ...runKind,
    environment: zString,
    resumed_from_step: zInt.describe('The step training restarts at: the batch of the last saved state (checkpoints.jsonl)'),
    state_path: zString.describe('The tinker:// state (weights and optimizer) it loads'),
    resumes: zInt.describe('How many times this run has been resumed, this one included'),
    log_uris: processLogUris,
    message: zString,
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
