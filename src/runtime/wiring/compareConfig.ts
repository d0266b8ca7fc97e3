/**
 * What differs between the configs of runs being compared: the `env` section and the W&B project
 * of each run's config.yaml. What the server gives each run of its own (its W&B names, the URLs
 * of its own ports, its checkpoint directory) differs between any two runs, so it is answered
 * per run (`run_names`, each run's `assigned`), and a sweep over one field shows that field alone.
 */
import { previewJson, type JsonValue } from '../../core/json.js';
import type { RunConfigRead, RunConfigSections } from '../runs/registry/configFile.js';

/** A field over this many characters of JSON is shown cut, ending in "...": prompts can be long. */
export const MAX_VALUE_CHARS = 80;
/** Runs of different environments differ in most fields: past this many, only names are listed. */
export const MAX_DIFFERING_FIELDS = 20;
/** ... and past this many more, only counted. */
const MAX_OMITTED_NAMES = 40;

const PROJECT_FIELD = 'tinker.wandb_project';

export interface RunNames {
  wandb_name: JsonValue;
  wandb_run_name: JsonValue;
}

export interface ConfigComparison {
  /** Field -> run_id -> value (null = absent), for the fields whose values differ. */
  differing_config: Record<string, Record<string, JsonValue>>;
  /** How many fields differ, shown or not. */
  differing_fields: number;
  /** Differing fields past MAX_DIFFERING_FIELDS, by name only (at most MAX_OMITTED_NAMES). */
  differing_config_omitted?: string[];
  /** How many fields every compared config holds alike. */
  same_config_fields: number;
  run_names: Record<string, RunNames>;
}

/** env fields the server sets per run (runs/atropos/runConfig.ts): the run's own, never compared. */
const ASSIGNED_ENV_FIELDS = new Set(['wandb_name', 'rollout_server_url']);

/** The values the server gave one run: the URLs of its own ports, its own checkpoint directory. */
export interface AssignedValues {
  rollout_server_url: JsonValue;
  base_urls: JsonValue[];
  checkpoint_dir: JsonValue;
}

export function assignedValues(config: RunConfigSections): AssignedValues {
  return {
    rollout_server_url: config.env.rollout_server_url ?? null,
    base_urls: config.openai.map((server) => server.base_url ?? null),
    checkpoint_dir: config.tinker.checkpoint_dir ?? null,
  };
}

/** The compared fields of one config, what the server gave the run left out. */
function comparedFields(config: RunConfigSections): Map<string, JsonValue> {
  const fields = new Map(Object.entries(config.env).filter(([name]) => !ASSIGNED_ENV_FIELDS.has(name)));
  fields.set(PROJECT_FIELD, config.tinker.wandb_project ?? null);
  return fields;
}

/** JSON with object keys sorted, so that equal values compare equal whatever their key order. */
function canonical(value: JsonValue): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k]!)}`).join(',')}}`;
}

const shown = (value: JsonValue): JsonValue => previewJson(value, MAX_VALUE_CHARS);

/** Compares the configs that could be read; a run whose config could not be is left out of it. */
export function compareConfigs(reads: { run_id: string; read: RunConfigRead }[]): ConfigComparison {
  const configs = reads.flatMap(({ run_id, read }) => ('config' in read ? [{ run_id, config: read.config, fields: comparedFields(read.config) }] : []));
  const names = [...new Set(configs.flatMap((c) => [...c.fields.keys()]))];
  const differing: string[] = [];
  for (const name of names) {
    if (new Set(configs.map((c) => canonical(c.fields.get(name) ?? null))).size > 1) differing.push(name);
  }
  const shownFields = differing.slice(0, MAX_DIFFERING_FIELDS);
  const omitted = differing.slice(MAX_DIFFERING_FIELDS, MAX_DIFFERING_FIELDS + MAX_OMITTED_NAMES);
  return {
    differing_config: Object.fromEntries(shownFields.map((name) => [name, Object.fromEntries(configs.map((c) => [c.run_id, shown(c.fields.get(name) ?? null)]))])),
    differing_fields: differing.length,
    ...(omitted.length > 0 ? { differing_config_omitted: omitted } : {}),
    same_config_fields: names.length - differing.length,
    run_names: Object.fromEntries(configs.map((c) => [c.run_id, { wandb_name: shown(c.config.env.wandb_name ?? null), wandb_run_name: shown(c.config.tinker.wandb_run_name ?? null) }])),
  };
}
