/** rl_list_runs: the runs in the registry, newest first, a page at a time (Hermes tool 9). */
import { z } from 'zod';
import { MAX_PAGE, STATUS_FILTERS } from '../runtime/runs/listing.js';
import { FRAMEWORKS, PLACEMENTS } from '../runtime/runs/registry/record.js';
import { defineTool } from './define.js';
import { healthSchema, listedRunFields } from './runSchemas.js';
import { listedCostSchema } from './costSchemas.js';

export const rlListRuns = defineTool({
  name: 'rl_list_runs',
  title: 'List training runs',
  description:
    'Training runs on this host, newest first, from the persistent registry (runs survive server restarts and are shared by every ' +
    'server using the same RL_HOME), a page at a time: pass next_cursor back as cursor for the next page; runs started meanwhile ' +
    'do not shift the pages. Filter by status (one status, or "active" / "ended") and environment. A run whose record is damaged ' +
    'is listed with status "unknown" and the reason. A page holds fewer than limit runs when they would make a long answer (count says how many; ' +
    'next_cursor goes on). Cheap: records are read again only when they changed.',
  input: z
    .object({
      limit: z.number().int().min(1).max(MAX_PAGE).default(50).describe(`Runs per page (1-${MAX_PAGE})`),
      cursor: z.string().max(500).optional().describe('next_cursor of the previous answer: the page after it, with the same filters'),
      status: z.enum(STATUS_FILTERS).optional().describe('Only runs in this status; "active" = starting, running or stopping; "ended" = completed, failed or stopped'),
      environment: z.string().max(200).optional().describe('Only runs of this environment'),
    })
    .strict(),
  output: z.object({
    runs: z.array(
      z.object({
        ...listedRunFields,
        framework: z.enum(FRAMEWORKS).optional().describe('atropos or cookbook; absent for a damaged record'),
        placement: z.enum(PLACEMENTS).optional().describe('local or slurm: where its processes run; absent for a damaged record'),
        wandb_run_name: z.string().nullable(),
        ended_at: z.string().nullable(),
        health: healthSchema.optional().describe('As in rl_check_status, with only the main reason (rl_check_status gives them all)'),
        cost: listedCostSchema.optional(),
      }),
    ),
    count: z.number().int().describe('Runs on this page'),
    total: z.number().int().describe('Runs matching the filters, on all pages'),
    next_cursor: z.string().optional().describe('Present when more runs remain: pass it as cursor'),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (args, { runtime }) => runtime.runs.listRuns(args),
});
