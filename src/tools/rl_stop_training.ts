/** rl_stop_training: stop a run's processes, environment -> trainer -> API (Hermes tool 7). */
import { z } from 'zod';
import { defineTool } from './define.js';
import { runIdInput, runStatus } from './runSchemas.js';

export const rlStopTraining = defineTool({
  name: 'rl_stop_training',
  title: 'Stop a training run',
  description:
    'Stop a training run: the environment, then the trainer, then the Atropos API, each whole process group with SIGTERM and SIGKILL after ' +
    'the grace period. Works during start-up (nothing more is started). Idempotent: a run that already ended answers that it is not running. ' +
    'The trained weights saved so far stay available (rl_get_results).',
  input: z.object({ run_id: runIdInput }).strict(),
  output: z.object({ message: z.string(), run_id: z.string(), status: runStatus }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async handler({ run_id }, { runtime, signal }) {
    return runtime.runs.stop(run_id, signal);
  },
});
