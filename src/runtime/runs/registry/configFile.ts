/**
 * A run's config.yaml read back: what the trainer and the environment really ran with, whatever
 * the selection holds now. Read through RunFiles, so a symlink out of the run directory is
 * refused; never throws: a missing, oversized or unreadable file is a reason.
 */
import { RUN_FILES } from '../../../core/files/home.js';
import type { JsonValue } from '../../../core/json.js';
import { readSlice } from '../../../core/files/logTail.js';
import type { RunFiles } from './runFiles.js';
import { yaml } from '../../../core/onDemand.js';

/** The YAML is a few KiB; past this it is not a config we wrote. */
export const MAX_RUN_CONFIG_BYTES = 1024 * 1024;

/** The sections of a run config a reader compares or shows per run; the others are the operator's, alike for every run. */
export interface RunConfigSections {
  env: Record<string, JsonValue>;
  tinker: Record<string, JsonValue>;
  /** The trainer's inference servers, as written (the mappings only). */
  openai: Record<string, JsonValue>[];
  /** A cookbook run's recipe, verifiers environment and log_path (cookbook/start.ts writes them). */
  cookbook?: Record<string, JsonValue>;
}

export type RunConfigRead = { config: RunConfigSections } | { config_error: string };

function mapping(value: unknown): value is Record<string, JsonValue> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export async function readRunConfigFile(files: RunFiles, runId: string): Promise<RunConfigRead> {
  try {
    const path = await files.existingFile(runId, RUN_FILES.config);
    if (path === undefined) return { config_error: `${RUN_FILES.config} is missing` };
    const slice = await readSlice(path, 0, MAX_RUN_CONFIG_BYTES);
    if (slice.size > MAX_RUN_CONFIG_BYTES) return { config_error: `${RUN_FILES.config} is ${slice.size} bytes, more than a run config can be` };
    const value: unknown = yaml().parse(slice.text);
    if (!mapping(value)) return { config_error: `${RUN_FILES.config} does not hold a mapping` };
    const openai = Array.isArray(value.openai) ? value.openai.filter(mapping) : [];
    return { config: { env: mapping(value.env) ? value.env : {}, tinker: mapping(value.tinker) ? value.tinker : {}, openai, ...(mapping(value.cookbook) ? { cookbook: value.cookbook } : {}) } };
  } catch (err) {
    return { config_error: `${RUN_FILES.config} cannot be read (${err instanceof Error ? err.message.split('\n')[0] : String(err)})` };
  }
}
