/**
 * A cookbook recipe's config as the selection tools show it: the fields of its `CLIConfig`, read
 * from the source (environments/cookbook.ts), minus those the server sets on every run itself,
 * with the operator's locks under the cookbook's names. A verifiers environment is its recipe's
 * fields with `vf_env_id` fixed to the environment and `vf_env_args` (JSON text upstream) edited
 * as a JSON object.
 */
import { stat } from 'node:fs/promises';
import { UserError } from '../../core/errors.js';
import type { JsonValue } from '../../core/json.js';
import type { Settings } from '../../core/settings.js';
import type { CookbookRecipe, RecipeField, VerifiersEnvironment } from '../environments/cookbook.js';
import type { DiscoveredEnvironment } from '../environments/report.js';
import type { FieldInfo } from './fields.js';
import { fileStamp, type Introspection } from './introspection.js';

/**
 * Set by the server on every cookbook run: the log directory inside the run's own directory,
 * `resume` (never `ask`, which blocks on stdin), the W&B names (a cookbook run is read from its
 * metrics.jsonl), the verifiers environment that was selected.
 */
export const SERVER_SET_FIELDS = ['log_path', 'behavior_if_log_dir_exists', 'wandb_project', 'wandb_name', 'vf_env_id'] as const;

/**
 * The operator's own locks (model, LoRA rank, learning rate, steps: its RL_MCP_CONFIG `locked`
 * sections) under the names the cookbook's CLIConfigs use. The built-in locked defaults are
 * tinker-atropos settings and do not apply: without the operator's word a recipe's tuned defaults stand.
 */
export function cookbookLockedValues(settings: Settings): Record<string, JsonValue> {
  const { openai, tinker, env } = settings.operatorLocked;
  const locks: Record<string, JsonValue | undefined> = { model_name: openai.model_name, lora_rank: tinker.lora_rank, learning_rate: tinker.learning_rate, max_steps: env.total_steps };
  return Object.fromEntries(Object.entries(locks).filter((e): e is [string, JsonValue] => e[1] !== undefined));
}

/** What the common CLIConfig fields mean (upstream's source gives types and defaults, not descriptions). */
const KNOWN: Record<string, string> = {
  model_name: 'Base model trained with LoRA on Tinker',
  lora_rank: 'LoRA rank',
  renderer_name: 'Chat template renderer (default: the one recommended for the model)',
  load_checkpoint_path: 'tinker:// state to start from (weights only, fresh optimizer)',
  group_size: 'Rollouts per problem (advantages are relative within a group)',
  groups_per_batch: 'Problems per training step; a step samples groups_per_batch x group_size rollouts',
  learning_rate: 'Adam learning rate',
  max_tokens: 'Sampled tokens per rollout at most',
  temperature: 'Sampling temperature',
  kl_penalty_coef: 'KL penalty towards the base model (0: none)',
  num_substeps: 'Optimizer steps per batch',
  eval_every: 'Evaluate every N steps (0: never)',
  save_every: 'Save a resumable checkpoint (state + sampler) every N steps; a resume restarts from the last one',
  max_steps: 'Steps to train (the dataset may hold fewer batches)',
  env: 'The math_rl dataset',
  seed: 'Random seed',
  dataset_n: 'Examples of the environment to train on (-1: all)',
  dataset_seed: 'Shuffle seed of the environment dataset',
  max_concurrent_generation: 'Concurrent generations (-1: unlimited)',
  max_concurrent_scoring: 'Concurrent scorings (-1: unlimited)',
  loss_fn: 'RL loss function',
  loss_fn_config: 'Extra parameters of the loss function',
  base_url: 'Tinker service URL (default: the SDK\'s)',
};

function toField(field: RecipeField, description: string): FieldInfo {
  const { required: _required, description: own, ...rest } = field;
  return { ...rest, description: own || description };
}

/** vf_env_args: JSON text upstream (verifiers_rl json.loads it); edited as an object, passed as JSON. */
function envArgsField(field: RecipeField, env: VerifiersEnvironment | undefined): FieldInfo {
  const args = env?.env_args.map((a) => (a.default !== undefined ? `${a.name}=${a.default}` : a.name)).join(', ');
  return {
    ...toField(field, ''),
    kind: 'dict',
    nullable: true,
    type: 'str | None (a JSON object: the keyword arguments of load_environment)',
    description: `Keyword arguments of the environment's load_environment${args ? ` (${args})` : ''}`,
  };
}

/** The fields and default values of a cookbook environment, as a fresh selection has them. */
export async function cookbookIntrospection(environment: DiscoveredEnvironment, recipe: CookbookRecipe | undefined, verifiers: VerifiersEnvironment | undefined): Promise<Introspection> {
  const info = await stat(environment.file_path).catch(() => undefined);
  if (!info?.isFile() || recipe === undefined) {
    throw new UserError(`The cookbook environment '${environment.name}' is gone (${recipe === undefined ? `no recipe ${environment.recipe} in RL_PYTHON's tinker_cookbook` : `${environment.file_path} no longer exists`}). rl_list_environments lists what is installed now.`);
  }
  const fields = recipe.fields
    .filter((f) => !(SERVER_SET_FIELDS as readonly string[]).includes(f.name))
    .map((f) => (f.name === 'vf_env_args' ? envArgsField(f, verifiers) : toField(f, KNOWN[f.name] ?? '')));
  return {
    source: fileStamp(info),
    // Read from the recipe's source, never imported: nothing failed, so no import_error.
    introspection: 'static',
    config_class: 'CLIConfig',
    fields,
    values: Object.fromEntries(fields.map((f) => [f.name, f.default])),
  };
}
