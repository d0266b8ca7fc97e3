/**
 * The `<env file> process` command of one model and the private
 * YAML that carries the endpoint key: the key never reaches argv, where any local user
 * could read it through `ps` or /proc/<pid>/cmdline.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childEnv } from '../../core/childEnv.js';
import type { JsonValue } from '../../core/json.js';
import type { Settings } from '../../core/settings.js';
import { yaml } from '../../core/onDemand.js';

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
  /** The 0600 YAML holding `openai.api_key` (one entry), or the whole `openai:` list (two entries). */
  keyConfigFile: string;
  /**
   * 2 when the environment's config_init does not return a list: atroposlib would spread a single
   * config to localhost:9004-9007, and refuses --openai.* flags beside a YAML list, so the endpoint
   * is then given only in the file, twice.
   */
  serverEntries?: 1 | 2;
}

/**
 * One flag and its value. atroposlib re-reads argv itself and takes a value that starts with `-`
 * for a bare boolean flag, so such values are glued on with `=`.
 */
export function flag(name: string, value: JsonValue): string[] {
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
  if (opts.serverEntries !== 2) {
    args.push(...flag('openai.base_url', opts.baseUrl), ...flag('openai.model_name', opts.modelId));
    args.push(...flag('openai.server_type', opts.serverType), ...flag('openai.health_check', false));
  }
  return { file: settings.python, args };
}

/** One `openai:` entry of a model under test (the key is added by the KeyConfig). */
export function endpointEntry(opts: Pick<ProcessCommandOptions, 'baseUrl' | 'modelId' | 'serverType'>): Record<string, JsonValue> {
  return { base_url: opts.baseUrl, model_name: opts.modelId, server_type: opts.serverType, health_check: false };
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
  /** The key itself, for a child that reads it from a variable of its environment (verifiers' `-k`). */
  readonly key: string;
  /** Writes a 0600 file beside it holding a whole `openai:` list, the key in every entry; its path. */
  serversFile(name: string, entries: Record<string, JsonValue>[]): Promise<string>;
  /** Writes a 0600 file beside it holding `doc` (`env`, `openai` entries...), the key added to each `openai` entry; its path. */
  configFile(name: string, doc: { openai: Record<string, JsonValue>[] } & Record<string, JsonValue>): Promise<string>;
  remove(): Promise<void>;
}

export async function writeKeyConfig(apiKey: string): Promise<KeyConfig> {
  const dir = await mkdtemp(join(tmpdir(), 'rl-inference-key-'));
  const path = join(dir, 'openai.yaml');
  await writeFile(path, yaml().stringify({ openai: { api_key: apiKey } }), { mode: 0o600, flag: 'wx' });
  const configFile = async (name: string, doc: { openai: Record<string, JsonValue>[] } & Record<string, JsonValue>): Promise<string> => {
    const file = join(dir, `${name.replace(/[^A-Za-z0-9_-]/g, '_')}.yaml`);
    await writeFile(file, yaml().stringify({ ...doc, openai: doc.openai.map((e) => ({ ...e, api_key: apiKey })) }), { mode: 0o600, flag: 'wx' });
    return file;
  };
  const serversFile = (name: string, entries: Record<string, JsonValue>[]): Promise<string> => configFile(name, { openai: entries });
  return { path, key: apiKey, serversFile, configFile, remove: () => rm(dir, { recursive: true, force: true }) };
}
