/** rl_check_environment: one readiness verdict (go / no_go / check) for an environment and config, before any run is paid for. */
import * as z from 'zod';
import { zString, zNumber, zInt, zUnknown } from '../core/schemaLeaves.js';
import type { JsonValue } from '../core/json.js';
import { TEST_ID_PATTERN } from '../core/files/home.js';
import { defineTool } from './define.js';
import { signalSchema } from './readinessSchema.js';
import { configValue } from './rl_edit_config.js';
import { environmentName } from './rl_select_environment.js';

const reason = z.object({ verdict: z.enum(['no_go', 'check']), code: zString, message: zString });
const cost = z.object({ per_rollout_usd: zNumber, per_step_usd: zNumber, run_usd: zNumber, basis: zString });

export const rlCheckEnvironment = defineTool({
  name: 'rl_check_environment',
  title: 'Check an environment is ready to train',
  description:
    'Before paying: verdict go/no_go/check with ranked reasons. Offline, no key, seconds: imports the environment, loads data, measures prompt tokens, ' +
    'scores empty, garbage and reference answers through its own code against a local stand-in model. With test_id (rl_test_inference) adds each ' +
    "model's training signal and $ per step. Kept per config for rl_start_training (RL_REQUIRE_READY=1).",
  input: z
    .object({
      environment: environmentName.optional().describe("Check this environment with its config_init() values instead of the saved selection's config"),
      config: z.record(zString.min(1).max(128), configValue).optional().describe('Field -> value, as rl_start_training takes them'),
      test_id: zString.regex(TEST_ID_PATTERN).optional().describe('A finished rl_test_inference of this environment: its models join the verdict'),
      items: zInt.min(1).max(20).default(5).describe('Items drawn and scored'),
    })
    .strict(),
  output: z.object({
    environment: zString,
    framework: zString,
    verdict: z.enum(['go', 'no_go', 'check']),
    reasons: z.array(reason).describe('Ranked: no_go first'),
    evidence: z.array(zString).describe('What was seen to work'),
    unchecked: z.array(zString).describe('What could not be checked for this environment, and why'),
    offline: z.record(zString, zUnknown).describe('Items, a sample, prompt tokens, the stand-in model'),
    probe: z
      .object({
        test_id: zString,
        models: z.array(
          z.object({
            model: zString,
            ...signalSchema.shape,
            error: zString.optional(),
            cost: cost.optional(),
          }),
        ),
      })
      .optional(),
    config_key: zString,
    checked_at: zString,
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(args, { runtime, signal }) {
    const selected = await runtime.selection.forRun({ ...(args.environment !== undefined ? { environment: args.environment } : {}), config: args.config as Record<string, JsonValue> | undefined }, signal);
    const record = await runtime.readiness.check(selected.config, { items: args.items, ...(args.test_id !== undefined ? { testId: args.test_id } : {}), signal });
    const { unchecked, ...offline } = record.offline;
    return {
      environment: record.environment,
      framework: record.framework,
      verdict: record.verdict,
      reasons: record.reasons,
      evidence: record.evidence,
      unchecked,
      offline,
      ...(record.probe ? { probe: record.probe } : {}),
      config_key: record.config_key,
      checked_at: record.checked_at,
    };
  },
});
