/**
 * The operator configuration as the rest of the server sees it: the settings type, the locked
 * values every run config carries, and what follows from them (RL_HOME, the secrets in use).
 * Reading and checking them is the runtime's config service's job (src/runtime/config/settings.ts).
 */
import { mkdirSync } from 'node:fs';
import { SettingsError } from './errors.js';
import type { JsonValue } from './json.js';
import { isWholePlaceholder } from './placeholders.js';

/** Operator-owned values written into every run config; the model cannot change them. */
export interface LockedValues {
  env: Record<string, JsonValue>;
  openai: Record<string, JsonValue>;
  tinker: Record<string, JsonValue>;
  slurm: boolean;
  testing: boolean;
}

/** The seed's LOCKED_FIELDS. rollout_server_url and openai.base_url are derived from the ports. */
export function defaultLockedValues(): LockedValues {
  return {
    env: {
      tokenizer_name: 'Qwen/Qwen3-8B',
      use_wandb: true,
      max_token_length: 8192,
      max_num_workers: 2048,
      worker_timeout: 3600,
      total_steps: 2500,
      steps_per_eval: 25,
      max_batches_offpolicy: 3,
      inference_weight: 1.0,
      eval_limit_ratio: 0.1,
    },
    openai: {
      model_name: 'Qwen/Qwen3-8B',
      api_key: 'x',
      weight: 1.0,
      num_requests_for_eval: 256,
      timeout: 3600,
      server_type: 'sglang',
    },
    tinker: {
      lora_rank: 32,
      learning_rate: 0.00004,
      max_token_trainer_length: 9000,
      checkpoint_dir: './temp/',
      save_checkpoint_interval: 25,
    },
    slurm: false,
    testing: false,
  };
}

/** Dollars per million tokens of one base model on Tinker, with where and when the figures were read. */
export interface ModelPrice {
  prefill: number;
  sample: number;
  train: number;
  /** Prefill Tinker served from its cache; unset: 20% of `prefill`, as Tinker bills it since 2026-07-17. */
  cached_prefill?: number;
  /** The date the figures were read (YYYY-MM-DD). */
  as_of: string;
  source: string;
}

/** Prices by Tinker base model id; budgets in dollars (undefined = none). */
export interface CostSettings {
  prices: Record<string, ModelPrice>;
  maxRunUsd?: number;
  maxTotalUsd?: number;
  /** RL_BUDGET_WINDOW: RL_MAX_TOTAL_COST_USD caps the ledger's spend over this many seconds back; undefined: all of it. */
  budgetWindowSeconds?: number;
  confirmAboveUsd?: number;
  /** RL_BILLING_REFRESH_SECONDS: a run's billed usage is asked of Tinker at most this often. */
  billingRefreshSeconds: number;
}

/** Where runs are placed (RL_PLACEMENT) and what a Slurm job of a run asks for (RL_SLURM_*); a start may ask otherwise. */
export interface PlacementSettings {
  placement: 'local' | 'slurm';
  slurm: {
    partition?: string;
    account?: string;
    timeLimit?: string;
    cpusPerProcess: number;
    memPerProcessMb: number;
    /** RL_MAX_SLURM_RUNS: active Slurm runs (all servers sharing RL_HOME) at most. */
    maxRuns: number;
  };
}

export interface Secrets {
  tinkerApiKey?: string;
  wandbApiKey?: string;
  openrouterApiKey?: string;
}

export interface Settings {
  /** tinker-atropos checkout; trainer and environment processes run with it as cwd. */
  root: string;
  /** True when no checkout was configured and the bundled examples tree is used. */
  usingBundledExamples: boolean;
  environmentsDirs: string[];
  python: string;
  home: string;
  apiPort: number;
  inferencePort: number;
  statusMinIntervalSeconds: number;
  stopGraceSeconds: number;
  stopRunsOnExit: boolean;
  /** RL_STALL_SECONDS / RL_STALL_ACTION: no trainer step and no new data this long is a stall; warn or stop the run. */
  stall: { seconds: number; action: 'warn' | 'stop' };
  /** RL_AUTO_RESUME: times a cookbook run that failed for a transient cause is resumed by its keeper (0: never). */
  autoResume: number;
  /** RL_MAX_CONCURRENT_RUNS: active runs on this host (all servers sharing RL_HOME) at most. */
  maxConcurrentRuns: number;
  /** RL_PLACEMENT and the RL_SLURM_* settings. */
  placement: PlacementSettings['placement'];
  slurm: PlacementSettings['slurm'];
  /** RL_ALLOW_UNMANAGED_ENVIRONMENTS: start environments that do not use managed_server anyway. */
  allowUnmanagedEnvironments: boolean;
  /** RL_REQUIRE_READY: a start needs a readiness verdict for its environment and config that is not no_go (rl_check_environment). */
  requireReady: boolean;
  /** Start-up stage deadlines in seconds. */
  stageTimeouts: { api: number; trainer: number; env: number };
  introspectTimeoutSeconds: number;
  secrets: Secrets;
  /** `timeoutSeconds`: what one W&B lookup (all its requests and retries) may take. */
  wandb: { entity?: string; project: string; baseUrl: string; timeoutSeconds: number };
  /** TINKER_OAI_BASE_URL: Tinker's OpenAI-compatible endpoint, serving base models and sampler checkpoints (key: TINKER_API_KEY). */
  tinkerOaiBaseUrl: string;
  /** TINKER_BASE_URL and TINKER_PROJECT_ID, as Tinker's SDK reads them: given to whatever runs the SDK with the key. */
  tinkerSdk: { baseUrl?: string; projectId?: string };
  logLevel: string;
  /**
   * RL_CLIENT: `hermes` fits Hermes Agent, which shows the model a result's text and
   * structuredContent side by side and counts every isError toward a breaker that stops calling
   * the server: answers are structuredContent alone, refusals a model can fix are not isError, and
   * tools/list carries no outputSchema (its SDK would reject a refusal's structuredContent).
   */
  client: 'generic' | 'hermes';
  locked: LockedValues;
  /**
   * What the operator's RL_MCP_CONFIG `locked` sections set themselves (minus `unlocked`), without
   * the defaults above, which are tinker-atropos' infrastructure settings: a cookbook run is locked
   * by these only, and its recipe's own tuned defaults stand for the rest.
   */
  operatorLocked: Pick<LockedValues, 'env' | 'openai' | 'tinker'>;
  /** RL_MAX_RUN_COST_USD, RL_MAX_TOTAL_COST_USD, RL_CONFIRM_ABOVE_USD and the price table (defaults + RL_MCP_CONFIG `prices`). */
  cost: CostSettings;
  /** Where the values came from, for messages: the config file path if any. */
  configFile?: string;
  /** The environment the server was started with: children get an allow-listed subset of it. */
  processEnv: Readonly<Record<string, string | undefined>>;
  /** The directory relative settings were read against: a run's keeper starts there. */
  cwd: string;
}

/** Creates RL_HOME; a path that cannot be a directory is a bad setting like any other. */
export function createHome(home: string): void {
  try {
    mkdirSync(home, { recursive: true });
  } catch (err) {
    throw new SettingsError(`RL_HOME=${home} cannot be created (${(err as NodeJS.ErrnoException).code ?? String(err)}): point RL_HOME at a writable directory`);
  }
}

/** Secret values in use, for redaction: the three known keys plus any named secret read later. */
export function secretValues(settings: Settings): string[] {
  return Object.values(settings.secrets).filter((v): v is string => typeof v === 'string' && v !== '' && !isWholePlaceholder(v));
}
