/** rl_list_runs: the runs in the registry, newest first, a page at a time (Hermes tool 9). */
import * as z from 'zod';
import { zString, zInt } from '../core/schemaLeaves.js';
import { MAX_PAGE, STATUS_FILTERS } from '../runtime/runs/listing.js';
import { FRAMEWORKS, PLACEMENTS } from '../runtime/runs/seams/record.js';
import { defineTool } from './define.js';
import { healthSchema, keeperStates, listedRunFields } from './runSchemas.js';
import { listedCostSchema, spendSchema } from './costSchemas.js';
import { spendAnswer, withLedgerSpend } from '../runtime/ledger/spendAnswer.js';

export const rlListRuns = defineTool({
  name: 'rl_list_runs',
  title: 'List training runs',
  description:
    "Lists the training runs of this RL_HOME, newest first, a page at a time (pass next_cursor back as cursor); filter by status or environment. Read-only; runs survive server restarts. Next: rl_check_status or rl_compare_runs.",
  input: z
    .object({
      limit: zInt.min(1).max(MAX_PAGE).default(50).describe(`Runs per page (1-${MAX_PAGE})`),
      cursor: zString.max(500).optional().describe('next_cursor of the previous page'),
      status: z.enum(STATUS_FILTERS).optional(),
      environment: zString.max(200).optional().describe('Only runs of this environment'),
    })
    .strict(),
  output: z.object({
    runs: z.array(
      z.object({
        ...listedRunFields,
        framework: z.enum(FRAMEWORKS).optional().describe('atropos or cookbook; absent for a damaged record'),
        placement: z.enum(PLACEMENTS).optional().describe('local or slurm: where its processes run; absent for a damaged record'),
        wandb_run_name: zString.nullable(),
        ended_at: zString.nullable(),
        health: healthSchema.optional().describe('As in rl_check_status, with only the main reason (rl_check_status gives them all)'),
        cost: listedCostSchema.optional(),
        host: zString.optional().describe('Active runs: the host it lives on'),
        keeper: keeperStates.optional().describe("Active runs: its keeper, as in rl_check_status's where"),
      }),
    ),
    count: zInt.describe('Runs on this page'),
    total: zInt.describe('Runs matching the filters, on all pages'),
    next_cursor: zString.optional().describe('Present when more runs remain: pass it as cursor'),
    spend: spendSchema,
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: async (args, { runtime }) => {
    const listed = await runtime.runs.listRuns(args);
    return { ...listed, runs: withLedgerSpend(runtime.settings, listed.runs), spend: spendAnswer(runtime.settings) };
  },
});
