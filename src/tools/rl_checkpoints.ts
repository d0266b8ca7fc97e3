/** rl_checkpoints: a run's checkpoints on Tinker, what they cost to keep, and expiring, deleting or exporting them. */
import * as z from 'zod';
import { checkpointsAction } from '../runtime/wiring/checkpoints.js';
import { defineTool } from './define.js';
import { modesByAction } from './argumentErrors.js';
import { runIdInput } from './runSchemas.js';

const steps = z.array(z.number().int().min(0)).max(500);
const listedCheckpoint = z.object({
  step: z.number().int().nullable().describe('The number the name ends with (step_12 -> 12)'),
  kind: z.enum(['sampler', 'state']).describe('sampler: save_weights_for_sampler (sampling, download); state: save_state (resumable)'),
  path: z.string(),
  size_bytes: z.number().nullable(),
  expires_at: z.string().nullable().describe('When Tinker deletes it; null: kept until deleted'),
  monthly_cost_usd: z.number(),
});

export const rlCheckpoints = defineTool({
  name: 'rl_checkpoints',
  title: "Manage a run's checkpoints on Tinker",
  description:
    "A run's checkpoints on Tinker and what keeping them costs. action list; set_ttl or delete: the intermediate checkpoints (never the run's trained weights, the best by rl_evaluate or keep.steps; the user is asked first, dry_run previews); export: a download URL of one checkpoint. Delete cannot be undone.",
  input: z
    .object({
      run_id: runIdInput,
      action: z.enum(['list', 'set_ttl', 'delete', 'export']),
      keep: z
        .object({
          latest: z.boolean().default(true).describe('The latest of each kind'),
          best: z.boolean().default(true).describe('The best by rl_evaluate'),
          steps: steps.default([]).describe('These steps'),
        })
        .strict()
        .optional()
        .describe('set_ttl / delete: what is kept'),
      steps: steps.optional().describe('set_ttl / delete: only these steps'),
      ttl_seconds: z.number().int().min(1).nullable().optional().describe('set_ttl: seconds until Tinker deletes each; null: never'),
      step: z.number().int().min(0).optional().describe('export: default the latest'),
      publish: z.boolean().optional().describe('export: also make it public'),
      dry_run: z.boolean().optional().describe('set_ttl / delete: only show what would be done'),
      limit: z.number().int().min(1).max(100).optional().describe('list: the newest N (default 50)'),
    })
    .strict(),
  output: z.object({
    run_id: z.string(),
    action: z.enum(['list', 'set_ttl', 'delete', 'export']),
    checkpoints_total: z.number().int().describe("The run's checkpoints on Tinker before the action"),
    size_bytes: z.number(),
    monthly_cost_usd: z.number().describe('What keeping all of them costs per month, from their sizes'),
    message: z.string(),
    checkpoints: z.array(listedCheckpoint).optional().describe('list: the newest `limit`, oldest first'),
    shown: z.number().int().optional(),
    best: z.object({ path: z.string(), label: z.string(), score: z.number(), eval_id: z.string() }).optional().describe('The best checkpoint by rl_evaluate'),
    done: z.boolean().optional().describe('Whether anything was changed'),
    confirmation: z.enum(['accept', 'decline', 'cancel', 'unsupported', 'not_asked']).optional().describe('The user\'s answer; unsupported: the client cannot be asked'),
    affected: z.array(z.string()).optional().describe('Exactly the paths acted on (or that would be), step_{a..b} meaning each step from a to b'),
    affected_count: z.number().int().optional(),
    affected_size_bytes: z.number().optional(),
    affected_monthly_cost_usd: z.number().optional(),
    kept: z.array(z.object({ path: z.string(), why: z.string() })).optional().describe('What is kept and why (at most 20; kept_count has them all)'),
    kept_count: z.number().int().optional(),
    failed: z.array(z.object({ path: z.string(), error: z.string() })).optional(),
    expires_at: z.string().nullable().optional().describe('set_ttl: about when they expire'),
    path: z.string().optional().describe('export: the checkpoint'),
    url: z.string().optional().describe('export: a signed download URL of its archive'),
    url_expires_at: z.string().nullable().optional(),
    published: z.boolean().optional(),
  }),
  modes: modesByAction({ list: ['limit'], set_ttl: ['keep', 'steps', 'ttl_seconds', 'dry_run'], delete: ['keep', 'steps', 'dry_run'], export: ['step', 'publish'] }),
  // Destructive: delete and set_ttl remove checkpoints on Tinker. Open world: it drives the Tinker service.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  handler: (args, ctx) =>
    checkpointsAction(ctx.runtime, { confirm: (message, field) => ctx.confirm(message, field), progress: (done, total, message) => ctx.progress(done, total, message) }, args),
});
