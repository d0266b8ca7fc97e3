/** rl_start_training: launch and supervise a training run of the selected environment, or of one named in the call (Hermes tool 5). */
import * as z from 'zod';
import { zString, zNumber, zBoolean, zUnknown } from '../core/schemaLeaves.js';
import { previewValues, type JsonValue } from '../core/json.js';
import type { RunProcess } from '../core/files/home.js';
import { runLogUri } from '../core/resourceUris.js';
import type { SelectedConfig } from '../runtime/config/selectionStore.js';
import { costNotConfirmed, dryRunConfirmationNote, estimateAnswer, startConfirmation } from '../runtime/wiring/costs.js';
import { estimateSchema } from './costSchemas.js';
import { readinessSchema } from './readinessSchema.js';
import { defineTool, type ToolContext } from './define.js';
import { configValue, SHOWN_VALUE_CHARS } from './rl_edit_config.js';
import { environmentName } from './rl_select_environment.js';
import { processLogs, processLogUris, runKind, slurmResources } from './runSchemas.js';

const CONFIG_SOURCES = ['selection', 'selection+config', 'environment', 'environment+config'] as const;

/** What the run was built from, in the answer's words. */
function basis(source: (typeof CONFIG_SOURCES)[number], config: SelectedConfig, overrides: Record<string, JsonValue>): string {
  const { environment, selectedAt } = config;
  const from = source.startsWith('environment') ? `${environment.name}'s config_init() values, as a fresh selection has them` : `the saved selection (${environment.name}, selected at ${selectedAt})`;
  const set = Object.keys(overrides).length > 0 ? ` with ${Object.keys(overrides).join(', ')} set for this run only` : '';
  return `Config: ${from}${set}${source === 'selection' ? '' : '; the saved selection is unchanged'}.`;
}

/**
 * Over RL_CONFIRM_ABOVE_USD a start needs a confirmation: `confirm_cost_usd` covering the estimate,
 * else the user's yes where the client can ask. Every other outcome is refused with the figure and
 * that argument (costNotConfirmed), since a decline may come from a client with nobody to ask. A
 * refusal over budget comes before all of it.
 */
async function confirmSpending(ctx: ToolContext, selection: Parameters<ToolContext['runtime']['runs']['estimate']>[0], confirmedUsd: number | undefined): Promise<void> {
  const { runtime } = ctx;
  const { estimate, refusal } = runtime.runs.estimate(selection);
  if (refusal) throw refusal;
  const needed = startConfirmation(runtime.settings, estimate, selection.environment.name, confirmedUsd);
  if (needed.kind === 'none' || needed.kind === 'confirmed') return;
  const answer = needed.kind === 'too_low' ? 'too_low' : await ctx.confirm(needed.question);
  if (answer !== 'accept') throw costNotConfirmed(runtime.settings, estimate, answer, confirmedUsd);
}

function every(seconds: number): string {
  if (seconds <= 0) return 'as often as needed';
  return seconds % 60 === 0 ? `about every ${seconds / 60} minutes` : `about every ${seconds} seconds`;
}

