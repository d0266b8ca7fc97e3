/**
 * The selected environment and its current config: what rl_select_environment, rl_get_current_config
 * and rl_edit_config act on, and what rl_start_training turns into a run config. It lives in
 * RL_HOME (selectionStore.ts), so every server sharing RL_HOME sees the same selection, and every
 * edited value is validated against the field. A start may also take a config of its own, built
 * the same way but never saved.
 */
import { UserError } from '../../core/errors.js';
import type { DiscoveredEnvironment } from '../environments/catalog.js';
import { allowedText, closestName, coerceFieldValue, expectedText, FieldValueError } from './fields.js';
import { Introspector, type Introspection } from './introspection.js';
import type { CookbookRecipe, VerifiersEnvironment } from '../environments/cookbook.js';
import { frameworkOfEnvironment } from '../environments/report.js';
import type { FrameworkName } from '../../core/runWords.js';
import { cookbookIntrospection, cookbookLockedValues } from './cookbookFields.js';
import type { Logger } from '../../core/logger.js';
import type { JsonValue } from '../../core/json.js';
import type { Settings } from '../../core/settings.js';
import { type SelectedConfig, SelectionFile } from './selectionStore.js';

/** One field as rl_get_current_config lists it (Hermes names, plus `allowed` when constrained). */
export interface FieldView {
  name: string;
  type: string;
  default: JsonValue;
  description: string;
  current_value: JsonValue;
  allowed?: string;
}

export interface LockedFieldView extends FieldView {
  locked_value: JsonValue;
}

export interface EnvironmentResolver {
  resolve(name: string): Promise<DiscoveredEnvironment>;
  /** What trains a cookbook environment: its recipe, and for a verifiers environment the environment itself. */
  cookbook: {
    recipeOf(environment: DiscoveredEnvironment): Promise<CookbookRecipe | undefined>;
    verifiersEnvironment(vfEnvId: string): Promise<VerifiersEnvironment | undefined>;
  };
}

/** tinker-atropos' own batch size (configs/default.yaml); BaseEnvConfig's -1 means "set by the trainer". */
export const DEFAULT_BATCH_SIZE = 128;
export const WANDB_PROJECT_FIELD = 'wandb_project';
const WANDB_PROJECT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const WANDB_PROJECT_EXPECTED = 'str: 1..128 characters, letters, digits, ".", "_" or "-", starting with a letter or digit';

/**
 * The env values the operator fixes for every run: settings.locked.env plus rollout_server_url,
 * which points at the Atropos API this server starts (bound to 127.0.0.1 on RL_API_PORT).
 */
export function lockedEnvValues(settings: Settings): Record<string, JsonValue> {
  return { rollout_server_url: `http://127.0.0.1:${settings.apiPort}`, ...settings.locked.env };
}

/**
 * Whether a run uses W&B, decided as its run config will be: the locked value when the operator
 * fixed one, else the selected config's (when there is a selection); unset means on, as in
 * BaseEnvConfig. What a start refuses without WANDB_API_KEY and what the doctor requires agree.
 */
export function runUsesWandb(settings: Settings, selectedValues?: Record<string, JsonValue>): boolean {
  const value = Object.hasOwn(settings.locked.env, 'use_wandb') ? settings.locked.env.use_wandb : selectedValues?.use_wandb;
  return value !== false;
}

