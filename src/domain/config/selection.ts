/**
 * The selected environment and its current config: what rl_select_environment, rl_get_current_config
 * and rl_edit_config act on, and what rl_start_training turns into a run config. One per server
 * process, like Hermes' module globals, but every edited value is validated against the field.
 */
import { UserError } from '../../core/errors.js';
import type { DiscoveredEnvironment } from '../environments/catalog.js';
import type { TinkerFacts } from '../environments/tinkerReadiness.js';
import { allowedText, closestName, coerceFieldValue, expectedText, FieldValueError, type FieldInfo } from './fields.js';
import { Introspector } from './introspection.js';
import type { Logger } from '../../core/logger.js';
import type { JsonValue } from '../../core/json.js';
import type { Settings } from '../../core/settings.js';

export interface SelectedConfig {
  environment: DiscoveredEnvironment;
  introspection: 'import' | 'static';
  /** Why the environment could not be imported, when `introspection` is static. */
  import_error?: string;
  /** type(config_init()[0]) (import), or what the source says it is (static). */
  config_class: string;
  /** Every field of the environment's config class. */
  fields: FieldInfo[];
  /** From the import when it worked, else what discovery read from the source. */
  tinker: TinkerFacts;
  /** Current values of the NON-locked env fields (null = unset); wandb_name always set. */
  values: Record<string, JsonValue>;
  /** Run-level: the W&B project of the run; default settings.wandb.project. */
  wandbProject: string;
}

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

export class ConfigSelection {
  readonly introspector: Introspector;
  private selected?: SelectedConfig;

  constructor(
    private readonly settings: Settings,
    logger: Logger,
    private readonly environments: EnvironmentResolver,
  ) {
    this.introspector = new Introspector(settings, logger);
  }

  /** The selection, or undefined when no environment is selected yet. */
  current(): SelectedConfig | undefined {
    return this.selected;
  }

  requireSelection(): SelectedConfig {
    if (!this.selected) throw new UserError('No environment selected. Use rl_select_environment(name) first.');
    return this.selected;
  }

  lockedValues(): Record<string, JsonValue> {
    return lockedEnvValues(this.settings);
  }

  /**
   * Selects an environment and resets the config to its config_init() values. `notes` are the
   * adjustments made on the way (e.g. batch_size), for the answer's message.
   */
  async select(name: string, signal?: AbortSignal): Promise<{ config: SelectedConfig; notes: string[] }> {
    const environment = await this.environments.resolve(name);
    const found = await this.introspector.describe(environment, signal);
    const locked = this.lockedValues();
    const values: Record<string, JsonValue> = {};
    for (const field of found.fields) {
      if (!Object.hasOwn(locked, field.name)) values[field.name] = found.values[field.name] ?? null;
    }
    const notes: string[] = [];
    if ('wandb_name' in values) values.wandb_name = `${environment.name}-${timestamp(new Date())}`;
    const batchSize = values.batch_size;
    if (typeof batchSize === 'number' && batchSize <= 0) {
      values.batch_size = DEFAULT_BATCH_SIZE;
      notes.push(`batch_size was ${batchSize} ("set by the trainer"), which stalls a Tinker run; set to ${DEFAULT_BATCH_SIZE}, tinker-atropos' default.`);
    }
    this.selected = {
      environment,
      introspection: found.introspection,
      ...(found.import_error !== undefined ? { import_error: found.import_error } : {}),
      config_class: found.config_class,
      fields: found.fields,
      tinker: found.tinker ?? { managed_server: environment.managed_server, server_configs: environment.server_configs },
      values,
      wandbProject: this.settings.wandb.project,
    };
    return { config: this.selected, notes };
  }

  /** The fields split as rl_get_current_config shows them. */
  describe(): { editable: FieldView[]; locked: LockedFieldView[] } {
    const { fields, values } = this.requireSelection();
    const locked = this.lockedValues();
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

  /** Names rl_edit_config accepts. */
  editableNames(): string[] {
    return [...Object.keys(this.requireSelection().values), WANDB_PROJECT_FIELD];
  }

  /** Validates, coerces and stores one value; returns the value stored. */
  edit(name: string, value: JsonValue): JsonValue {
    const selected = this.requireSelection();
    const locked = this.lockedValues();
    if (Object.hasOwn(locked, name)) {
      throw new UserError(`Field '${name}' is locked and cannot be changed (the operator sets it in RL_MCP_CONFIG)`, { locked_value: locked[name] });
    }
    // The trainer's and inference server's settings (model, LoRA rank, learning rate...) are never
    // model-editable: say so instead of calling them unknown.
    for (const section of ['tinker', 'openai'] as const) {
      const sectionValues = this.settings.locked[section];
      if (Object.hasOwn(sectionValues, name)) {
        throw new UserError(`Field '${name}' is locked: ${section}.${name} is set by the operator (RL_MCP_CONFIG locked.${section}) and cannot be changed`, { locked_value: sectionValues[name]! });
      }
    }
    if (name === WANDB_PROJECT_FIELD) {
      if (typeof value !== 'string' || !WANDB_PROJECT_PATTERN.test(value)) {
        throw new UserError(`Invalid value for '${name}': ${JSON.stringify(value)} is not a W&B project name`, { expected: WANDB_PROJECT_EXPECTED });
      }
      selected.wandbProject = value;
      return value;
    }
    const field = selected.fields.find((f) => f.name === name);
    if (!field) {
      const available = this.editableNames();
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
