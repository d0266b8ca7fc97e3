/**
 * Reading the operator configuration: environment variables, optionally a YAML file named by
 * RL_MCP_CONFIG with the same keys plus `locked` / `unlocked` / `prices`. The environment wins over the file.
 * Everything is validated here so that a bad value stops the server at start with one clear line.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { BASE_ENV_CONFIG_FIELDS } from './baseEnvConfig.js';
import { coerceFieldValue, expectedText, FieldValueError } from './fields.js';
import { SettingsError } from '../../core/errors.js';
import type { JsonValue } from '../../core/json.js';
import { yaml } from '../../core/onDemand.js';
import { BUNDLED_EXAMPLES_ROOT } from '../../core/files/paths.js';
import { defaultLockedValues, type LockedValues, type Settings } from '../../core/settings.js';
import { placeholderMessage, unexpandedReference } from '../../core/placeholders.js';
import { clientSetting, hermesHome } from './clientSettings.js';
import { COST_KEYS, costSettings } from '../cost/priceConfig.js';
import { PLACEMENT_KEYS, placementSettings } from './placementSettings.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Keys accepted in the RL_MCP_CONFIG file besides `locked` and `unlocked`. */
const KNOWN_KEYS = [
  'TINKER_ATROPOS_ROOT', 'RL_ENVIRONMENTS_DIRS', 'RL_PYTHON', 'RL_HOME', 'RL_API_PORT', 'RL_INFERENCE_PORT',
  'RL_STATUS_MIN_INTERVAL_SECONDS', 'RL_STOP_GRACE_SECONDS', 'RL_STOP_RUNS_ON_EXIT', 'RL_AUTO_RESUME', 'RL_STALL_SECONDS', 'RL_MAX_CONCURRENT_RUNS',
  'RL_STALL_ACTION', 'RL_ALLOW_UNMANAGED_ENVIRONMENTS', 'RL_REQUIRE_READY', 'RL_API_READY_TIMEOUT_SECONDS', 'RL_TRAINER_READY_TIMEOUT_SECONDS',
  'RL_ENV_READY_TIMEOUT_SECONDS', 'RL_INTROSPECT_TIMEOUT_SECONDS', 'TINKER_API_KEY', 'WANDB_API_KEY', 'OPENROUTER_API_KEY',
  'WANDB_ENTITY', 'WANDB_PROJECT', 'WANDB_BASE_URL', 'TINKER_OAI_BASE_URL', 'TINKER_BASE_URL', 'TINKER_PROJECT_ID', 'RL_WANDB_TIMEOUT_SECONDS', 'LOG_LEVEL', 'RL_CLIENT', ...COST_KEYS, ...PLACEMENT_KEYS,
] as const;
type Key = (typeof KNOWN_KEYS)[number];

interface FileConfig {
  values: Partial<Record<Key, string>>;
  locked?: Record<string, unknown>;
  unlocked?: string[];
  /** Price entries by model id, checked by costSettings. */
  prices?: unknown;
}

