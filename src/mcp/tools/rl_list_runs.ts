/** rl_list_runs: every run in the registry, newest first (Hermes tool 9). */
import { z } from 'zod';
import { isDamaged } from '../../domain/runs/record.js';
import { defineTool } from './define.js';
import { healthSchema, runStatus } from './runSchemas.js';
import { assessHealth, mainReasonOnly } from '../../domain/runs/health.js';

export const rlListRuns = defineTool({
  name: 'rl_list_runs',
  title: 'List training runs',
  description:
    'All training runs on this host, newest first, from the persistent registry (runs survive server restarts and are shared by every ' +
    'server using the same RL_HOME). A run whose record is damaged is listed with status "unknown" and the reason.',
  input: z.object({}).strict(),
  output: z.object({
    runs: z.array(
      z.object({
        run_id: z.string(),
        environment: z.string().nullable(),
        status: runStatus,
        wandb_run_name: z.string().nullable(),
        started_at: z.string().nullable(),
        ended_at: z.string().nullable(),
        error: z.string().optional(),
        health: healthSchema.optional().describe('As in rl_check_status, with only the main reason (rl_check_status gives them all)'),
      }),
    ),
    count: z.number().int(),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler(_args, { runtime }) {
    const now = Date.now();
    const runs = runtime.runs.list().map((run) =>
      isDamaged(run)
        ? { run_id: run.run_id, environment: null, status: run.status, wandb_run_name: null, started_at: run.created_at ?? null, ended_at: null, error: run.damaged }
        : {
            run_id: run.run_id,
            environment: run.environment,
            status: run.status,
            wandb_run_name: run.wandb_run_name,
            started_at: run.started_at,
            ended_at: run.ended_at ?? null,
            health: mainReasonOnly(assessHealth(run, now, runtime.runs.healthPolicy)),
          },
    );
    return { runs, count: runs.length };
  },
});
