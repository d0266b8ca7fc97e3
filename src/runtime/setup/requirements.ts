/**
 * Everything training needs, as one list: rl_start_training refuses at the first required
 * requirement its start checks that is unmet, and the doctor reports them all, with the same
 * sentence as the fix. One list, so the doctor cannot call a host ready that a start then refuses
 * (or the other way round): both probe the same addresses and read the same values.
 */
import { UserError } from '../../core/errors.js';
import type { JsonValue } from '../../core/json.js';
import type { Settings } from '../../core/settings.js';
import { runUsesWandb } from '../config/selection.js';
import { API_PORT, INFERENCE_PORT, OPENROUTER_API_KEY, RL_HOME, TINKER_API_KEY, WANDB_ACCESS, WANDB_API_KEY } from './hostRequirements.js';
import { ATROPOSLIB, ENVIRONMENT_IMPORT, ENVIRONMENTS, LAUNCH_TRAINING, PYTHON, RUN_API, TINKER, TINKER_READY } from './installRequirements.js';
import { probeInterpreter, reusableProbe } from './installation.js';
import { PRICE_TABLE } from './costRequirements.js';
import { RL_HOME_SHARED, SLURM_ACCOUNTING, SLURM_COMMANDS, SLURM_CONTROLLER, SLURM_PARTITION } from './slurmRequirements.js';
import { probeSlurm } from './slurmProbe.js';
import type { PlacementName } from '../../core/runWords.js';
import type { DoctorContext, Outcome, Requirement, StartContext } from './requirement.js';
import { type TinkerFacts } from '../environments/tinkerReadiness.js';
import { BASE_MODEL } from './modelRequirements.js';
import { COOKBOOK_RECIPE } from './cookbookRequirements.js';
import { liveModels } from '../tinker/models.js';
import { SecretRedactor } from '../../core/redact.js';
import { secretValues } from '../../core/settings.js';

/**
 * In the order a start checks them: what the server's environment lacks, then the install (the
 * file lookups before the interpreter launch), then RL_HOME, Slurm (for runs placed there) and the
 * ports (for runs on this host), probed last because they are the likeliest to change in the meantime.
 */
export const REQUIREMENTS: readonly Requirement[] = [
  TINKER_API_KEY,
  WANDB_API_KEY,
  OPENROUTER_API_KEY,
  LAUNCH_TRAINING,
  RUN_API,
  PYTHON,
  ATROPOSLIB,
  TINKER,
  BASE_MODEL,
  COOKBOOK_RECIPE,
  TINKER_READY,
  ENVIRONMENT_IMPORT,
  ENVIRONMENTS,
  RL_HOME,
  SLURM_COMMANDS,
  SLURM_CONTROLLER,
  SLURM_PARTITION,
  SLURM_ACCOUNTING,
  RL_HOME_SHARED,
  API_PORT,
  INFERENCE_PORT,
  WANDB_ACCESS,
  PRICE_TABLE,
];

function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
}

/** The selected environment and its config's values, when there is a selection. */
export interface SelectedForChecks {
  file: string;
  values: Record<string, JsonValue>;
  tinker?: TinkerFacts;
  /** The base model a run of it trains, when it is not the locked one. */
  model?: string;
  /** A cookbook selection's recipe. */
  recipe?: string;
}

/** What a start's checks read; `reuseProbe`: a start takes RL_PYTHON's last good probe of this environment (installation.ts). */
export function startContext(settings: Settings, selected: SelectedForChecks | undefined, signal?: AbortSignal, reuseProbe = false, placement: PlacementName = settings.placement): StartContext {
  const probe = reuseProbe ? reusableProbe : probeInterpreter;
  return {
    settings,
    useWandb: runUsesWandb(settings, selected?.values),
    ...(selected !== undefined ? { environmentFile: selected.file } : {}),
    ...(selected?.tinker !== undefined ? { tinker: selected.tinker } : {}),
    signal,
    placement,
    interpreter: once(() => probe(settings, signal, selected?.file)),
    ...(selected?.model !== undefined ? { model: selected.model } : {}),
    ...(selected?.recipe !== undefined ? { recipe: selected.recipe } : {}),
    liveModels: once(() => liveModels({ settings, redactor: new SecretRedactor(secretValues(settings)) }, signal)),
    slurm: once(() => probeSlurm(settings)),
  };
}

const applies = (requirement: Requirement, ctx: StartContext): boolean => requirement.applies?.(ctx) ?? true;

/**
 * A start: its requirements in order; UserError(message, hints) at the first required one unmet.
 * `placement`: only those checked where the run is placed, under the start lock; otherwise the rest.
 */
export async function refuseUnmetRequirements(ctx: StartContext, placement = false): Promise<void> {
  for (const requirement of REQUIREMENTS) {
    if (!requirement.atStart || !applies(requirement, ctx) || !requirement.required(ctx) || (requirement.placement === true) !== placement) continue;
    const outcome = await requirement.evaluate(ctx);
    if (!outcome.ok) throw new UserError(outcome.message, outcome.hints);
  }
}

export type Assessment = Outcome & { check: string; required: boolean };

/** The doctor: every requirement that applies, evaluated at once, reported in the list's order. */
export async function assessRequirements(ctx: DoctorContext): Promise<Assessment[]> {
  const requirements = REQUIREMENTS.filter((r) => applies(r, ctx));
  const outcomes = await Promise.all(requirements.map((r) => r.evaluate(ctx)));
  return requirements.flatMap((r, i) => {
    const outcome = outcomes[i];
    return outcome === undefined ? [] : [{ ...outcome, check: r.check, required: r.required(ctx) }];
  });
}
