/** rl_doctor: every requirement for training, each failure with its fix (not a Hermes tool). */
import * as z from 'zod';
import { zString, zBoolean } from '../core/schemaLeaves.js';
import { doctorSources, runDoctor } from '../runtime/wiring/doctor.js';
import { defineTool } from './define.js';

export const rlDoctor = defineTool({
  name: 'rl_doctor',
  title: 'Check the training setup',
  description:
    "Checks the training setup (Python, atroposlib, tinker, keys present, RL_HOME, ports, W&B) and says how to fix each problem; ready is true when rl_start_training would pass these checks. Call it first when something does not work. Read-only.",
  input: z.object({}).strict(),
  output: z.object({
    ready: zBoolean,
    checks: z.array(
      z.object({
        check: zString,
        ok: zBoolean,
        required: zBoolean,
        detail: zString,
        fix: zString.optional(),
      }),
    ),
    summary: zString,
  }),
  // Reads only; it asks W&B who owns the key, hence open-world.
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  handler: (_args, { runtime, signal }) => runDoctor(doctorSources(runtime), signal),
});
