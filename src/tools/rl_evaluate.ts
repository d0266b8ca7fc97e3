/** rl_evaluate: did training help? A run's checkpoints against its base model, on the same items. */
import * as z from 'zod';
import { zString, zNumber, zInt, zBoolean, zUnknown } from '../core/schemaLeaves.js';
import { evaluateRun } from '../runtime/wiring/evaluate.js';
import { EVAL_ID_PATTERN } from '../core/files/home.js';
import { MAX_ALL_CHECKPOINTS, MAX_LISTED_CHECKPOINTS } from '../runtime/evaluation/checkpoints.js';
import { MAX_EVAL_WAIT_SECONDS } from '../runtime/evaluation/registry.js';
import { EVAL_METHODS } from '../runtime/evaluation/evalCommand.js';
import { defineTool, type ToolContext } from './define.js';
import type { EvaluationOutput } from '../runtime/evaluation/evaluation.js';
import type { WaitOptions } from '../runtime/jobs/wait.js';
import { registryJobTask } from './jobTasks.js';
import { modesById } from './argumentErrors.js';
import { runIdInput } from './runSchemas.js';

const interval = z.tuple([zNumber, zNumber]).nullable();
const verdict = z.enum(['better', 'no_clear_difference', 'worse']);

const input = z
  .object({
    run_id: runIdInput.optional().describe('Default: the newest run; it may still be training'),
    checkpoints: z
      .union([z.enum(['latest', 'all']), z.array(z.union([zString.min(1).max(256), zInt.min(0)])).min(1).max(MAX_LISTED_CHECKPOINTS)])
      .default('latest')
      .describe(`"latest" (the highest saved step), "all" (at most ${MAX_ALL_CHECKPOINTS}, evenly spaced, no step_0) or a list of steps / step_N / tinker:// paths`),
    baseline: zBoolean.default(true).describe("Also evaluate the run's base model, and compare each checkpoint with it"),
    method: z
      .enum(['auto', ...EVAL_METHODS])
      .default('auto')
      .describe(
        "auto: the environment's held-out evaluate when it has one, else process rollouts; vf_eval for a verifiers environment; recipe for a cookbook recipe (its test set or fresh items, its own rewards)",
      ),
    num_items: zInt.min(2).max(200).default(20).describe('process / vf_eval / recipe: items per model'),
    group_size: zInt.min(1).max(16).default(4).describe('process / vf_eval / recipe: completions per item (a recipe test set fixes its own)'),
    timeout_seconds: zInt.min(10).max(3600).default(900).describe('Per model'),
    wait_seconds: zInt.min(0).max(MAX_EVAL_WAIT_SECONDS).default(50).describe('This call answers by then (keep under the client timeout, often 60 s)'),
    eval_id: zString.regex(EVAL_ID_PATTERN, 'an eval_id returned by an earlier call').optional().describe('An evaluation started earlier: wait on it or fetch it (only wait_seconds beside it)'),
  })
  .strict();

const modelAnswer = z.object({
  label: zString,
  model: zString,
  role: z.enum(['baseline', 'checkpoint']),
  step: zNumber.optional(),
  items: zNumber,
  score: zNumber.nullable().describe('Accuracy (0/1 scores) or mean score over items'),
  ci: interval.describe('95% interval of score (method in interval / statistics)'),
  interval: z.enum(['wilson', 't']).optional(),
  vs_baseline: z.object({ diff: zNumber, ci: interval, method: z.enum(['paired_t', 'newcombe', 'welch_t']), items: zNumber, verdict }).optional(),
  error: zString.optional(),
  error_kind: zString.optional(),
  env_metrics: z.record(zString, zUnknown).optional(),
  usage: z.object({ prompt_tokens: zNumber, completion_tokens: zNumber, requests: zNumber }).optional().describe('Tokens sampled on Tinker'),
  duration_seconds: zNumber.optional(),
  log: zString,
  rollouts: zString.optional(),
});

const output = z.object({
  eval_id: zString,
  status: z.enum(['running', 'completed', 'cancelled']),
  run_id: zString,
  environment: zString,
  created_at: zString,
  finished_at: zString.optional(),
  method: z.enum(EVAL_METHODS),
  method_reason: zString,
  checkpoints: z.array(zString),
  baseline: zString.optional(),
  run_at_start: z.object({ status: zString, steps_completed: zNumber }),
  note: zString.optional(),
  message: zString,
  progress: z.object({ models_total: zNumber, models_finished: zNumber, running: zString.optional(), elapsed_seconds: zNumber }).optional(),
  verdict: z.object({ checkpoint: zString, verdict, summary: zString }).optional(),
  same_items: zBoolean.optional(),
  models: z.array(modelAnswer).optional(),
  statistics: z.record(zString, zString).optional().describe('The method behind each interval'),
  result: zString.describe('The whole result as an MCP resource'),
});

/** Starts the evaluation, or looks at the one eval_id names, waiting as `wait` says. */
const begin = (args: z.output<typeof input>, ctx: ToolContext, wait: WaitOptions): Promise<EvaluationOutput> =>
  args.eval_id !== undefined ? ctx.runtime.evaluations.waitFor(args.eval_id, wait) : evaluateRun(ctx.runtime, args, wait);

export const rlEvaluate = defineTool({
  name: 'rl_evaluate',
  title: 'Evaluate checkpoints against the base model',
  description:
    "Did training help? Evaluates a run's checkpoints against its base model on the same items through Tinker (costs Tinker sampling): scores with 95% intervals and a verdict (better / no_clear_difference / worse). Works while training. Answers when done or after wait_seconds with eval_id: call again with {eval_id}. As an MCP task it runs to the end. Next: rl_get_rollouts({eval_id}).",
  input,
  output,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  // As a task the evaluation runs to its end; the task is the evaluation (eval_id) in its registry.
  modes: modesById(input, 'eval_id', ['wait_seconds']),
  task: registryJobTask<'eval_id', z.output<typeof input>, EvaluationOutput>('evaluation', 'eval_id', (runtime) => runtime.evaluations, begin),
  handler: (args, ctx) => begin(args, ctx, { waitSeconds: args.wait_seconds, signal: ctx.signal, onProgress: ctx.progress }),
});