function timestamp(date: Date): string {
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${date.getFullYear()}${pad(date.getMonth() + 1)}${pad(date.getDate())}-${pad(date.getHours())}${pad(date.getMinutes())}${pad(date.getSeconds())}`;
}

/** What differs in the config of each framework's environments. */
interface ConfigRules {
  /** Where the fields come from: an Atropos environment's config_init() (introspection), a recipe's CLIConfig. */
  fields(from: { introspector: Introspector; environments: EnvironmentResolver }, environment: DiscoveredEnvironment, signal?: AbortSignal): Promise<Introspection>;
  /** What the operator fixes for its runs, under the framework's field names: shown, never edited. */
  locked(settings: Settings): Record<string, JsonValue>;
  /** The run config also has the operator's tinker and openai sections, whose names are locked too. */
  lockedSections: boolean;
  /** `wandb_project` is edited beside the fields (the run config's tinker section names it). */
  wandbProject: boolean;
}

const CONFIG_RULES: Record<FrameworkName, ConfigRules> = {
  atropos: { fields: ({ introspector }, environment, signal) => introspector.describe(environment, signal), locked: lockedEnvValues, lockedSections: true, wandbProject: true },
  cookbook: {
    fields: async ({ environments }, environment) =>
      cookbookIntrospection(environment, await environments.cookbook.recipeOf(environment), environment.vf_env_id === undefined ? undefined : await environments.cookbook.verifiersEnvironment(environment.vf_env_id)),
    locked: cookbookLockedValues,
    lockedSections: false,
    wandbProject: false,
  },
};

const rulesOf = (environment: Pick<DiscoveredEnvironment, 'framework'>): ConfigRules => CONFIG_RULES[frameworkOfEnvironment(environment)];

/** What a start asks for beyond the saved selection (rl_start_training's `environment` and `config`). */
export interface RunRequest {
  environment?: string;
  config?: Record<string, JsonValue>;
}

export class ConfigSelection {
  readonly introspector: Introspector;
  private readonly saved: SelectionFile;

  constructor(
    private readonly settings: Settings,
    logger: Logger,
    private readonly environments: EnvironmentResolver,
  ) {
    this.introspector = new Introspector(settings, logger);
    this.saved = new SelectionFile(settings.home, logger);
    // Read at start: a damaged file is logged now, and reported to whichever tool needs it.
    this.saved.load();
  }

  /** The selection, or undefined when no environment is selected (or the saved one is damaged). */
  current(): SelectedConfig | undefined {
    const loaded = this.saved.load();
    return loaded !== undefined && 'saved' in loaded ? loaded.saved : undefined;
  }

  requireSelection(): SelectedConfig {
    return this.saved.require();
  }

  /** The selection, refused with the fix when its environment is gone or its fields changed since. */
  verified(signal?: AbortSignal): Promise<SelectedConfig> {
    return this.saved.verified((environment) => this.fieldsOf(environment, signal));
  }

  /** The values the operator fixes for runs of `environment`'s framework. */
  lockedValues(environment: Pick<DiscoveredEnvironment, 'framework'>): Record<string, JsonValue> {
    return rulesOf(environment).locked(this.settings);
  }

  private fieldsOf(environment: DiscoveredEnvironment, signal?: AbortSignal): Promise<Introspection> {
    return rulesOf(environment).fields({ introspector: this.introspector, environments: this.environments }, environment, signal);
  }

  /**
   * Selects an environment and resets the config to its config_init() values. `notes` are the
   * adjustments made on the way (e.g. batch_size), for the answer's message.
   */
  async select(name: string, signal?: AbortSignal): Promise<{ config: SelectedConfig; notes: string[] }> {
    const { config, notes } = await this.configOf(name, signal);
    return { config: this.saved.replace(config), notes };
  }

  /** An environment's config as a fresh selection has it: its config_init() values, adjusted. */
  private async configOf(name: string, signal?: AbortSignal): Promise<{ config: SelectedConfig; notes: string[] }> {
    const environment = await this.environments.resolve(name);
    const found = await this.fieldsOf(environment, signal);
    const locked = this.lockedValues(environment);
    const values: Record<string, JsonValue> = {};
    for (const field of found.fields) {
      if (!Object.hasOwn(locked, field.name)) values[field.name] = found.values[field.name] ?? null;
    }
    const notes: string[] = [];
    const now = new Date();
    if ('wandb_name' in values) values.wandb_name = `${environment.name}-${timestamp(now)}`;
    const batchSize = values.batch_size;
    if (typeof batchSize === 'number' && batchSize <= 0) {
      values.batch_size = DEFAULT_BATCH_SIZE;
      notes.push(`batch_size was ${batchSize} ("set by the trainer"), which stalls a Tinker run; set to ${DEFAULT_BATCH_SIZE}, tinker-atropos' default.`);
    }
    const config: SelectedConfig = {
      environment,
      introspection: found.introspection,
      ...(found.import_error !== undefined ? { import_error: found.import_error } : {}),
      config_class: found.config_class,
      fields: found.fields,
      tinker: found.tinker ?? { managed_server: environment.managed_server, server_configs: environment.server_configs },
      values,
      wandbProject: this.settings.wandb.project,
      selectedAt: now.toISOString(),
      source: found.source,
    };
    return { config, notes };
  }

  /** The fields split as rl_get_current_config shows them. */
  describe(): { editable: FieldView[]; locked: LockedFieldView[] } {
    const { fields, values, environment } = this.requireSelection();
    const locked = this.lockedValues(environment);
    const editable: FieldView[] = [];
    const fixed: LockedFieldView[] = [];
    for (const field of fields) {
      const allowed = allowedText(field);
      const view: FieldView = { name: field.name, type: field.type, default: field.default, description: field.description, current_value: values[field.name] ?? null };
      if (allowed !== undefined) view.allowed = allowed;
      if (Object.hasOwn(locked, field.name)) fixed.push({ ...view, current_value: locked[field.name]!, locked_value: locked[field.name]! });
      else editable.push(view);
    }
    return { editable, locked: fixed };
  }

  /** Validates, coerces and saves one value; returns the value stored. */
  edit(name: string, value: JsonValue): JsonValue {
    let stored: JsonValue = null;
    this.saved.update((selected) => {
      stored = this.set(selected, name, value);
    });
    return stored;
  }

  /**
   * The config a start uses, saved nowhere: `environment` starts from that environment's
   * config_init() values (as selecting it would), else from the saved selection; each `config`
   * value is then set exactly as rl_edit_config sets it. `applied` holds the values as stored.
   */
  async forRun(request: RunRequest, signal?: AbortSignal): Promise<{ config: SelectedConfig; notes: string[]; applied: Record<string, JsonValue> }> {
    const { environment, config: values = {} } = request;
    const base = environment !== undefined ? await this.configOf(environment, signal) : { config: await this.verified(signal), notes: [] };
    // The saved selection's object is shared with later calls: overrides go to a copy.
    const config = environment === undefined && Object.keys(values).length > 0 ? structuredClone(base.config) : base.config;
    const applied: Record<string, JsonValue> = {};
    for (const [name, value] of Object.entries(values)) applied[name] = this.set(config, name, value);
    return { config, notes: base.notes, applied };
  }

  /** Validates and coerces one value into `selected`; returns the value stored. */
  private set(selected: SelectedConfig, name: string, value: JsonValue): JsonValue {
    const rules = rulesOf(selected.environment);
    const locked = rules.locked(this.settings);
    if (Object.hasOwn(locked, name)) {
      throw new UserError(`Field '${name}' is locked and cannot be changed (the operator sets it in RL_MCP_CONFIG)`, { locked_value: locked[name] });
    }
    // The trainer's and inference server's settings (model, LoRA rank, learning rate...) are never
    // model-editable: say so instead of calling them unknown.
    for (const section of rules.lockedSections ? (['tinker', 'openai'] as const) : []) {
      const sectionValues = this.settings.locked[section];
      if (Object.hasOwn(sectionValues, name)) {
        throw new UserError(`Field '${name}' is locked: ${section}.${name} is set by the operator (RL_MCP_CONFIG locked.${section}) and cannot be changed`, { locked_value: sectionValues[name]! });
      }
    }
    if (name === WANDB_PROJECT_FIELD && rules.wandbProject) {
      if (typeof value !== 'string' || !WANDB_PROJECT_PATTERN.test(value)) {
        throw new UserError(`Invalid value for '${name}': ${JSON.stringify(value)} is not a W&B project name`, { expected: WANDB_PROJECT_EXPECTED });
      }
      selected.wandbProject = value;
      return value;
    }
    const field = selected.fields.find((f) => f.name === name);
    if (!field) {
      // The names rl_edit_config accepts.
      const available = [...Object.keys(selected.values), ...(rules.wandbProject ? [WANDB_PROJECT_FIELD] : [])];
      const suggestion = closestName(name, available);
      throw new UserError(`Unknown field '${name}'${suggestion ? `. Did you mean '${suggestion}'?` : ''}`, {
        available_fields: available,
        ...(suggestion ? { did_you_mean: suggestion } : {}),
      });
    }
    try {
      const coerced = coerceFieldValue(field, value);
      selected.values[name] = coerced;
      return coerced;
    } catch (err) {
      if (!(err instanceof FieldValueError)) throw err;
      throw new UserError(`Invalid value for '${name}': ${err.message}`, { expected: expectedText(field) });
    }
  }
}
