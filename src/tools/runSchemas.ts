/** Schema pieces shared by the run tools (rl_start_training, rl_check_status, rl_stop_training, rl_list_runs, rl_get_results, rl_dashboard_snapshot). */
import * as z from 'zod';
import { zString, zNumber, zInt } from '../core/schemaLeaves.js';
import { RUN_ID_PATTERN, RUN_PROCESSES } from '../core/files/home.js';
import { FRAMEWORKS, PLACEMENTS, RUN_STATUSES } from '../runtime/runs/seams/record.js';
import { HEALTH_VERDICTS } from '../runtime/runs/watching/health.js';
import { KEEPER_STATES } from '../runtime/runs/keeping.js';

export const runIdInput = zString.regex(RUN_ID_PATTERN, 'a run_id is 8 lowercase hex characters, as returned by rl_start_training or listed by rl_list_runs').describe('Run id (rl_list_runs lists them)');

export const runStatus = z.enum(RUN_STATUSES);

/** A W&B value: non-finite ones stay visible as strings ("NaN", "Infinity"); null = not logged. */
export const wandbNumber = z.union([zNumber, z.enum(['NaN', 'Infinity', '-Infinity']), z.null()]);

/** What every answer listing runs says of each: rl_list_runs and rl_compare_runs extend it. */
export const listedRunFields = {
  run_id: zString,
  environment: zString.nullable(),
  status: runStatus,
  started_at: zString.nullable(),
  error: zString.optional().describe('Why the run record is unusable (status unknown)'),
};

export const keeperStates = z.enum(KEEPER_STATES);

/** Where an active run lives and who keeps it (several hosts may share RL_HOME). */
export const whereSchema = z
  .object({
    lives_on: zString.describe("Host of its processes, or its Slurm job"),
    seen_from: zString.describe('The host answering'),
    keeper: z.object({
      state: keeperStates.describe("alive (this host's process table), lease_fresh or lease_expired (a keeper of another host, by its lease), none"),
      host: zString.optional(),
      pid: zInt.optional(),
      lease_renewed_at: zString.optional(),
      lease_age_seconds: zNumber.optional(),
    }),
    note: zString.optional().describe('Set when this host cannot see the processes'),
  })
  .describe('Active runs: where the run lives and who keeps it');

export const healthSchema = z
  .object({
    verdict: z.enum(HEALTH_VERDICTS),
    reasons: z.array(
      z.object({
        code: zString,
        message: zString,
        evidence: z.object({ line: zString.optional(), count: zInt.optional(), at: zString.optional(), process: z.enum(RUN_PROCESSES).optional() }).optional(),
      }),
    ),
    last_step: zInt.nullable().describe('Trainer steps completed, as observed'),
    last_step_at: zString.nullable(),
    seconds_since_progress: zInt.nullable().describe('Since the last trainer step or new data; null when not training'),
    observed_at: zString.nullable().describe('When the supervisor last looked at the run'),
  })
  .describe('Is the run learning: starting, waiting_for_data, healthy, degraded, stalled, or its ended state, with the evidence');

/** One entry per process of the run's framework: an Atropos run has api, trainer and env; a cookbook run its trainer only. */
export const perProcess = <T extends z.ZodType>(item: T) => z.object({ api: item.optional(), trainer: item.optional(), env: item.optional() });

/** Which framework trains the run and where its processes live. */
export const runKind = {
  framework: z.enum(FRAMEWORKS).describe('atropos (Atropos API, trainer, environment) or cookbook (a tinker-cookbook recipe: one process)'),
  placement: z.enum(PLACEMENTS).describe('local (children of the host) or slurm (steps of a Slurm job)'),
};

/** One process of a run as rl_check_status and the dashboard show it. */
export const processState = z.object({
  state: z.enum(['not_started', 'running', 'exited']),
  pid: zInt.nullable(),
  exit_code: zInt.nullable().describe('null while running, when killed by a signal, or when unknown (ended while the run had no keeper)'),
  signal: zString.optional(),
});

export const processLogs = perProcess(zString).describe('Log file of each process');
export const processLogUris = perProcess(zString).describe('The same logs as MCP resources (rl://runs/<id>/logs/<process>)');

/** What a start may ask of its Slurm job; each is checked again (and the unset ones filled) from the RL_SLURM_* settings. */
export const slurmResources = z
  .object({
    partition: zString.min(1).max(200).optional().describe('Default RL_SLURM_PARTITION'),
    account: zString.min(1).max(200).optional().describe('Default RL_SLURM_ACCOUNT'),
    time_limit: zString.min(1).max(40).optional().describe('As sbatch --time takes it (default RL_SLURM_TIME_LIMIT)'),
    cpus_per_process: zInt.min(1).max(1024).optional().describe('Per process (default RL_SLURM_CPUS_PER_PROCESS)'),
    mem_per_process: zString.min(1).max(20).optional().describe('Per process, e.g. 4G (default RL_SLURM_MEM_PER_PROCESS)'),
  })
  .strict();
