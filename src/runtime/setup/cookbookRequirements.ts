/**
 * A cookbook run's recipe must be able to train in the tinker-cookbook RL_PYTHON has, read from
 * its source now (environments/cookbook.ts `checkRecipe`): a recipe whose rollout function does not
 * accept what the cookbook's own rollouts pass (verifiers_rl at v0.5.0 to v0.5.5 raises TypeError
 * at its first batch, after setup and paid sampling), or whose imports RL_PYTHON cannot resolve (an
 * optional extra not installed), is refused before anything is paid for; the doctor says the same.
 */
import { checkRecipe, lacksOf } from '../environments/cookbook.js';
import { always, met, type Requirement, unmet } from './requirement.js';

export const COOKBOOK_RECIPE: Requirement = {
  check: 'cookbook recipe',
  required: always,
  atStart: true,
  applies: (ctx) => ctx.recipe !== undefined,
  async evaluate({ settings, recipe, signal }) {
    const name = recipe!;
    const found = await checkRecipe(settings, name, signal);
    if (found === undefined) return met(`${name}: not checked (RL_PYTHON could not read it; see server.log)`);
    if (found === null) return unmet(`${name} is not installed`, `RL_PYTHON's tinker_cookbook has no recipe ${name} (tinker_cookbook/recipes/${name}/train.py): rl_list_environments lists what it has.`, { recipe: name });
    if (found.cannot_train !== undefined) {
      return unmet(
        `${name} cannot train in this tinker-cookbook`,
        `The installed tinker-cookbook's ${name} recipe cannot train: ${found.cannot_train}. Install a tinker-cookbook release whose ${name} trains (README, "Cookbook recipes and verifiers environments"), or train another recipe.`,
        { recipe: name, cause: found.cannot_train },
      );
    }
    const lacks = found.lacks !== undefined && found.lacks.length > 0 ? lacksOf(found.lacks) : undefined;
    if (lacks?.at_start) {
      return unmet(`${name} lacks ${lacks.modules.join(', ')}`, `The ${name} recipe cannot start: ${lacks.install}`, { recipe: name, modules: lacks.modules, ...(lacks.extras ? { extras: lacks.extras } : {}) });
    }
    // Modules only some code paths import (an optional grader, a sandbox) stop nothing here: the listing says them.
    return met(`${name} can start with RL_PYTHON's tinker-cookbook${lacks ? ` (its code imports ${lacks.modules.join(', ')} where used: not installed)` : ''}`);
  },
};
