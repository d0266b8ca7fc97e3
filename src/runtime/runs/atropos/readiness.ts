/**
 * When an Atropos run's start-up stage is ready, as pure decisions over what the probes found
 * (startUpProbe.ts gathers it), and what each stage waits for.
 */
import type { RunProcess } from '../../../core/files/home.js';
import type { Readiness } from '../seams/framework.js';
import type { ProcessState } from '../seams/record.js';

/** What start-up waits for at each stage. */
export const STAGE_GOAL: Record<RunProcess, string> = {
  api: 'waiting for the Atropos API to answer GET /',
  trainer: "waiting for the trainer to register with the Atropos API ('Registered as trainer')",
  env: 'waiting for the environment to connect and send data',
};

/**
 * An environment counts as connected once the API holds its data, or once it has stayed alive
 * this long. A real environment may spend minutes downloading its dataset and generating its
 * first group before data shows; holding the run in `starting` (or failing it at the stage
 * deadline) for that would misreport a healthy paid run. Its early failures (imports, a bad
 * config) surface within seconds, and any later non-zero exit still fails the run.
 */
const ENV_SETTLE_MS = 10_000;
/**
 * Once registered, the trainer's inference server must answer on the run's inference port within
 * this time; the environment would otherwise wait on it for ever (the upstream trainer runs on
 * without its server when the port is taken).
 */
export const INFERENCE_GRACE_MS = 15_000;

/** The API answered GET / and was running before and after the probe. */
export function apiReadiness(facts: { answers: boolean; running: boolean }): Readiness {
  return facts.answers && facts.running ? 'ready' : 'waiting';
}

export function trainerReadiness(facts: { registered: boolean; inferenceAnswers: boolean; registeredForMs: number; inferencePort: number }): Readiness {
  if (!facts.registered) return 'waiting';
  if (facts.inferenceAnswers) return 'ready';
  if (facts.registeredForMs < INFERENCE_GRACE_MS) return 'waiting';
  return {
    status: 'failed',
    error: `The trainer registered with the Atropos API but its inference server does not answer GET /health on port ${facts.inferencePort}, so the environment could never sample. Either another process took port ${facts.inferencePort} before the trainer bound it (the trainer trains on without its server then), or this checkout's trainer does not start its server through uvicorn.run, which the server moves to the run's port (python/run_trainer.py): the trainer log says which port it used. Free the port and start again; for such a checkout set RL_INFERENCE_PORT to the port its trainer uses and run one run at a time.`,
    error_process: 'trainer',
  };
}

export function envReadiness(facts: { state: ProcessState; aliveMs: number; dataFlowing: boolean }): Readiness {
  // An environment that already exited without failing the run (exit 0) has done its work.
  if (facts.state === 'exited') return 'ready';
  return facts.state === 'running' && (facts.aliveMs >= ENV_SETTLE_MS || facts.dataFlowing) ? 'ready' : 'waiting';
}
