/**
 * Why an Atropos run must not start, each as a UserError naming the cause and the fix. These
 * run before anything is spawned or written: a refused start leaves no trace but the answer.
 */
import { UserError } from '../../../core/errors.js';
import type { JsonValue } from '../../../core/json.js';
import type { Settings } from '../../../core/settings.js';
import { DEFAULT_BATCH_SIZE } from '../../config/selection.js';
import { findLaunchTraining, findRunApi } from '../../setup/installation.js';
import { refuseUnmetRequirements, startContext } from '../../setup/requirements.js';
import type { StartContext } from '../../setup/requirement.js';
import type { RunSelection } from '../seams/framework.js';
import type { PlacementName } from '../seams/record.js';

/** Values that make the Atropos API unable to ever hand the trainer a batch. */
export function refuseStallingConfig(env: Record<string, JsonValue>): void {
  const { batch_size: batch, group_size: group } = env;
  if (typeof batch === 'number' && batch <= 0) {
    throw new UserError(
      `batch_size is ${batch}: the trainer registers it with the Atropos API, which then never has a batch to give, so training stalls. Set it with rl_edit_config('batch_size', ${DEFAULT_BATCH_SIZE}) (tinker-atropos' default).`,
      { field: 'batch_size', value: batch, suggested: DEFAULT_BATCH_SIZE },
    );
  }
  if (typeof group === 'number' && group <= 0) {
    throw new UserError(`group_size is ${group}: an environment must produce at least one completion per group. Set it with rl_edit_config('group_size', 16).`, {
      field: 'group_size',
      value: group,
    });
  }
  if (typeof batch === 'number' && typeof group === 'number' && batch % group !== 0) {
    const suggested = Math.max(group, Math.round(batch / group) * group);
    throw new UserError(
      `batch_size ${batch} is not a multiple of group_size ${group}: the Atropos API builds each batch from whole groups, so it can never fill one and training stalls. Set batch_size to a multiple of ${group} (e.g. rl_edit_config('batch_size', ${suggested})) or change group_size.`,
      { field: 'batch_size', value: batch, group_size: group, suggested },
    );
  }
}

/** Where the start found the processes it launches. */
function checksOf(settings: Settings, selection: RunSelection, placement: PlacementName, signal: AbortSignal | undefined, reuseProbe: boolean, model?: string): StartContext {
  return startContext(settings, { file: selection.environment.file_path, values: selection.values, tinker: selection.tinker, ...(model !== undefined ? { model } : {}) }, signal, reuseProbe, placement);
}

/**
 * The first run on the host takes the configured ports: checked under the start lock against the
 * runs every server recorded, so another server's run started a moment earlier (which holds them)
 * makes this one draw free ports instead of being refused.
 */
export async function refuseBusyPorts(settings: Settings, selection: RunSelection, active: readonly unknown[], placement: PlacementName): Promise<void> {
  if (active.length > 0) return;
  await refuseUnmetRequirements(checksOf(settings, selection, placement, undefined, true), true);
}

export interface Installation {
  runApi: string;
  launchTraining: string;
}

/**
 * Every refusal of a start after its selection: a config that would stall, then the start's
 * requirements (setup/requirements.ts), the ones the doctor reports too.
 */
/** The ports are not checked here: where the run is placed decides them, under the start lock (`refuseBusyPorts`); `model`: the base model it trains. */
export async function preflight(settings: Settings, selection: RunSelection, env: Record<string, JsonValue>, placement: PlacementName, model: string, signal?: AbortSignal): Promise<Installation> {
  refuseStallingConfig(env);
  await refuseUnmetRequirements(checksOf(settings, selection, placement, signal, true, model));
  signal?.throwIfAborted();
  // Both were found a moment ago by the launch_training.py and run-api requirements.
  return { runApi: findRunApi(settings), launchTraining: findLaunchTraining(settings) };
}
