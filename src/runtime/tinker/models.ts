/**
 * The base models Tinker serves now (its SDK's get_server_capabilities, python/tinker_api.py
 * `models`). Tinker retires base models (twenty on 2026-06-12, more since), and a run on a
 * retired one fails only after start-up, so a start and the doctor check the run's model against
 * this list. Cached for an hour in RL_HOME/cache/tinker-models.json, shared by every server using
 * RL_HOME; when Tinker cannot be asked, the check says so and blocks nothing.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import * as z from 'zod';
import { zString, zNumber } from '../../core/schemaLeaves.js';
import { writeAtomically } from '../../core/files/atomicFile.js';
import { tinkerModelsCachePath } from '../../core/files/home.js';
import type { CoreServices } from '../../core/services.js';
import { failureSentence, TinkerApi } from './helper.js';

export const LIVE_MODELS_TTL_MS = 60 * 60_000;
/** What a start waits for the list at most (the SDK itself retries a dead service for minutes). */
const QUESTION_SECONDS = 15;
/** A question that failed is not asked again by this process for this long: a dead service delays one start, not each. */
const FAILED_TTL_MS = 60_000;

export type LiveModels = { ok: true; models: string[]; checked_at: string } | { ok: false; reason: string };

const MODELS_ANSWER = z.object({ models: z.array(z.object({ name: zString, max_context_length: zNumber.nullable() })) });
const CACHE = z.object({ service: zString, checked_at: zString, models: z.array(zString) });

const failed = new Map<string, { at: number; reason: string }>();

/** Which service the list is of: a cache written for another one is not used. */
const serviceOf = (core: Pick<CoreServices, 'settings'>): string => `${core.settings.tinkerSdk.baseUrl ?? 'default'} ${core.settings.tinkerSdk.projectId ?? ''}`.trim();

/** The list as last cached for this service, under `maxAgeMs` old. */
function cached(path: string, service: string, nowMs: number, maxAgeMs: number): LiveModels | undefined {
  try {
    const entry = CACHE.parse(JSON.parse(readFileSync(path, 'utf8')));
    if (entry.service === service && nowMs - Date.parse(entry.checked_at) < maxAgeMs) return { ok: true, models: entry.models, checked_at: entry.checked_at };
  } catch {
    // No cache, or a damaged one: ask again.
  }
  return undefined;
}

/** The list as the doctor or a start last had it, however old (checked_at says when); nothing is asked. */
export function lastKnownModels(core: Pick<CoreServices, 'settings'>): LiveModels {
  const known = cached(tinkerModelsCachePath(core.settings.home), serviceOf(core), Date.now(), Infinity);
  return known ?? { ok: false, reason: "not checked yet: rl_doctor and rl_start_training ask Tinker for the base models it serves (kept an hour)" };
}

/** The live base models, from the cache when it is under an hour old, else from Tinker. */
export async function liveModels(core: Pick<CoreServices, 'settings' | 'redactor'> & { logger?: CoreServices['logger'] }, signal?: AbortSignal): Promise<LiveModels> {
  const path = tinkerModelsCachePath(core.settings.home);
  const service = serviceOf(core);
  const now = Date.now();
  const hit = cached(path, service, now, LIVE_MODELS_TTL_MS);
  if (hit) return hit;
  const key = `${core.settings.home}\0${service}`;
  const recent = failed.get(key);
  if (recent && now - recent.at < FAILED_TTL_MS) return { ok: false, reason: recent.reason };
  const answer = await new TinkerApi(core).ask('models', {}, MODELS_ANSWER, { timeoutSeconds: QUESTION_SECONDS, signal });
  if (!answer.ok) {
    const reason = failureSentence(answer.error);
    failed.set(key, { at: now, reason });
    return { ok: false, reason };
  }
  const entry = { service, checked_at: new Date().toISOString(), models: answer.value.models.map((m) => m.name) };
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeAtomically(path, JSON.stringify(entry));
  } catch (err) {
    core.logger?.warn({ err }, 'could not cache the live Tinker models');
  }
  return { ok: true, models: entry.models, checked_at: entry.checked_at };
}

/** Whether `model` is served, as a line for answers: null when the list could not be had. */
export function servedText(model: string, live: LiveModels): { live: boolean | null; note: string } {
  if (!live.ok) return { live: null, note: `Not checked against Tinker's live models: ${live.reason}.` };
  if (live.models.includes(model)) return { live: true, note: `${model} is served by Tinker (its list as of ${live.checked_at}).` };
  return { live: false, note: `Tinker no longer serves ${model} (its list as of ${live.checked_at}): a run on it fails after start-up, so rl_start_training refuses it. Live base models: ${live.models.join(', ') || 'none'}.` };
}
