/** The last readiness verdict as rl_get_current_config and rl_start_training show it (rl_check_environment makes them). */
import * as z from 'zod';

export const readinessSchema = z
  .object({
    verdict: z.enum(['go', 'no_go', 'check']).nullable().describe('null: never checked with this config'),
    checked_at: z.string().optional(),
    reasons: z.array(z.string()).optional().describe('Ranked, no_go first'),
    note: z.string(),
  })
  .describe("The last rl_check_environment verdict for this environment and config");
