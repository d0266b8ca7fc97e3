/**
 * Several runs on one host: how many may be active at once, and where each one lives. The first
 * run takes RL_API_PORT / RL_INFERENCE_PORT (8000 / 8001 unless set), as a single run always did;
 * a run started while others are active gets ports nobody holds, chosen under the start lock and
 * recorded in run.json before anything binds them. The trainer serves on its run's port through
 * python/run_trainer.py, works in its own directory (it rewrites temp.json there at every batch)
 * and saves into its own absolute checkpoint_dir.
 */
import { UserError } from '../../../core/errors.js';
import { anyFreePort, isPortFree } from '../../../core/os/ports.js';
import type { Settings } from '../../../core/settings.js';
import type { RunRecord } from '../seams/record.js';
import type { RunLimit } from '../seams/placement.js';

/** Attempts at drawing two free ports that no active run has recorded. */
const PORT_DRAWS = 20;

/** Refuses a start when its placement's limit of active runs is reached (RL_MAX_CONCURRENT_RUNS on this host), naming them. */
export function refuseAtLimit(active: readonly RunRecord[], limit: RunLimit): void {
  const { max, setting, where } = limit;
  if (active.length < max) return;
  const listed = active.map((r) => `${r.run_id} (${r.environment}, ${r.status})`).join(', ');
  throw new UserError(
    `${active.length} runs are active ${where}, the most ${setting} (${max}) allows: ${listed}. Wait for one to end (rl_wait_for_run), or stop one with rl_stop_training.`,
    { active_runs: active.map((r) => r.run_id), limit: max },
  );
}

async function freePortPair(taken: Set<number>): Promise<{ api: number; inference: number }> {
  for (let i = 0; i < PORT_DRAWS; i++) {
    const api = await anyFreePort();
    const inference = await anyFreePort();
    if (api === inference || taken.has(api) || taken.has(inference)) continue;
    // The inference server is moved to 127.0.0.1; free on every address keeps a squatter elsewhere from confusing clients.
    if (await isPortFree(inference, '0.0.0.0')) return { api, inference };
  }
  throw new Error(`could not find two free ports in ${PORT_DRAWS} tries`);
}

/** A new run's ports: the configured ones when no run is active, else two free ones no active run has recorded. */
export async function choosePorts(settings: Settings, active: readonly RunRecord[]): Promise<RunRecord['ports']> {
  return active.length === 0 ? { api: settings.apiPort, inference: settings.inferencePort } : await freePortPair(new Set(active.flatMap((r) => [r.ports.api, r.ports.inference])));
}