function readConfigFile(path: string): FileConfig {
  if (!existsSync(path)) {
    throw new SettingsError(`RL_MCP_CONFIG names ${path}, which does not exist: create it or unset RL_MCP_CONFIG`);
  }
  let doc: unknown;
  try {
    doc = yaml().parse(readFileSync(path, 'utf8'));
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
    } else if (key === 'prices') {
      out.prices = value;
    } else if ((KNOWN_KEYS as readonly string[]).includes(key)) {
      if (value === null || value === undefined) continue;
      if (typeof value === 'object') {
        throw new SettingsError(`RL_MCP_CONFIG ${path}: ${key} must be a single value, not a ${Array.isArray(value) ? 'list' : 'mapping'}`);
      }
      values[key as Key] = String(value);
    } else {
      throw new SettingsError(`RL_MCP_CONFIG ${path}: unknown key '${key}'; known keys are ${KNOWN_KEYS.join(', ')}, locked, unlocked, prices`);
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

/** Where each value comes from: the environment first, then the RL_MCP_CONFIG file. */
interface SettingSource {
  readonly env: Record<string, string | undefined>;
  readonly cwd: string;
  /** RL_MCP_CONFIG as written (for messages) and resolved; the file's contents. */
  readonly configPath?: string;
  readonly configFile?: string;
  readonly file: FileConfig;
  get(key: Key): string | undefined;
  /** The folder a relative path in `key` is relative to. */
  pathBase(key: Key): string;
}

function settingSource(env: Record<string, string | undefined>, cwd: string): SettingSource {
  const configPath = nonEmpty(env.RL_MCP_CONFIG);
  const configFile = configPath ? resolve(cwd, configPath) : undefined;
  const file = configFile ? readConfigFile(configFile) : { values: {} };
  // A relative path means relative to where it was written: the cwd for the environment, the
  // file's folder for RL_MCP_CONFIG (clients such as Claude Desktop may start servers in /).
  const fileDir = configFile ? dirname(configFile) : cwd;
  return {
    env,
    cwd,
    configPath,
    configFile,
    file,
    get: (key) => nonEmpty(env[key]) ?? nonEmpty(file.values[key]),
    pathBase: (key) => (nonEmpty(env[key]) !== undefined ? cwd : fileDir),
  };
}

/** The tinker-atropos checkout: the setting, else ./tinker-atropos, else the bundled examples. */
function checkoutRoot(src: SettingSource): { root: string; usingBundledExamples: boolean } {
  const rootSetting = src.get('TINKER_ATROPOS_ROOT');
  if (rootSetting) {
    const root = resolve(src.pathBase('TINKER_ATROPOS_ROOT'), rootSetting);
    if (!existsSync(root)) {
      throw new SettingsError(`TINKER_ATROPOS_ROOT=${rootSetting} does not exist: point it at a tinker-atropos checkout or unset it to use the bundled examples`);
    }
    return { root, usingBundledExamples: false };
  }
  const local = join(src.cwd, 'tinker-atropos');
  if (existsSync(local)) return { root: local, usingBundledExamples: false };
  return { root: BUNDLED_EXAMPLES_ROOT, usingBundledExamples: true };
}

function environmentsDirs(src: SettingSource): string[] {
  const dirs = (src.get('RL_ENVIRONMENTS_DIRS') ?? '')
    .split(':')
    .map((d) => d.trim())
    .filter((d) => d !== '')
    .map((d) => resolve(src.pathBase('RL_ENVIRONMENTS_DIRS'), d));
  for (const dir of dirs) {
    if (!existsSync(dir)) throw new SettingsError(`RL_ENVIRONMENTS_DIRS entry ${dir} does not exist: fix or remove it`);
  }
  return dirs;
}

/** RL_PYTHON (a bare command name is looked up on PATH), else the checkout's venv, else python3. */
function pythonCommand(src: SettingSource, root: string): string {
  const setting = src.get('RL_PYTHON');
  if (setting) return isAbsolute(setting) || !setting.includes('/') ? setting : resolve(src.pathBase('RL_PYTHON'), setting);
  const venvPython = join(root, '.venv', 'bin', 'python');
  return existsSync(venvPython) ? venvPython : 'python3';
}

function rlHome(src: SettingSource): string {
  return resolve(src.pathBase('RL_HOME'), src.get('RL_HOME') ?? join(hermesHome(src.env), 'rl_training'));
}

function ports(src: SettingSource): { apiPort: number; inferencePort: number } {
  const apiPort = parseInteger('RL_API_PORT', src.get('RL_API_PORT') ?? '8000', 1, 65535);
  const inferencePort = parseInteger('RL_INFERENCE_PORT', src.get('RL_INFERENCE_PORT') ?? '8001', 1, 65535);
  if (apiPort === inferencePort) {
    throw new SettingsError(`RL_API_PORT and RL_INFERENCE_PORT are both ${apiPort}: the Atropos API and the trainer need different ports`);
  }
  return { apiPort, inferencePort };
}

function logLevel(src: SettingSource): string {
  const level = (src.get('LOG_LEVEL') ?? 'info').toLowerCase();
  if (!LOG_LEVELS.includes(level)) throw new SettingsError(`LOG_LEVEL=${level} is not one of ${LOG_LEVELS.join(', ')}`);
  return level;
}

export const DEFAULT_TINKER_OAI_BASE_URL = 'https://tinker.thinkingmachines.dev/services/tinker-prod/oai/api/v1';

function httpUrl(src: SettingSource, key: Key, fallback: string): string {
  const url = (src.get(key) ?? fallback).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+/.test(url)) throw new SettingsError(`${key}=${url} is not an http(s) URL`);
  return url;
}

/**
 * The defaults, overridden by the file's `locked` sections, minus its `unlocked` fields; and of
 * those, the ones the file's sections name (`operator`).
 */
function lockedValues(src: SettingSource): { locked: LockedValues; operator: Settings['operatorLocked'] } {
  const locked = defaultLockedValues();
  if (src.file.locked) {
    applyLockedOverrides(locked, src.file.locked, src.configPath!);
    checkLockedEnv(locked, src.configPath!);
  }
  for (const field of src.file.unlocked ?? []) delete locked.env[field];
  const named = (section: 'env' | 'openai' | 'tinker'): Record<string, JsonValue> => {
    const given = src.file.locked?.[section];
    const names = typeof given === 'object' && given !== null ? Object.keys(given) : [];
    return Object.fromEntries(names.filter((n) => Object.hasOwn(locked[section], n)).map((n) => [n, locked[section][n]!]));
  };
  return { locked, operator: { env: named('env'), openai: named('openai'), tinker: named('tinker') } };
}

const seconds = (src: SettingSource, key: Key, fallback: string, min: number): number => parseSeconds(key, src.get(key) ?? fallback, min);

/** The rate limit, the stop grace and the deadlines of start-up and introspection. */
function timings(src: SettingSource): Pick<Settings, 'statusMinIntervalSeconds' | 'stopGraceSeconds' | 'stopRunsOnExit' | 'stageTimeouts' | 'introspectTimeoutSeconds'> {
  return {
    statusMinIntervalSeconds: seconds(src, 'RL_STATUS_MIN_INTERVAL_SECONDS', '1800', 0),
    stopGraceSeconds: seconds(src, 'RL_STOP_GRACE_SECONDS', '10', 0),
    stopRunsOnExit: parseFlag('RL_STOP_RUNS_ON_EXIT', src.get('RL_STOP_RUNS_ON_EXIT') ?? ''),
    stageTimeouts: {
      api: seconds(src, 'RL_API_READY_TIMEOUT_SECONDS', '60', 1),
      trainer: seconds(src, 'RL_TRAINER_READY_TIMEOUT_SECONDS', '600', 1),
      env: seconds(src, 'RL_ENV_READY_TIMEOUT_SECONDS', '120', 1),
    },
    introspectTimeoutSeconds: seconds(src, 'RL_INTROSPECT_TIMEOUT_SECONDS', '60', 1),
  };
}

/** When a run counts as stalled and what to do then; which runs may start (how many at once, which environments). */
function watchdog(src: SettingSource): Pick<Settings, 'stall' | 'allowUnmanagedEnvironments' | 'maxConcurrentRuns' | 'requireReady' | 'autoResume'> {
  const action = (src.get('RL_STALL_ACTION') ?? 'warn').trim().toLowerCase();
  if (action !== 'warn' && action !== 'stop') throw new SettingsError(`RL_STALL_ACTION=${JSON.stringify(action)} is not warn or stop`);
  return {
    stall: { seconds: seconds(src, 'RL_STALL_SECONDS', '1200', 1), action },
    allowUnmanagedEnvironments: parseFlag('RL_ALLOW_UNMANAGED_ENVIRONMENTS', src.get('RL_ALLOW_UNMANAGED_ENVIRONMENTS') ?? ''),
    requireReady: parseFlag('RL_REQUIRE_READY', src.get('RL_REQUIRE_READY') ?? ''),
    maxConcurrentRuns: parseInteger('RL_MAX_CONCURRENT_RUNS', src.get('RL_MAX_CONCURRENT_RUNS') ?? '4', 1, 64),
    autoResume: parseInteger('RL_AUTO_RESUME', src.get('RL_AUTO_RESUME') ?? '2', 0, 100),
  };
}

/**
 * Builds the settings from an environment (process.env by default). Relative paths are resolved
 * against `cwd`. Throws SettingsError with a one-line, actionable message on any bad value; values
 * are checked in a fixed order, so the first bad one is the one reported.
 */
/** Paths that still hold a `${VAR}` would name a file or folder nobody meant: refused at start. */
const PATH_KEYS = ['TINKER_ATROPOS_ROOT', 'RL_ENVIRONMENTS_DIRS', 'RL_PYTHON', 'RL_HOME'] as const satisfies readonly Key[];

function refusePlaceholderPaths(src: SettingSource): void {
  for (const key of PATH_KEYS) {
    const reference = unexpandedReference(src.get(key));
    if (reference !== undefined) throw new SettingsError(placeholderMessage(key, reference));
  }
}

export function loadSettings(env: Record<string, string | undefined> = process.env, cwd = process.cwd()): Settings {
  // Before the file is looked for: "${X} does not exist" would hide the cause.
  const config = unexpandedReference(nonEmpty(env.RL_MCP_CONFIG));
  if (config !== undefined) throw new SettingsError(placeholderMessage('RL_MCP_CONFIG', config));
  const src = settingSource(env, cwd);
  refusePlaceholderPaths(src);
  const { root, usingBundledExamples } = checkoutRoot(src);
  const dirs = environmentsDirs(src);
  const python = pythonCommand(src, root);
  const home = rlHome(src);
  const { apiPort, inferencePort } = ports(src);
  const level = logLevel(src);
  const baseUrl = httpUrl(src, 'WANDB_BASE_URL', 'https://api.wandb.ai');
  const { locked, operator } = lockedValues(src);
  return {
    root,
    usingBundledExamples,
    environmentsDirs: dirs,
    python,
    home,
    apiPort,
    inferencePort,
    ...timings(src),
    ...watchdog(src),
    ...placementSettings((key) => src.get(key)),
    secrets: {
      tinkerApiKey: src.get('TINKER_API_KEY'),
      wandbApiKey: src.get('WANDB_API_KEY'),
      openrouterApiKey: src.get('OPENROUTER_API_KEY'),
    },
    wandb: {
      entity: src.get('WANDB_ENTITY'),
      project: src.get('WANDB_PROJECT') ?? 'atropos-tinker',
      baseUrl,
      timeoutSeconds: seconds(src, 'RL_WANDB_TIMEOUT_SECONDS', '20', 1),
    },
    tinkerOaiBaseUrl: httpUrl(src, 'TINKER_OAI_BASE_URL', DEFAULT_TINKER_OAI_BASE_URL),
    tinkerSdk: { baseUrl: src.get('TINKER_BASE_URL'), projectId: src.get('TINKER_PROJECT_ID') },
    logLevel: level,
    client: clientSetting(src.get('RL_CLIENT')),
    locked,
    operatorLocked: operator,
    cost: costSettings((key) => src.get(key), src.file.prices, src.configPath),
    configFile: src.configFile,
    processEnv: { ...env },
    cwd,
  };
}
