/**
 * The variables Tinker's SDK reads, for a process that runs it with the key (a run's trainer, the
 * server's own helper python/tinker_api.py): the key, and the service and project it should talk
 * to when the operator set them. Nothing else of the server's environment goes with them.
 */
import type { Settings } from '../../core/settings.js';

export function tinkerSdkEnv(settings: Settings): Record<string, string | undefined> {
  return {
    TINKER_API_KEY: settings.secrets.tinkerApiKey,
    TINKER_BASE_URL: settings.tinkerSdk.baseUrl,
    TINKER_PROJECT_ID: settings.tinkerSdk.projectId,
  };
}
