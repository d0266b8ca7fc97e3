/** rl_checkpoints: a run's checkpoints on Tinker, what they cost to keep, and expiring, deleting or exporting them. */
import * as z from 'zod';
import { zString, zNumber, zInt, zBoolean } from '../core/schemaLeaves.js';
import { checkpointsAction } from '../runtime/wiring/checkpoints.js';
import { defineTool } from './define.js';
import { modesByAction } from './argumentErrors.js';
import { runIdInput } from './runSchemas.js';

const steps = z.array(zInt.min(0)).max(500);
const listedCheckpoint = z.object({
  step: zInt.nullable().describe('The number the name ends with (step_12 -> 12)'),
  kind: z.enum(['sampler', 'state']).describe('sampler: save_weights_for_sampler (sampling, download); state: save_state (resumable)'),
  path: zString,
  size_bytes: zNumber.nullable(),
  expires_at: zString.nullable().describe('When Tinker deletes it; null: kept until deleted'),
  monthly_cost_usd: zNumber,
});

export const rlCheckpoints = defineTool({
  name: 'rl_checkpoints',
  title: "Manage a run's checkpoints on Tinker",
  description:
    "A run's checkpoints on Tinker and what keeping them costs. action list; set_ttl or delete: the intermediate checkpoints (never the run's trained weights, the best by rl_evaluate or keep.steps; confirmed by the user or confirm_affected, dry_run previews); export: a download URL of one checkpoint. Delete cannot be undone.",
  input: z
    .object({
      run_id: runIdInput,
      action: z.enum(['list', 'set_ttl', 'delete', 'export']),
      keep: z
        .object({
          latest: zBoolean.default(true).describe('The latest of each kind'),
          best: zBoolean.default(true).describe('The best by rl_evaluate'),
          steps: steps.default([]).describe('These steps'),
        })
        .strict()
        .optional()
        .describe('set_ttl / delete: what is kept'),
      steps: steps.min(1).optional().describe('set_ttl / delete: only these steps'),
      ttl_seconds: zInt.min(0).optional().describe('set_ttl: seconds until Tinker deletes each; 0: never'),
      step: zInt.min(0).optional().describe('export: default the latest'),
      publish: zBoolean.optional().describe('export: also make it public'),
      dry_run: zBoolean.optional().describe('set_ttl / delete: only show what would be done'),
      limit: zInt.min(1).max(100).optional().describe('list: the newest N (default 50)'),
      confirm_affected: z.array(zString.max(6000)).min(1).max(100).optional().describe('set_ttl / delete: confirms acting on exactly these (`affected` as answered)'),
    })
    .strict(),
  output: z.object({
    run_id: zString,
    action: z.enum(['list', 'set_ttl', 'delete', 'export']),
    checkpoints_total: zInt.describe("The run's checkpoints on Tinker before the action"),
    size_bytes: zNumber,
    monthly_cost_usd: zNumber.describe('What keeping all of them costs per month, from their sizes'),
    message: zString,
    checkpoints: z.array(listedCheckpoint).optional().describe('list: the newest `limit`, oldest first'),
    shown: zInt.optional(),
    best: z.object({ path: zString, label: zString, score: zNumber, eval_id: zString }).optional().describe('The best checkpoint by rl_evaluate'),
    done: zBoolean.optional().describe('Whether anything was changed'),
    confirmation: z.enum(['accept', 'decline', 'cancel', 'unsupported', 'not_asked', 'argument']).optional().describe('The client\'s answer; unsupported: it cannot ask; argument: confirm_affected'),
    affected: z.array(zString).optional().describe('Exactly the paths acted on (or that would be), step_{a..b} meaning each step from a to b'),
    affected_count: zInt.optional(),
    affected_size_bytes: zNumber.optional(),
    affected_monthly_cost_usd: zNumber.optional(),
    kept: z.array(z.object({ path: zString, why: zString })).optional().describe('What is kept and why (at most 20; kept_count has them all)'),
    kept_count: zInt.optional(),
    failed: z.array(z.object({ path: zString, error: zString })).optional(),
    expires_at: zString.nullable().optional().describe('set_ttl: about when they expire'),
    path: zString.optional().describe('export: the checkpoint'),
    url: zString.optional().describe('export: a signed download URL of its archive'),
    url_expires_at: zString.nullable().optional(),
    published: zBoolean.optional(),
  }),
  modes: modesByAction({ list: ['limit'], set_ttl: ['keep', 'steps', 'ttl_seconds', 'dry_run', 'confirm_affected'], delete: ['keep', 'steps', 'dry_run', 'confirm_affected'], export: ['step', 'publish'] }),
  // Destructive: delete and set_ttl remove checkpoints on Tinker. Open world: it drives the Tinker service.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  // ttl_seconds 0 is Tinker's null (no expiry): said without null, which clients' schema conversions lose (docs/clients.md).
  handler: ({ ttl_seconds, ...args }, ctx) =>
    checkpointsAction(
      ctx.runtime,
      { confirm: (message, field) => ctx.confirm(message, field), progress: (done, total, message) => ctx.progress(done, total, message) },
      { ...args, ...(ttl_seconds === undefined ? {} : { ttl_seconds: ttl_seconds === 0 ? null : ttl_seconds }) },
    ),
});
