/**
 * Several runs on one host: how many may be active at once, and where each one lives. The first
 * run takes RL_API_PORT / RL_INFERENCE_PORT (8000 / 8001 unless set), as a single run always did;
 * a run started while others are active gets ports nobody holds, chosen under the start lock and
 * recorded in run.json before anything binds them. The trainer serves on its run's port through
 * python/run_trainer.py, works in its own directory (it rewrites temp.json there at every batch)
 * and saves into its own absolute checkpoint_dir.
 */
import { readFileSync } from 'node:fs';
import { UserError } from '../../../core/errors.js';
import { anyFreePort, isPortFree } from '../../../core/ports.js';
import type { Settings } from '../../../core/settings.js';
import type { RunRecord } from '../registry/record.js';
import { checkpointDir, type RunPlacement } from '../atropos/runConfig.js';

/** Attempts at drawing two free ports that no active run has recorded. */
const PORT_DRAWS = 20;
/** An environment that talks to the trainer on 8001 itself, not through the `openai:` entries it is given. */
const HARD_CODED_TRAINER_PORT = /\b(?:localhost|127\.0\.0\.1|0\.0\.0\.0):8001\b/;

/** Refuses a start when RL_MAX_CONCURRENT_RUNS runs are active, naming them. */
export function refuseAtLimit(active: readonly RunRecord[], max: number): void {
  if (active.length < max) return;
  const listed = active.map((r) => `${r.run_id} (${r.environment}, ${r.status})`).join(', ');
  throw new UserError(
    `${active.length} runs are active on this host, the most RL_MAX_CONCURRENT_RUNS (${max}) allows: ${listed}. Wait for one to end (rl_wait_for_run), or stop one with rl_stop_training.`,
    { active_runs: active.map((r) => r.run_id), limit: max },
  );
}

/**
 * Refuses a second concurrent run of an environment that hard-codes the trainer's port 8001 in its
 * source (upstream's logp_steering.py): it would sample from another run's trainer.
 */
export function refuseHardCodedPort(environmentFile: string, active: readonly RunRecord[]): void {
  if (active.length === 0) return;
  let source: string;
  try {
    source = readFileSync(environmentFile, 'utf8');
  } catch {
    return; // The import check reports an unreadable file with its own fix.
  }
  const hit = HARD_CODED_TRAINER_PORT.exec(source);
  if (hit === null) return;
  throw new UserError(
    `${environmentFile} talks to the trainer at ${hit[0]} itself instead of through the server entries it is given, so it cannot run beside the active run(s) ${active.map((r) => r.run_id).join(', ')}: it would sample from another run's trainer. Wait for them to end, or make the environment use its config's openai base_url.`,
    { environment_file: environmentFile, active_runs: active.map((r) => r.run_id) },
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

/** Where a new run lives: the configured ports when no run is active, else two free ones. */
export async function choosePlacement(settings: Settings, active: readonly RunRecord[], runDir: string, runId: string): Promise<RunPlacement> {
  const ports = active.length === 0 ? { api: settings.apiPort, inference: settings.inferencePort } : await freePortPair(new Set(active.flatMap((r) => [r.ports.api, r.ports.inference])));
  return { ports, checkpointDir: checkpointDir(settings, runDir, runId) };
}
