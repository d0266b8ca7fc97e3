/**
 * The `<env file> process` command of one model and the private
 * YAML that carries the endpoint key: the key never reaches argv, where any local user
 * could read it through `ps` or /proc/<pid>/cmdline.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { childEnv } from '../../core/childEnv.js';
import type { JsonValue } from '../../core/json.js';
import type { Settings } from '../../core/settings.js';

export const SERVER_TYPES = ['openai', 'sglang', 'vllm', 'trl'] as const;
export type ServerType = (typeof SERVER_TYPES)[number];

/**
 * Locked env values the test shares with training, so the environment is judged under the same
 * tokenizer and token budget it will train with (the tokenizer is the trained model's on purpose:
 * DummyManagedServer tokens are placeholders and scores come from the text).
 */
const SHARED_LOCKED_ENV_FIELDS = ['tokenizer_name', 'max_token_length', 'max_num_workers', 'max_batches_offpolicy'] as const;

export interface ProcessCommandOptions {
  envFile: string;
  numSteps: number;
  groupSize: number;
  useWandb: boolean;
  outputFile: string;
  baseUrl: string;
  modelId: string;
  serverType: ServerType;
  /** The 0600 YAML holding `openai.api_key`. */
  keyConfigFile: string;
}

/**
 * One flag and its value. atroposlib re-reads argv itself and takes a value that starts with `-`
 * for a bare boolean flag, so such values are glued on with `=`.
 */
function flag(name: string, value: JsonValue): string[] {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.startsWith('-') ? [`--${name}=${text}`] : [`--${name}`, text];
}

export function processCommand(settings: Settings, opts: ProcessCommandOptions): { file: string; args: string[] } {
  const args = [opts.envFile, 'process', '--config', opts.keyConfigFile];
  args.push(...flag('env.total_steps', opts.numSteps), ...flag('env.group_size', opts.groupSize));
  args.push(...flag('env.use_wandb', opts.useWandb), ...flag('env.data_path_to_save_groups', opts.outputFile));
  for (const field of SHARED_LOCKED_ENV_FIELDS) {
    const value = settings.locked.env[field];
    if (value !== undefined && value !== null) args.push(...flag(`env.${field}`, value));
  }
  args.push(...flag('openai.base_url', opts.baseUrl), ...flag('openai.model_name', opts.modelId));
  args.push(...flag('openai.server_type', opts.serverType), ...flag('openai.health_check', false));
  return { file: settings.python, args };
}

/** The allow-listed environment of a test child; W&B credentials only when W&B is asked for. */
export function processEnv(settings: Settings, useWandb: boolean): Record<string, string> {
  const wandb = useWandb
    ? { WANDB_API_KEY: settings.secrets.wandbApiKey, WANDB_ENTITY: settings.wandb.entity, WANDB_BASE_URL: settings.wandb.baseUrl }
    : {};
  return childEnv(settings.processEnv, { ...wandb, ATROPOS_ALLOW_DUMMY_MANAGED_SERVER: '1', PYTHONUNBUFFERED: '1' });
}

/**
 * Writes `openai: {api_key}` to a 0600 file in a fresh 0700 directory outside RL_HOME (so the
 * test's own files never hold the key). `remove()` deletes it; call it when the test ends.
 */
export interface KeyConfig {
  path: string;
  remove(): Promise<void>;
}

export async function writeKeyConfig(apiKey: string): Promise<KeyConfig> {
  const dir = await mkdtemp(join(tmpdir(), 'rl-inference-key-'));
  const path = join(dir, 'openai.yaml');
  await writeFile(path, stringify({ openai: { api_key: apiKey } }), { mode: 0o600, flag: 'wx' });
  return { path, remove: () => rm(dir, { recursive: true, force: true }) };
}
