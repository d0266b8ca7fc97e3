/**
 * Reading the operator configuration: environment variables, optionally a YAML file named by
 * RL_MCP_CONFIG with the same keys plus `locked` / `unlocked`. The environment wins over the file.
 * Everything is validated here so that a bad value stops the server at start with one clear line.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { BASE_ENV_CONFIG_FIELDS } from './baseEnvConfig.js';
import { coerceFieldValue, expectedText, FieldValueError } from './fields.js';
import { SettingsError } from '../../core/errors.js';
import type { JsonValue } from '../../core/json.js';
import { BUNDLED_EXAMPLES_ROOT } from '../../core/paths.js';
import { defaultLockedValues, type LockedValues, type Settings } from '../../core/settings.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Keys accepted in the RL_MCP_CONFIG file besides `locked` and `unlocked`. */
const KNOWN_KEYS = [
  'TINKER_ATROPOS_ROOT',
  'RL_ENVIRONMENTS_DIRS',
  'RL_PYTHON',
  'RL_HOME',
  'RL_API_PORT',
  'RL_INFERENCE_PORT',
  'RL_STATUS_MIN_INTERVAL_SECONDS',
  'RL_STOP_GRACE_SECONDS',
  'RL_STOP_RUNS_ON_EXIT',
  'RL_API_READY_TIMEOUT_SECONDS',
  'RL_TRAINER_READY_TIMEOUT_SECONDS',
  'RL_ENV_READY_TIMEOUT_SECONDS',
  'RL_INTROSPECT_TIMEOUT_SECONDS',
  'TINKER_API_KEY',
  'WANDB_API_KEY',
  'OPENROUTER_API_KEY',
  'WANDB_ENTITY',
  'WANDB_PROJECT',
  'WANDB_BASE_URL',
  'RL_WANDB_TIMEOUT_SECONDS',
  'LOG_LEVEL',
] as const;
type Key = (typeof KNOWN_KEYS)[number];

interface FileConfig {
  values: Partial<Record<Key, string>>;
  locked?: Record<string, unknown>;
  unlocked?: string[];
}

function readConfigFile(path: string): FileConfig {
  if (!existsSync(path)) {
    throw new SettingsError(`RL_MCP_CONFIG names ${path}, which does not exist: create it or unset RL_MCP_CONFIG`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(path, 'utf8'));
  } catch (err) {
    const firstLine = String((err as Error).message).split('\n')[0];
    throw new SettingsError(`RL_MCP_CONFIG file ${path} is not valid YAML: ${firstLine}`);
  }
  if (doc === null || doc === undefined) return { values: {} };
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw new SettingsError(`RL_MCP_CONFIG file ${path} must hold a mapping of settings, not ${Array.isArray(doc) ? 'a list' : typeof doc}`);
  }
  const values: Partial<Record<Key, string>> = {};
  const out: FileConfig = { values };
  for (const [key, value] of Object.entries(doc as Record<string, unknown>)) {
    if (key === 'locked') {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        throw new SettingsError(`RL_MCP_CONFIG ${path}: 'locked' must be a mapping with env/openai/tinker/slurm/testing`);
      }
      out.locked = value as Record<string, unknown>;
    } else if (key === 'unlocked') {
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
        throw new SettingsError(`RL_MCP_CONFIG ${path}: 'unlocked' must be a list of env field names`);
      }
      out.unlocked = value as string[];
    } else if ((KNOWN_KEYS as readonly string[]).includes(key)) {
      if (value === null || value === undefined) continue;
      if (typeof value === 'object') {
        throw new SettingsError(`RL_MCP_CONFIG ${path}: ${key} must be a single value, not a ${Array.isArray(value) ? 'list' : 'mapping'}`);
      }
      values[key as Key] = String(value);
    } else {
      throw new SettingsError(`RL_MCP_CONFIG ${path}: unknown key '${key}'; known keys are ${KNOWN_KEYS.join(', ')}, locked, unlocked`);
    }
  }
  return out;
}

