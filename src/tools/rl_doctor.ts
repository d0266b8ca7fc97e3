/** rl_doctor: every requirement for training, each failure with its fix (not a Hermes tool). */
import { z } from 'zod';
import { doctorSources, runDoctor } from '../runtime/wiring/doctor.js';
import { defineTool } from './define.js';

export const rlDoctor = defineTool({
  name: 'rl_doctor',
  title: 'Check the training setup',
  description:
    'Checks everything training needs and says how to fix each problem: the Python interpreter (>= 3.11), atroposlib and tinker ' +
    'importable, run-api and launch_training.py found, environments discovered, keys present (never their values), RL_HOME ' +
    'writable, the API and inference ports free, W&B reachable when a key is set. `ready` is true when rl_start_training ' +
    'would pass these checks. Run it first when something does not work.',
  input: z.object({}).strict(),
  output: z.object({
    ready: z.boolean(),
    checks: z.array(
      z.object({
        check: z.string(),
        ok: z.boolean(),
        required: z.boolean(),
        detail: z.string(),
        fix: z.string().optional(),
      }),
    ),
    summary: z.string(),
  }),
  // Reads only; it asks W&B who owns the key, hence open-world.
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  handler: (_args, { runtime, signal }) => runDoctor(doctorSources(runtime), signal),
});
