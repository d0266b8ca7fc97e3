/**
 * The 29 fields of atroposlib's `BaseEnvConfig` with the
 * bounds their meaning implies. It is the static fallback when an environment cannot be imported,
 * and it adds bounds an imported schema leaves out (nothing in pydantic stops group_size = 0).
 */
import type { FieldInfo } from './fields.js';
import type { JsonValue } from '../../core/json.js';

type Constraints = Partial<Pick<FieldInfo, 'minimum' | 'maximum' | 'exclusiveMinimum' | 'exclusiveMaximum' | 'sentinels' | 'enum' | 'enumNames'>>;

const EVAL_HANDLING = ['STOP_TRAIN', 'LIMIT_TRAIN', 'NONE'];

function field(name: string, type: string, value: JsonValue, description: string, constraints: Constraints = {}): FieldInfo {
  const nullable = type.startsWith('Optional[');
  const core = nullable ? type.slice('Optional['.length, -1) : type;
  const kind = core === 'EvalHandlingEnum' ? 'enum' : (core as FieldInfo['kind']);
  return { name, type, kind, nullable, ...constraints, default: value, description };
}

export const BASE_ENV_CONFIG_FIELDS: readonly FieldInfo[] = [
  field('group_size', 'int', 4, 'How many responses are grouped together for scoring', { minimum: 1 }),
  field('max_num_workers', 'int', -1, 'Maximum number of workers; -1 = max_num_workers_per_node x number of servers', { minimum: 1, sentinels: [-1] }),
  field('max_eval_workers', 'int', 16, 'Maximum number of workers for evaluation', { minimum: 1 }),
  field('max_num_workers_per_node', 'int', 8, 'Maximum number of workers per node', { minimum: 1 }),
  field('steps_per_eval', 'int', 100, 'Number of steps between evaluations', { minimum: 1 }),
  field('max_token_length', 'int', 2048, 'Maximum token length used in generations', { minimum: 1 }),
  field('eval_handling', 'EvalHandlingEnum', 'STOP_TRAIN', 'How to handle evaluations: STOP_TRAIN, LIMIT_TRAIN or NONE', { enum: EVAL_HANDLING, enumNames: EVAL_HANDLING }),
  field('eval_limit_ratio', 'float', 0.5, 'Ratio of training workers to keep during evaluation (LIMIT_TRAIN)', { minimum: 0, maximum: 1 }),
  field('inference_weight', 'float', 1.0, 'Inference weight; -1 to ignore it', { minimum: 0, sentinels: [-1] }),
  field('batch_size', 'int', -1, 'Training batch size; -1 = set by the trainer via the API', { minimum: 1 }),
  field('max_batches_offpolicy', 'int', 3, 'Maximum number of batches in the queue', { minimum: 1 }),
  field('tokenizer_name', 'str', 'NousResearch/DeepHermes-3-Llama-3-3B-Preview', 'Hugging Face tokenizer (also the Tinker base model)'),
  field('use_wandb', 'bool', true, 'Whether to log to Weights & Biases'),
  field('rollout_server_url', 'str', 'http://localhost:8000', 'URL of the Atropos API (rollout server)'),
  field('total_steps', 'int', 1000, 'Total number of training steps (in process mode: number of groups)', { minimum: 1 }),
  field('wandb_name', 'Optional[str]', null, 'Name to group by in W&B (also the name the environment registers with)'),
  field('num_rollouts_to_keep', 'int', 32, 'Number of rollouts shown in the W&B table', { minimum: 0 }),
  field('num_rollouts_per_group_for_logging', 'int', 1, 'Rollouts per group kept for logging; -1 keeps all', { minimum: 1, sentinels: [-1] }),
  field('ensure_scores_are_not_same', 'bool', true, 'Drop groups whose scores are all identical'),
  field('data_path_to_save_groups', 'Optional[str]', null, 'If set, write the scored groups to this JSONL file'),
  field('data_dir_to_save_evals', 'Optional[str]', null, 'Directory for evaluation results'),
  field('min_items_sent_before_logging', 'int', 2, 'Minimum items sent to the API before logging metrics; <= 0 logs always'),
  field('include_messages', 'bool', false, 'Include messages in the data sent to the trainer'),
  field('min_batch_allocation', 'Optional[float]', null, 'Minimum fraction of each batch allocated to this environment', { minimum: 0, maximum: 1 }),
  field('worker_timeout', 'float', 600, 'Timeout per task in seconds; -1 for none', { exclusiveMinimum: 0, sentinels: [-1] }),
  field('thinking_mode', 'bool', false, 'Enable reasoning (extra_body); turned on by reasoning_effort or max_reasoning_tokens'),
  field('reasoning_effort', 'Optional[str]', null, 'Reasoning effort', { enum: ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] }),
  field('max_reasoning_tokens', 'Optional[int]', null, 'Reasoning token budget', { minimum: 1024, maximum: 32000 }),
  field('custom_thinking_prompt', 'Optional[str]', null, 'System prompt prepended in thinking mode'),
];

const KNOWN = new Map(BASE_ENV_CONFIG_FIELDS.map((f) => [f.name, f]));

/**
 * Fills what an introspected field leaves out from the known table: bounds, special values, a
 * closed set of strings, the description (a subclass redefining `group_size: int = 8` loses it).
 * Only for a field of the same kind, so an environment's own field with a known name keeps its meaning.
 */
export function withKnownConstraints(fields: readonly FieldInfo[]): FieldInfo[] {
  return fields.map((f) => {
    const known = KNOWN.get(f.name);
    if (!known || known.kind !== f.kind) return f;
    const out: FieldInfo = { ...f, description: f.description || known.description };
    const { minimum, maximum, exclusiveMinimum, exclusiveMaximum, sentinels } = known;
    if ([f.minimum, f.maximum, f.exclusiveMinimum, f.exclusiveMaximum].every((b) => b === undefined)) {
      Object.assign(out, definedOnly({ minimum, maximum, exclusiveMinimum, exclusiveMaximum, sentinels }));
    }
    if (!f.enum && known.enum) Object.assign(out, definedOnly({ enum: known.enum, enumNames: known.enumNames }));
    return out;
  });
}

function definedOnly<T extends object>(record: T): Partial<T> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The static reading: the known fields, overridden and extended by the environment's own config class. */
export function staticFields(own: readonly FieldInfo[]): FieldInfo[] {
  const byName = new Map(own.map((f) => [f.name, f]));
  return [...BASE_ENV_CONFIG_FIELDS.map((known) => byName.get(known.name) ?? known), ...own.filter((f) => !KNOWN.has(f.name))];
}