function applyLockedOverrides(locked: LockedValues, overrides: Record<string, unknown>, path: string): void {
  for (const [section, value] of Object.entries(overrides)) {
    if (section === 'slurm' || section === 'testing') {
      if (typeof value !== 'boolean') throw new SettingsError(`RL_MCP_CONFIG ${path}: locked.${section} must be true or false`);
      locked[section] = value;
    } else if (section === 'env' || section === 'openai' || section === 'tinker') {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        throw new SettingsError(`RL_MCP_CONFIG ${path}: locked.${section} must be a mapping of field: value`);
      }
      Object.assign(locked[section], value as Record<string, JsonValue>);
    } else {
      throw new SettingsError(`RL_MCP_CONFIG ${path}: unknown section locked.${section}; use env, openai, tinker, slurm or testing`);
    }
  }
}

/**
 * A locked value of a known BaseEnvConfig field must fit the field: a wrong one would otherwise
 * surface hours later, in the trainer of a paid run. Values are coerced as rl_edit_config does.
 */
function checkLockedEnv(locked: LockedValues, path: string): void {
  for (const [name, value] of Object.entries(locked.env)) {
    const field = BASE_ENV_CONFIG_FIELDS.find((f) => f.name === name);
    if (!field) continue;
    try {
      locked.env[name] = coerceFieldValue(field, value);
    } catch (err) {
      if (!(err instanceof FieldValueError)) throw err;
      throw new SettingsError(`RL_MCP_CONFIG ${path}: locked.env.${name}: ${err.message}; expected ${expectedText(field)}`);
    }
  }
}

function parseInteger(key: string, raw: string, min: number, max: number): number {
  const text = raw.trim();
  if (!/^-?\d+$/.test(text)) throw new SettingsError(`${key}=${JSON.stringify(raw)} is not a whole number; expected ${min}..${max}`);
  const n = Number(text);
  if (n < min || n > max) throw new SettingsError(`${key}=${n} is out of range; expected ${min}..${max}`);
  return n;
}

function parseSeconds(key: string, raw: string, min: number): number {
  const text = raw.trim();
  const n = Number(text);
  if (text === '' || !Number.isFinite(n) || n < min) {
    throw new SettingsError(`${key}=${JSON.stringify(raw)} is not a number of seconds >= ${min}`);
  }
  return n;
}

function parseFlag(key: string, raw: string): boolean {
  const text = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(text)) return true;
  if (['', '0', 'false', 'no', 'off'].includes(text)) return false;
  throw new SettingsError(`${key}=${JSON.stringify(raw)} is not a flag; use 1 or 0`);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== '' ? value : undefined;
}

/**
 * Builds the settings from an environment (process.env by default). Relative paths are resolved
 * against `cwd`. Throws SettingsError with a one-line, actionable message on any bad value.
 */
