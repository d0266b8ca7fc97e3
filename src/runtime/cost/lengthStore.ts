/**
 * Each environment's rollout lengths from its latest inference test that measured any, kept in
 * RL_HOME/cache/rollout-lengths.json so that estimates find them after a restart and from any
 * server sharing RL_HOME. A test that measured nothing leaves the earlier figures in place.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { writeAtomically } from '../../core/files/atomicFile.js';
import { promptLengthsPath, rolloutLengthsPath } from '../../core/files/home.js';
import type { Logger } from '../../core/logger.js';
import type { MeasuredLengths, PromptLengthsInfo } from './estimate.js';
import { poolLengths, type RolloutLengths } from './lengths.js';

export interface MeasuredRollouts {
  environment: string;
  test_id: string;
  measured_at: string;
  /** Lengths per tested model id (models that produced at least one group). */
  models: Record<string, RolloutLengths>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function isLengths(v: unknown): v is RolloutLengths {
  return isObject(v) && typeof v.rollouts === 'number' && isObject(v.prompt_tokens) && isObject(v.completion_tokens) && typeof v.source === 'string';
}

function readAll(home: string): Record<string, MeasuredRollouts> {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(rolloutLengthsPath(home), 'utf8'));
  } catch {
    // Missing or damaged: no measurement, which estimates say.
    return {};
  }
  if (!isObject(doc)) return {};
  const out: Record<string, MeasuredRollouts> = {};
  for (const [env, entry] of Object.entries(doc)) {
    if (isObject(entry) && typeof entry.test_id === 'string' && typeof entry.measured_at === 'string' && isObject(entry.models) && Object.values(entry.models).every(isLengths)) {
      out[env] = entry as unknown as MeasuredRollouts;
    }
  }
  return out;
}

export function measuredRollouts(home: string, environment: string): MeasuredRollouts | undefined {
  return readAll(home)[environment];
}

export function saveMeasuredRollouts(home: string, entry: MeasuredRollouts): void {
  if (Object.keys(entry.models).length === 0) return;
  const all = readAll(home);
  all[entry.environment] = entry;
  const path = rolloutLengthsPath(home);
  mkdirSync(dirname(path), { recursive: true });
  writeAtomically(path, JSON.stringify(all));
}

/** Keeps what a finished test measured, per model that produced groups; a failure to write is logged, never fatal. */
export function saveTestLengths(home: string, test: { environment: string; test_id: string; reports: readonly { model: string; rollout_tokens?: RolloutLengths }[] }, logger: Logger): void {
  const models = Object.fromEntries(test.reports.flatMap((r) => (r.rollout_tokens ? [[r.model, r.rollout_tokens]] : [])));
  try {
    saveMeasuredRollouts(home, { environment: test.environment, test_id: test.test_id, measured_at: new Date().toISOString(), models });
  } catch (err) {
    logger.warn({ err, test_id: test.test_id }, 'rollout lengths not saved; cost estimates keep the earlier ones');
  }
}

/** Last path part, lower case: `qwen/qwen3-8b` (OpenRouter) matches `Qwen/Qwen3-8B` (Tinker). */
const sameModel = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase() || a.toLowerCase().split('/').pop() === b.toLowerCase().split('/').pop();

function readPrompts(home: string): Record<string, PromptLengthsInfo> {
  try {
    const doc: unknown = JSON.parse(readFileSync(promptLengthsPath(home), 'utf8'));
    return isObject(doc) ? (doc as Record<string, PromptLengthsInfo>) : {};
  } catch {
    return {};
  }
}

/** Keeps the prompt lengths an offline check rendered for `environment` (rl_check_environment). */
export function savePromptLengths(home: string, environment: string, info: PromptLengthsInfo): void {
  const all = readPrompts(home);
  all[environment] = info;
  const path = promptLengthsPath(home);
  mkdirSync(dirname(path), { recursive: true });
  writeAtomically(path, JSON.stringify(all));
}

function promptsFor(home: string, environment: string): PromptLengthsInfo | undefined {
  const info = readPrompts(home)[environment];
  return isObject(info) && isObject(info.prompts) && typeof info.prompts.max === 'number' ? info : undefined;
}

/**
 * The measured lengths an estimate of `model` uses: the tested model that is the trained one, else all
 * tested models pooled; with no inference test, the prompt lengths an offline check rendered.
 */
export function lengthsFor(home: string, environment: string, model: string): MeasuredLengths | undefined {
  const measured = measuredRollouts(home, environment);
  if (measured === undefined) return promptsFor(home, environment);
  const ids = Object.keys(measured.models);
  const same = ids.find((id) => sameModel(id, model));
  const lengths = same !== undefined ? measured.models[same] : poolLengths(ids.map((id) => measured.models[id]!));
  if (lengths === undefined) return undefined;
  const models = same ?? (ids.length === 1 ? ids[0]! : `${ids.length} models pooled (none is ${model})`);
  return { lengths, test_id: measured.test_id, measured_at: measured.measured_at, models };
}
