/**
 * The run config YAML that the trainer and the environment both read with --config.
 * Every value is in the file (tinker-atropos' CLI overrides are no-ops upstream), W&B names are
 * fixed in advance so the run can be found later, and nothing secret is ever written.
 */
import { writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { UserError } from '../../../core/errors.js';
import type { SecretRedactor } from '../../../core/redact.js';
import { lockedEnvValues, runUsesWandb } from '../../config/selection.js';
import type { JsonValue } from '../../../core/json.js';
import type { Settings } from '../../../core/settings.js';
import { serverEntriesNeeded, type TinkerFacts } from '../../environments/tinkerReadiness.js';
import type { RunSelection } from '../seams/framework.js';
import type { RunNames } from '../seams/record.js';
import { RUN_FILES } from '../../../core/files/home.js';
import { yaml } from '../../../core/onDemand.js';


/**
 * tinker-atropos draws a random wandb_run_suffix per config load; a fixed one makes the trainer's
 * W&B run name predictable: <env>-<run_id>-trainer-<suffix>.
 */
export const WANDB_RUN_SUFFIX = 'mcp';

export interface RunConfig {
  env: Record<string, JsonValue>;
  openai: Record<string, JsonValue>[];
  tinker: Record<string, JsonValue>;
  slurm: boolean;
  testing: boolean;
}


/**
 * The run's `openai:` section: the trainer's inference server, written twice when the
 * environment's config_init does not return a list (atroposlib spreads a single config to
 * localhost:9004-9007 unless the YAML lists two or more servers; two identical entries are used as
 * written).
 */
function serverEntries(settings: Settings, tinker: TinkerFacts | undefined, inferencePort: number): Record<string, JsonValue>[] {
  // health_check off unless the operator locks it on: upstream's default sends a 1-token request
  // to the trainer every second for the whole run, each a paid Tinker sampling call.
  const entry = { health_check: false, ...settings.locked.openai, base_url: `http://127.0.0.1:${inferencePort}/v1` };
  return Array.from({ length: serverEntriesNeeded(tinker?.server_configs ?? 'list') }, () => ({ ...entry }));
}

/** Where a run lives on the host: its own ports and its own checkpoint directory (absolute). */
export interface RunLocation {
  ports: { api: number; inference: number };
  checkpointDir: string;
}

/**
 * The run's checkpoint_dir: upstream's default `./temp/` is relative to the trainer's cwd and
 * handed to the API and environments through /register, so each run gets its own absolute one
 * (inside its directory, or under an absolute directory the operator locked).
 */
export function checkpointDir(settings: Settings, runDir: string, runId: string): string {
  const locked = settings.locked.tinker.checkpoint_dir;
  return typeof locked === 'string' && isAbsolute(locked) ? join(locked, runId) : join(runDir, RUN_FILES.checkpoints);
}

export function buildRunConfig(settings: Settings, selection: RunSelection, runId: string, placement: RunLocation): { config: RunConfig; names: RunNames } {
  const locked = { ...lockedEnvValues(settings), rollout_server_url: `http://127.0.0.1:${placement.ports.api}` };
  const env: Record<string, JsonValue> = { ...locked };
  for (const [field, value] of Object.entries(selection.values)) {
    // Locked wins even if an edited value slipped in (e.g. rollout_server_url from config_init()).
    if (value !== null && !(field in locked)) env[field] = value;
  }
  const envName = selection.environment.name;
  if (typeof env.wandb_name !== 'string' || env.wandb_name === '') env.wandb_name = `${envName}-${runId}`;
  const wandbRunName = `${envName}-${runId}`;
  const config: RunConfig = {
    env,
    openai: serverEntries(settings, selection.tinker, placement.ports.inference),
    tinker: {
      ...settings.locked.tinker,
      checkpoint_dir: placement.checkpointDir,
      wandb_project: selection.wandbProject,
      wandb_group: runId,
      wandb_run_name: wandbRunName,
      wandb_run_suffix: WANDB_RUN_SUFFIX,
    },
    slurm: settings.locked.slurm,
    testing: settings.locked.testing,
  };
  return {
    config,
    names: {
      wandb_project: selection.wandbProject,
      wandb_group: runId,
      wandb_run_name: wandbRunName,
      trainer_wandb_run_name: `${wandbRunName}-trainer-${WANDB_RUN_SUFFIX}`,
      wandb_run_suffix: WANDB_RUN_SUFFIX,
      wandb_name: env.wandb_name as string,
      use_wandb: runUsesWandb(settings, selection.values),
    },
  };
}

/** Writes the YAML; refuses if any secret value in use would land in it. */
export function writeRunConfig(path: string, config: RunConfig, runId: string, redactor: SecretRedactor): void {
  const text = `# rl-training-mcp run ${runId}: read by launch_training.py and the environment (--config). No secrets.\n${yaml().stringify(config)}`;
  if (redactor.redact(text) !== text) {
    throw new UserError('The run config would contain a secret (a locked value equals an API key); remove it from the RL_MCP_CONFIG locked values. Keys reach the processes through their environment only.');
  }
  writeFileSync(path, text, { mode: 0o644 });
}
