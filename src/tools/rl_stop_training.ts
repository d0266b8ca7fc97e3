/** rl_stop_training: stop a run's processes, environment -> trainer -> API (Hermes tool 7). */
import * as z from 'zod';
import { zString } from '../core/schemaLeaves.js';
import { defineTool } from './define.js';
import { runIdInput, runStatus } from './runSchemas.js';

export const rlStopTraining = defineTool({
  name: 'rl_stop_training',
  title: 'Stop a training run',
  description:
    "Stops a training run: environment, trainer, then API (SIGTERM, then SIGKILL). Idempotent. Checkpoints saved so far stay (rl_get_results); a stopped cookbook run can continue with rl_resume_training.",
  input: z.object({ run_id: runIdInput }).strict(),
  output: z.object({ message: zString, run_id: zString, status: runStatus }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async handler({ run_id }, { runtime, signal }) {
    return runtime.runs.stop(run_id, signal);
  },
});
