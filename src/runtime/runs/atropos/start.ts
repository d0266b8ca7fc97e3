/**
 * How an Atropos run starts: its refusals before the start lock (preflight.ts), then, under the
 * lock, its place beside the active runs (ports, an environment that hard-codes the trainer's
 * port), its config YAML, and the three commands: `run-api`, the trainer through
 * python/run_trainer.py in the run's own directory, the environment's `serve`.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../../core/errors.js';
import { RUN_FILES } from '../../../core/files/home.js';
import type { JsonValue } from '../../../core/json.js';
import { RUN_TRAINER_SCRIPT } from '../../../core/files/paths.js';
import type { Settings } from '../../../core/settings.js';
import { DEFAULT_BATCH_SIZE } from '../../config/selection.js';
import { estimateRun, type RunEstimate, type RunShape } from '../../cost/estimate.js';
import { trainedModel } from '../../cost/model.js';
import type { Preflight, RunPlan, RunSelection, StartRequest } from '../seams/framework.js';
import { choosePorts } from '../placement/host.js';
import type { RunRecord } from '../seams/record.js';
import { lengthsFor } from '../../cost/lengthStore.js';
import { preflight, refuseBusyPorts } from './preflight.js';
import { buildRunConfig, checkpointDir, type RunConfig, writeRunConfig } from './runConfig.js';

/** tinker-atropos' defaults for what a config may leave unset. */
const DEFAULTS = { batch_size: DEFAULT_BATCH_SIZE, group_size: 16, max_token_length: 256, total_steps: 50 } as const;
/** An environment that talks to the trainer on 8001 itself, not through the `openai:` entries it is given. */
const HARD_CODED_TRAINER_PORT = /\b(?:localhost|127\.0\.0\.1|0\.0\.0\.0):8001\b/;

const positive = (v: JsonValue | undefined): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined);

function shapeOf(config: RunConfig): { shape: RunShape; unknown: string[] } {
  const unknown: string[] = [];
  const value = (field: keyof typeof DEFAULTS): number => {
    const v = positive(config.env[field]);
    if (v !== undefined) return v;
    unknown.push(`${field} is not set in the config: tinker-atropos' default ${DEFAULTS[field]} is assumed`);
    return DEFAULTS[field];
  };
  const shape = { model: trainedModel(config), total_steps: value('total_steps'), batch_size: value('batch_size'), group_size: value('group_size'), max_token_length: value('max_token_length') };
  return { shape, unknown };
}

/** What a run config will cost: its shape, its base model's price, its environment's measured rollout lengths. */
export function estimateConfig(settings: Settings, config: RunConfig, environment: string): RunEstimate {
  const { shape, unknown } = shapeOf(config);
  return estimateRun(shape, settings.cost.prices[shape.model], lengthsFor(settings.home, environment, shape.model), unknown);
}

/** A run's config as a start would build it, with the configured ports (a placeholder before the start lock). */
function provisionalConfig(settings: Settings, selection: RunSelection, runId: string, runDir: string): RunConfig {
  return buildRunConfig(settings, selection, runId, { ports: { api: settings.apiPort, inference: settings.inferencePort }, checkpointDir: checkpointDir(settings, runDir, runId) }).config;
}

export function estimateAtropos(settings: Settings, selection: RunSelection): RunEstimate {
  return estimateConfig(settings, provisionalConfig(settings, selection, 'estimate', ''), selection.environment.name);
}

export async function preflightAtropos(request: StartRequest): Promise<Preflight> {
  const { settings, selection, runId, runDir, signal } = request;
  const config = provisionalConfig(settings, selection, runId, runDir);
  const install = await preflight(settings, selection, config.env, request.placement.name, trainedModel(config), signal);
  return { executables: { runApi: install.runApi, launchTraining: install.launchTraining } };
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

export async function planAtropos(request: StartRequest & { active: readonly RunRecord[]; neighbours: readonly RunRecord[]; preflight: Preflight }): Promise<RunPlan> {
  const { settings, selection, runId, runDir, active, neighbours } = request;
  const { bindHost } = request.placement;
  const { runApi, launchTraining } = request.preflight.executables;
  refuseHardCodedPort(selection.environment.file_path, active);
  // A run that ended a moment ago may still hold the configured ports while its leftovers stop.
  await refuseBusyPorts(settings, selection, neighbours, request.placement.name);
  const ports = await choosePorts(settings, neighbours);
  const { config, names } = buildRunConfig(settings, selection, runId, { ports, checkpointDir: checkpointDir(settings, runDir, runId) });
  const configPath = join(runDir, RUN_FILES.config);
  const trainerDir = join(runDir, RUN_FILES.trainerDir);
  return {
    names,
    ports,
    configPath,
    commands: {
      api: [runApi!, '--host', bindHost, '--port', String(ports.api)],
      trainer: [settings.python, RUN_TRAINER_SCRIPT, '--port', String(ports.inference), '--host', bindHost, launchTraining!, '--config', configPath],
      env: [settings.python, selection.environment.file_path, 'serve', '--config', configPath],
    },
    cwds: { trainer: trainerDir },
    shownConfig: config.env,
    estimate: estimateConfig(settings, config, selection.environment.name),
    write: (redactor) => {
      writeRunConfig(configPath, config, runId, redactor);
      mkdirSync(trainerDir);
    },
  };
}
