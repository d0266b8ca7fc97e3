/** rl_start_training: launch and supervise a training run of the selected environment (Hermes tool 5). */
import { z } from 'zod';
import { runLogUris } from '../../core/resourceUris.js';
import { defineTool } from './define.js';
import { processLogs, processLogUris } from './runSchemas.js';

function every(seconds: number): string {
  if (seconds <= 0) return 'as often as needed';
  return seconds % 60 === 0 ? `about every ${seconds / 60} minutes` : `about every ${seconds} seconds`;
}

export const rlStartTraining = defineTool({
  name: 'rl_start_training',
  title: 'Start a training run',
  description:
    'Start RL training of the selected environment with the current config on Tinker (paid compute; runs take hours). Returns at once with ' +
    'run_id and status "starting": the server starts the Atropos API, the trainer and the environment in that order, each once the previous ' +
    'is ready, and supervises them; runs survive server restarts. Model, LoRA rank, learning rate, total_steps and the like are locked by ' +
    'the operator; set group_size, batch_size or wandb_project with rl_edit_config first. Refuses with the fix when the run would fail or ' +
    'stall (no environment selected, missing TINKER_API_KEY/WANDB_API_KEY, Python < 3.11, no tinker-atropos install, a port in use, another ' +
    'run active). Then follow it with rl_check_status(run_id).',
  input: z.object({}).strict(),
  output: z.object({
    run_id: z.string(),
    status: z.literal('starting'),
    environment: z.string(),
    config: z.record(z.string(), z.unknown()).describe("The run config's env section (locked values plus the edited fields)"),
    wandb_project: z.string(),
    wandb_run_name: z.string().describe('tinker.wandb_run_name = <env>-<run_id>; W&B runs are grouped under wandb_group'),
    trainer_wandb_run_name: z.string().describe("The trainer's W&B run name"),
    wandb_group: z.string(),
    config_path: z.string(),
    logs: processLogs,
    log_uris: processLogUris,
    message: z.string(),
  }),
  // Not idempotent: each call starts (and bills) a new run. Open world: it drives the paid Tinker service.
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async handler(_args, { runtime, signal }) {
    const { record, config } = await runtime.runs.start(signal);
    const id = record.run_id;
    return {
      run_id: id,
      status: 'starting' as const,
      environment: record.environment,
      config: config.env,
      wandb_project: record.wandb_project,
      wandb_run_name: record.wandb_run_name,
      trainer_wandb_run_name: record.trainer_wandb_run_name,
      wandb_group: record.wandb_group,
      config_path: record.config_path,
      logs: record.logs,
      log_uris: runLogUris(id),
      message:
        `Training starting. Use rl_check_status('${id}') to monitor (${every(runtime.settings.statusMinIntervalSeconds)}; it is rate limited per run). ` +
        `Stop it with rl_stop_training('${id}').`,
    };
  },
});
