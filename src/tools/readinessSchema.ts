/** Readiness as tools show it: the last verdict (rl_get_current_config, rl_start_training), a model's training signal (rl_check_environment, rl_test_inference). */
import * as z from 'zod';

export const readinessSchema = z
  .object({
    verdict: z.enum(['go', 'no_go', 'check']).nullable().describe('null: never checked with this config'),
    checked_at: z.string().optional(),
    reasons: z.array(z.string()).optional().describe('Ranked, no_go first'),
    note: z.string(),
  })
  .describe("The last rl_check_environment verdict for this environment and config");

/** One model's training signal from an inference test's groups. */
export const signalSchema = z.object({
  groups: z.number(),
  mixed_share: z.number(),
  all_right_share: z.number(),
  all_wrong_share: z.number(),
  reward_range: z.tuple([z.number(), z.number()]).nullable(),
  invalid_rewards: z.number(),
  rewards: z.number(),
});