export const rlStartTraining = defineTool({
  name: 'rl_start_training',
  title: 'Start a training run',
  description:
    "Starts RL training on Tinker: the selected environment (or `environment`) with the current config plus `config` for this run only. Paid; runs last hours. Returns at once with run_id; the server supervises the run, across restarts. Refused with the fix when it would fail or exceed the cost limits; over the confirmation threshold the user is asked, or the refusal says how to confirm. A sweep is one call per value. Next: rl_wait_for_run or rl_check_status.",
  input: z
    .object({
      environment: environmentName.optional().describe("Train this environment from its defaults instead of the saved selection"),
      config: z
        .record(zString.min(1).max(128), configValue)
        .optional()
        .describe('Field -> value for this run only (e.g. {"group_size": 8}), checked as rl_edit_config checks it'),
      placement: runKind.placement.optional().describe('local (this host) or slurm (one Slurm job); default RL_PLACEMENT'),
      slurm: slurmResources.optional().describe('placement slurm: the job'),
      dry_run: zBoolean.optional().describe('Check and lay the run out (with its Slurm script), start nothing'),
      confirm_cost_usd: zNumber.min(0).optional().describe('Over RL_CONFIRM_ABOVE_USD: the estimate the user accepted (>= the figure a refusal shows)'),
    })
    .strict(),
  output: z.object({
    run_id: zString.describe('The new run; for a dry run, the id it would have had'),
    status: z.enum(['starting', 'dry_run']).describe('starting, or dry_run when nothing was written or started'),
    submitted: zBoolean.optional().describe('false for a dry run: no job was submitted, nothing was started'),
    script: zString.optional().describe('A Slurm run\'s job script, as the server submits it (no secret: keys reach the steps through their environment)'),
    environment: zString,
    ...runKind,
    config_source: z
      .enum(CONFIG_SOURCES)
      .describe('What the config was built from: the saved selection, or the environment named in the call (config_init() values), plus `config` when given'),
    overrides: z.record(zString, zUnknown).optional().describe('The `config` values as set (converted to the fields\' types)'),
    config: z.record(zString, zUnknown).describe("The run config's env section (locked values plus the edited fields); long values shown by their start (config_path holds them whole)"),
    wandb_project: zString,
    wandb_run_name: zString.describe('tinker.wandb_run_name = <env>-<run_id>; W&B runs are grouped under wandb_group'),
    trainer_wandb_run_name: zString.describe("The trainer's W&B run name"),
    wandb_group: zString,
    config_path: zString,
    logs: processLogs,
    log_uris: processLogUris,
    cost_estimate: estimateSchema.describe('What this run will cost, estimated at its start; rl_check_status reports spend so far'),
    readiness: readinessSchema,
    message: zString,
  }),
  // Not idempotent: each call starts (and bills) a new run. Open world: it drives the paid Tinker service.
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async handler(args, ctx) {
    const { runtime, signal } = ctx;
    const request = { ...args, config: args.config as Record<string, JsonValue> | undefined };
    const selected = await runtime.selection.forRun(request, signal);
    runtime.readiness.requireReady(selected.config);
    if (args.dry_run !== true) await confirmSpending(ctx, selected.config, args.confirm_cost_usd);
    const { record, config, estimate, script } = await runtime.runs.start(selected.config, { placement: args.placement, resources: args.slurm, dryRun: args.dry_run }, signal);
    const id = record.run_id;
    const dryRun = args.dry_run === true;
    const source = `${args.environment !== undefined ? 'environment' : 'selection'}${args.config !== undefined ? '+config' : ''}` as const;
    return {
      run_id: id,
      status: dryRun ? ('dry_run' as const) : ('starting' as const),
      ...(dryRun ? { submitted: false } : {}),
      ...(script !== undefined ? { script } : {}),
      environment: record.environment,
      framework: record.framework,
      placement: record.placement,
      config_source: source,
      ...(args.config !== undefined ? { overrides: previewValues(selected.applied, SHOWN_VALUE_CHARS) } : {}),
      config: previewValues(config, SHOWN_VALUE_CHARS),
      wandb_project: record.wandb_project,
      wandb_run_name: record.wandb_run_name,
      trainer_wandb_run_name: record.trainer_wandb_run_name,
      wandb_group: record.wandb_group,
      config_path: record.config_path,
      logs: record.logs,
      log_uris: Object.fromEntries(Object.keys(record.logs).map((name) => [name, runLogUri(id, name as RunProcess)])),
      cost_estimate: estimateAnswer(runtime.settings, estimate),
      readiness: runtime.readiness.view(selected.config),
      message: [
        ...(dryRun
          ? [`Dry run: nothing was written or started${record.placement === 'slurm' ? ' and no job submitted; `script` is the job script a start would submit' : ''}. Call again without dry_run to start it${dryRunConfirmationNote(runtime.settings, estimate, record.environment, args.confirm_cost_usd)}.`]
          : [`Training starting. Use rl_check_status('${id}') to monitor (${every(runtime.settings.statusMinIntervalSeconds)}; it is rate limited per run).`, `Stop it with rl_stop_training('${id}').`]),
        basis(source, selected.config, selected.applied),
        ...selected.notes,
      ].join(' '),
    };
  },
});
