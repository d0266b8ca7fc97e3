/** rl_get_rollouts: a few scored samples to read, from a test, an evaluation or a running run. */
import * as z from 'zod';
import { zString, zNumber, zInt } from '../core/schemaLeaves.js';
import { getRollouts } from '../runtime/wiring/rollouts.js';
import { EVAL_ID_PATTERN, TEST_ID_PATTERN } from '../core/files/home.js';
import { MAX_ROLLOUTS, ROLLOUT_FILTERS } from '../runtime/evaluation/picking.js';
import { defineTool } from './define.js';
import { runIdInput } from './runSchemas.js';

const input = z
  .object({
    run_id: runIdInput.optional().describe('A running run: its latest scored group'),
    test_id: zString.regex(TEST_ID_PATTERN, 'a test_id from rl_test_inference').optional(),
    eval_id: zString.regex(EVAL_ID_PATTERN, 'an eval_id from rl_evaluate').optional(),
    model: zString.min(1).max(256).optional().describe('Only this model (or evaluation label: base, step_5)'),
    limit: zInt.min(1).max(MAX_ROLLOUTS).default(3),
    filter: z.enum(ROLLOUT_FILTERS).default('best'),
    seed: zInt.min(0).max(2 ** 31).default(0),
  })
  .strict();

const rollout = z.object({
  model: zString.optional(),
  score: zNumber,
  prompt: zString,
  completion: zString,
  cut: z.object({ prompt_chars: zNumber.optional(), completion_chars: zNumber.optional() }).optional(),
  file: zString.describe('The resource holding the whole text'),
});

export const rlGetRollouts = defineTool({
  name: 'rl_get_rollouts',
  title: 'Read scored rollouts',
  description:
    "A few scored samples (prompt, completion, score) to read what the model writes and catch reward hacking, from one of: an inference test (test_id), an evaluation (eval_id), a running run (run_id). Read-only.",
  input,
  output: z.object({
    source: z.object({ kind: z.enum(['inference_test', 'evaluation', 'run']), id: zString, models: z.array(zString).optional() }),
    filter: z.enum(ROLLOUT_FILTERS),
    order: zString,
    total: zNumber,
    returned: zNumber,
    rollouts: z.array(rollout),
    message: zString,
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (args, { runtime }) => getRollouts(runtime, args),
});
