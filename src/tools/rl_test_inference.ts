/** rl_test_inference: smoke-test the selected environment against OpenAI-compatible models. */
import * as z from 'zod';
import { zString, zNumber, zInt, zBoolean } from '../core/schemaLeaves.js';
import { SERVER_TYPES } from '../runtime/inference/command.js';
import { DEFAULT_API_KEY_ENV, DEFAULT_BASE_URL, MAX_WAIT_SECONDS } from '../runtime/inference/testRegistry.js';
import { TEST_ID_PATTERN } from '../core/files/home.js';
import { DEFAULT_TEST_MODELS } from '../runtime/inference/models.js';
import { defineTool, type ToolContext } from './define.js';
import { registryJobTask } from './jobTasks.js';
import { modesById } from './argumentErrors.js';
import { signalSchema } from './readinessSchema.js';
import type { TestAnswer } from '../runtime/inference/answer.js';
import type { WaitOptions } from '../runtime/jobs/wait.js';
import { serverEntriesNeeded } from '../runtime/environments/tinkerReadiness.js';
import { environmentName } from './rl_select_environment.js';

const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:;/@+-]*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const input = z
  .object({
    environment: environmentName.optional().describe('Test this environment instead of the selected one'),
    num_steps: zInt.min(1).max(50).default(3).describe('Groups (steps) per model'),
    group_size: zInt.min(1).max(64).default(16).describe('Completions per group'),
    models: z
      .array(zString.min(1).max(256).regex(MODEL_ID, 'a model id such as qwen/qwen3-8b, Qwen/Qwen3-8B or tinker://.../sampler_weights/step_N'))
      .min(1)
      .max(8)
      .optional()
      .describe(
        `Default: ${DEFAULT_TEST_MODELS.map((m) => m.id).join(', ')}. tinker:// checkpoints and Tinker base models (Qwen/Qwen3-8B) are sampled through Tinker unless base_url is given`,
      ),
    base_url: zString.min(1).max(2048).default(DEFAULT_BASE_URL).describe('OpenAI-compatible endpoint (http or https)'),
    api_key_env: zString
      .min(1)
      .max(128)
      .regex(ENV_NAME, 'an environment variable name')
      .default(DEFAULT_API_KEY_ENV)
      .describe("The server's environment variable holding the endpoint's key (never the key)"),
    server_type: z.enum(SERVER_TYPES).default('openai'),
    timeout_seconds: zInt.min(1).max(3600).default(600).describe('Per model'),
    wait_seconds: zInt
      .min(0)
      .max(MAX_WAIT_SECONDS)
      .default(50)
      .describe('This call answers by then (keep under the client timeout, often 60 s)'),
    test_id: zString.regex(TEST_ID_PATTERN, 'a test_id returned by an earlier call').optional().describe('A test started earlier: wait on it or fetch it (only wait_seconds beside it)'),
    use_wandb: zBoolean.default(false).describe('Log the test to W&B (needs WANDB_API_KEY)'),
  })
  .strict();

const step = z.object({ step: zNumber, completions: zNumber, correct: zNumber });
const modelResult = z.object({
  model: zString,
  name: zString,
  scale: zString,
  output_file: zString,
  log_file: zString,
  steps: z.array(step),
  steps_tested: zNumber,
  total_completions: zNumber,
  correct_completions: zNumber,
  accuracy: zNumber,
  steps_with_correct: zNumber,
  step_success_rate: zNumber,
  mean_score: zNumber,
  duration_seconds: zNumber.optional(),
  error: zString.optional(),
  error_kind: zString.optional().describe('What kind of failure error describes: authentication, model_not_found, no_learning_signal, ...; for a model that ran, what warning says'),
  warning: zString.optional().describe('The model ran, but nothing can be learned from what it produced (every group scored alike)'),
  stderr_tail: zString.optional(),
  exit_code: zNumber.nullable().optional(),
  timed_out: zBoolean.optional(),
  rollout_tokens: z
    .object({
      source: zString
        .describe(
          "tokens/masks: counted by the environment's tokenizer; chars/4: from its messages at 4 characters per token; endpoint usage: the endpoint's own count, " +
            "seen on the wire (atroposlib writes placeholder tokens for an OpenAI-compatible endpoint); endpoint text chars/4: the texts the wire carried",
        ),
      rollouts: zNumber,
      prompt_tokens: z.object({ mean: zNumber, max: zNumber }),
      completion_tokens: z.object({ mean: zNumber, p25: zNumber, max: zNumber }),
    })
    .optional()
    .describe('Measured tokens per rollout: what rl_estimate_cost uses for this environment'),
  endpoint: zString.optional(),
  signal: signalSchema
    .optional()
    .describe('Share of groups whose scores differ (the training signal), all right, all wrong; invalid rewards (None, NaN) apart from zeros'),
});