export function loadSettings(env: Record<string, string | undefined> = process.env, cwd = process.cwd()): Settings {
  const configPath = nonEmpty(env.RL_MCP_CONFIG);
  const file = configPath ? readConfigFile(resolve(cwd, configPath)) : { values: {} as FileConfig['values'] };
  const get = (key: Key): string | undefined => nonEmpty(env[key]) ?? nonEmpty(file.values[key]);
  // A relative path means relative to where it was written: the cwd for the environment, the
  // file's folder for RL_MCP_CONFIG (clients such as Claude Desktop may start servers in /).
  const fileDir = configPath ? dirname(resolve(cwd, configPath)) : cwd;
  const pathBase = (key: Key): string => (nonEmpty(env[key]) !== undefined ? cwd : fileDir);

  const rootSetting = get('TINKER_ATROPOS_ROOT');
  let root: string;
  let usingBundledExamples = false;
  if (rootSetting) {
    root = resolve(pathBase('TINKER_ATROPOS_ROOT'), rootSetting);
    if (!existsSync(root)) {
      throw new SettingsError(`TINKER_ATROPOS_ROOT=${rootSetting} does not exist: point it at a tinker-atropos checkout or unset it to use the bundled examples`);
    }
  } else if (existsSync(join(cwd, 'tinker-atropos'))) {
    root = join(cwd, 'tinker-atropos');
  } else {
    root = BUNDLED_EXAMPLES_ROOT;
    usingBundledExamples = true;
  }

  const environmentsDirs = (get('RL_ENVIRONMENTS_DIRS') ?? '')
    .split(':')
    .map((d) => d.trim())
    .filter((d) => d !== '')
    .map((d) => resolve(pathBase('RL_ENVIRONMENTS_DIRS'), d));
  for (const dir of environmentsDirs) {
    if (!existsSync(dir)) throw new SettingsError(`RL_ENVIRONMENTS_DIRS entry ${dir} does not exist: fix or remove it`);
  }

  const pythonSetting = get('RL_PYTHON');
  const venvPython = join(root, '.venv', 'bin', 'python');
  const python = pythonSetting ? (isAbsolute(pythonSetting) || !pythonSetting.includes('/') ? pythonSetting : resolve(pathBase('RL_PYTHON'), pythonSetting)) : existsSync(venvPython) ? venvPython : 'python3';

  const hermesHome = nonEmpty(env.HERMES_HOME) ?? join(nonEmpty(env.HOME) ?? homedir(), '.hermes');
  const home = resolve(pathBase('RL_HOME'), get('RL_HOME') ?? join(hermesHome, 'rl_training'));

  const apiPort = parseInteger('RL_API_PORT', get('RL_API_PORT') ?? '8000', 1, 65535);
  const inferencePort = parseInteger('RL_INFERENCE_PORT', get('RL_INFERENCE_PORT') ?? '8001', 1, 65535);
  if (apiPort === inferencePort) {
    throw new SettingsError(`RL_API_PORT and RL_INFERENCE_PORT are both ${apiPort}: the Atropos API and the trainer need different ports`);
  }

  const logLevel = (get('LOG_LEVEL') ?? 'info').toLowerCase();
  if (!LOG_LEVELS.includes(logLevel)) throw new SettingsError(`LOG_LEVEL=${logLevel} is not one of ${LOG_LEVELS.join(', ')}`);

  const baseUrl = (get('WANDB_BASE_URL') ?? 'https://api.wandb.ai').replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+/.test(baseUrl)) throw new SettingsError(`WANDB_BASE_URL=${baseUrl} is not an http(s) URL`);

  const locked = defaultLockedValues();
  if (file.locked) {
    applyLockedOverrides(locked, file.locked, configPath!);
    checkLockedEnv(locked, configPath!);
  }
  for (const field of file.unlocked ?? []) delete locked.env[field];

  return {
    root,
    usingBundledExamples,
    environmentsDirs,
    python,
    home,
    apiPort,
    inferencePort,
    statusMinIntervalSeconds: parseSeconds('RL_STATUS_MIN_INTERVAL_SECONDS', get('RL_STATUS_MIN_INTERVAL_SECONDS') ?? '1800', 0),
    stopGraceSeconds: parseSeconds('RL_STOP_GRACE_SECONDS', get('RL_STOP_GRACE_SECONDS') ?? '10', 0),
    stopRunsOnExit: parseFlag('RL_STOP_RUNS_ON_EXIT', get('RL_STOP_RUNS_ON_EXIT') ?? ''),
    stageTimeouts: {
      api: parseSeconds('RL_API_READY_TIMEOUT_SECONDS', get('RL_API_READY_TIMEOUT_SECONDS') ?? '60', 1),
      trainer: parseSeconds('RL_TRAINER_READY_TIMEOUT_SECONDS', get('RL_TRAINER_READY_TIMEOUT_SECONDS') ?? '600', 1),
      env: parseSeconds('RL_ENV_READY_TIMEOUT_SECONDS', get('RL_ENV_READY_TIMEOUT_SECONDS') ?? '120', 1),
    },
    introspectTimeoutSeconds: parseSeconds('RL_INTROSPECT_TIMEOUT_SECONDS', get('RL_INTROSPECT_TIMEOUT_SECONDS') ?? '60', 1),
    secrets: {
      tinkerApiKey: get('TINKER_API_KEY'),
      wandbApiKey: get('WANDB_API_KEY'),
      openrouterApiKey: get('OPENROUTER_API_KEY'),
    },
    wandb: {
      entity: get('WANDB_ENTITY'),
      project: get('WANDB_PROJECT') ?? 'atropos-tinker',
      baseUrl,
      timeoutSeconds: parseSeconds('RL_WANDB_TIMEOUT_SECONDS', get('RL_WANDB_TIMEOUT_SECONDS') ?? '20', 1),
    },
    logLevel,
    locked,
    configFile: configPath ? resolve(cwd, configPath) : undefined,
    processEnv: { ...env },
  };
}
