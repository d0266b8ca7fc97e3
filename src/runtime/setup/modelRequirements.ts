/**
 * The run's base model must be one Tinker still serves: it retires base models, and a run on a
 * retired one fails only after start-up (after the install's checks passed and the run was
 * created). The list comes from Tinker through its SDK (tinker/models.ts, cached an hour); when it
 * cannot be had the check says why and passes, so a slow or unreachable service blocks nothing.
 */
import type { LiveModels } from '../tinker/models.js';
import { lockedModel } from './costRequirements.js';
import { always, met, type Outcome, type Requirement, unmet } from './requirement.js';

/** Live models named in a refusal at most: the list is long. */
const NAMED_MODELS = 25;

/** Pure: `model` judged against what Tinker serves. */
export function baseModelOutcome(model: string, live: LiveModels): Outcome {
  if (!live.ok) return met(`${model}: not checked (${live.reason})`);
  if (live.models.includes(model)) return met(`${model} is served (Tinker's list as of ${live.checked_at})`);
  const named = live.models.slice(0, NAMED_MODELS).join(', ') + (live.models.length > NAMED_MODELS ? `, and ${live.models.length - NAMED_MODELS} more` : '');
  return unmet(
    `${model} is not served by Tinker (retired?)`,
    `Tinker no longer serves the base model ${model} (its list as of ${live.checked_at}): a run on it would fail after start-up. Live base models: ${named || 'none'}. Train one of them: for an Atropos run the operator locks the model in the RL_MCP_CONFIG file (locked.env.tokenizer_name and locked.openai.model_name); for a cookbook run set it with rl_edit_config('model_name', ...) unless the operator locked it.`,
    { model, live_models: live.models },
  );
}

export const BASE_MODEL: Requirement = {
  check: 'base model on Tinker',
  required: always,
  atStart: true,
  async evaluate(ctx) {
    return baseModelOutcome(ctx.model ?? lockedModel(ctx.settings), await ctx.liveModels());
  },
};