const output = z.object({
  test_id: zString,
  status: z.enum(['running', 'completed', 'cancelled']),
  message: zString.optional(),
  environment: zString,
  environment_file: zString,
  test_config: z.object({
    num_steps: zNumber,
    group_size: zNumber,
    rollouts_per_model: zNumber,
    total_rollouts: zNumber,
    base_url: zString,
    server_type: zString,
  }),
  progress: z
    .object({
      models_total: zNumber,
      models_finished: zNumber,
      elapsed_seconds: zNumber,
      models: z.array(z.object({ model: zString, state: zString, log_file: zString, elapsed_seconds: zNumber.optional(), pid: zNumber.optional() })),
    })
    .optional(),
  models_tested: z.array(modelResult).optional(),
  result_file: zString.optional().describe('result.json: this result with every completion\'s score per step'),
  summary: z
    .object({
      steps_requested: zNumber,
      models_tested: zNumber,
      models_succeeded: zNumber,
      best_model: zString.nullable(),
      avg_accuracy: zNumber,
      environment_working: zBoolean,
      output_directory: zString,
    })
    .optional(),
});

/** Starts the test, or looks at the one test_id names, waiting as `wait` says. */
async function begin(args: z.output<typeof input>, ctx: ToolContext, wait: WaitOptions): Promise<TestAnswer> {
  const { inferenceTests, selection } = ctx.runtime;
  if (args.test_id !== undefined) return inferenceTests.waitFor(args.test_id, wait);
  // A named environment is judged from its source; the selection from its import, when that worked.
  const chosen = args.environment !== undefined ? await ctx.runtime.environments.resolve(args.environment) : undefined;
  const selected = chosen === undefined ? await selection.verified(ctx.signal) : undefined;
  const environment = chosen ?? selected!.environment;
  const shape = selected?.tinker.server_configs ?? chosen!.server_configs;
  const base_url_explicit = args.base_url !== DEFAULT_BASE_URL;
  return inferenceTests.startAndWait({ ...args, environment, server_entries: serverEntriesNeeded(shape), base_url_explicit }, wait);
}

export const rlTestInference = defineTool({
  name: 'rl_test_inference',
  title: 'Smoke-test the environment against models',
  description:
    "Smoke-tests an environment before paying for training: runs it against OpenAI-compatible models (default OpenRouter) and scores each model's completions; it also measures the lengths rl_estimate_cost needs. Costs endpoint tokens only. Answers when done or after wait_seconds with test_id: call again with {test_id}. As an MCP task it runs to the end.",
  input,
  output,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  // As a task the test runs to its end; the task is the test (test_id) in its registry.
  modes: modesById(input, 'test_id', ['wait_seconds']),
  task: registryJobTask<'test_id', z.output<typeof input>, TestAnswer>('inference_test', 'test_id', (runtime) => runtime.inferenceTests, begin),
  handler: (args, ctx) => begin(args, ctx, { waitSeconds: args.wait_seconds, signal: ctx.signal, onProgress: ctx.progress }),
});
