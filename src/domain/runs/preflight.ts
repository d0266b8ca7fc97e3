/**
 * Why a run must not start, each as a UserError naming the cause and the fix. These
 * run before anything is spawned or written: a refused start leaves no trace but the answer.
 */
import { UserError } from '../../core/errors.js';
import { findLaunchTraining, findRunApi, isSupportedPython, MIN_PYTHON, pythonVersion } from '../setup/installation.js';
import { isPortFree } from '../../core/ports.js';
import { DEFAULT_BATCH_SIZE } from '../config/selection.js';
import type { JsonValue } from '../../core/json.js';
import type { Settings } from '../../core/settings.js';

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

export function refuseMissingKeys(settings: Settings, useWandb: boolean): void {
  const where = 'Add it to the MCP server environment (the env block of the client config, or the shell that starts the server) and restart the server.';
  if (!settings.secrets.tinkerApiKey) {
    throw new UserError(`TINKER_API_KEY is not set: the trainer needs it to train on Tinker. ${where}`, { missing: 'TINKER_API_KEY' });
  }
  if (useWandb && !settings.secrets.wandbApiKey) {
    throw new UserError(
      `WANDB_API_KEY is not set while use_wandb is true: the upstream trainer crashes when W&B cannot log in, and metrics could not be read back. ${where} (An operator can instead lock env.use_wandb: false in the RL_MCP_CONFIG file.)`,
      { missing: 'WANDB_API_KEY' },
    );
  }
}

export interface Installation {
  runApi: string;
  launchTraining: string;
  pythonVersion: string;
}

export async function checkInstallation(settings: Settings, signal?: AbortSignal): Promise<Installation> {
  const launchTraining = findLaunchTraining(settings);
  const runApi = findRunApi(settings);
  const version = await pythonVersion(settings, signal);
  if (!isSupportedPython(version)) {
    throw new UserError(
      `RL_PYTHON (${settings.python}) is Python ${version.version}; tinker-atropos and atroposlib need Python ${MIN_PYTHON.join('.')} or newer. Point RL_PYTHON at a ${MIN_PYTHON.join('.')}+ interpreter (e.g. <tinker-atropos>/.venv/bin/python).`,
      { python: settings.python, python_version: version.version },
    );
  }
  return { runApi, launchTraining, pythonVersion: version.version };
}

export async function refuseBusyPorts(settings: Settings): Promise<void> {
  if (!(await isPortFree(settings.apiPort, '127.0.0.1'))) {
    throw new UserError(
      `Port ${settings.apiPort} (RL_API_PORT, for the Atropos API) is in use on 127.0.0.1. Stop whatever listens there (perhaps a run-api left over from an earlier run: lsof -i :${settings.apiPort}) or set RL_API_PORT to a free port.`,
      { port: settings.apiPort, setting: 'RL_API_PORT' },
    );
  }
  // The upstream trainer binds its inference server on all interfaces.
  if (!(await isPortFree(settings.inferencePort, '0.0.0.0'))) {
    throw new UserError(
      `Port ${settings.inferencePort} (RL_INFERENCE_PORT, for the trainer's inference server) is in use. The upstream trainer hard-codes its inference port (8001), so only one training run can use this host at a time: stop the process holding the port (lsof -i :${settings.inferencePort}), e.g. a trainer left over from an earlier run.`,
      { port: settings.inferencePort, setting: 'RL_INFERENCE_PORT' },
    );
  }
}
