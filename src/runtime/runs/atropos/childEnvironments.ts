/** What each process of an Atropos run may see of the server's environment: an allow-list, keys only where needed. */
import { childEnv } from '../../../core/childEnv.js';
import type { RunProcess } from '../../../core/files/home.js';
import type { Settings } from '../../../core/settings.js';
import { tinkerSdkEnv } from '../../tinker/sdkEnv.js';

/** The W&B part of a child's environment, for the processes that log to W&B. */
export function wandbEnvironment(settings: Settings, useWandb: boolean): Record<string, string | undefined> {
  return useWandb ? { WANDB_API_KEY: settings.secrets.wandbApiKey, WANDB_BASE_URL: settings.wandb.baseUrl, WANDB_ENTITY: settings.wandb.entity, WANDB_MODE: settings.processEnv.WANDB_MODE } : {};
}

/** The allow-listed environment of each child: the Tinker key (and the SDK's service and project) to the trainer only, W&B keys only where W&B is used. */
export function atroposChildEnvironments(settings: Settings, useWandb: boolean): Record<RunProcess, Record<string, string>> {
  const common = { PYTHONUNBUFFERED: '1' };
  const wandb = wandbEnvironment(settings, useWandb);
  return {
    api: childEnv(settings.processEnv, common),
    trainer: childEnv(settings.processEnv, { ...common, ...wandb, ...tinkerSdkEnv(settings) }),
    env: childEnv(settings.processEnv, { ...common, ...wandb }),
  };
}
