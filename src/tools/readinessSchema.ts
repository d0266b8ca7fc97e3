/** Readiness as tools show it: the last verdict (rl_get_current_config, rl_start_training), a model's training signal (rl_check_environment, rl_test_inference). */
import * as z from 'zod';
import { zString, zNumber } from '../core/schemaLeaves.js';

export const readinessSchema = z
  .object({
    verdict: z.enum(['go', 'no_go', 'check']).nullable().describe('null: never checked with this config'),
    checked_at: zString.optional(),
    reasons: z.array(zString).optional().describe('Ranked, no_go first'),
    note: zString,
  })
  .describe("The last rl_check_environment verdict for this environment and config");

/** One model's training signal from an inference test's groups. */
export const signalSchema = z.object({
  groups: zNumber,
  mixed_share: zNumber,
  all_right_share: zNumber,
  all_wrong_share: zNumber,
  reward_range: z.tuple([zNumber, zNumber]).nullable(),
  invalid_rewards: zNumber,
  rewards: zNumber,
});
