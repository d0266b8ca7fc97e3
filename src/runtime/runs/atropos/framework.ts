/**
 * The Atropos framework (tinker-atropos on atroposlib): a run is the Atropos API, the trainer and
 * the environment, started in that order and stopped the other way round; its progress is read
 * from the trainer's log and the API, its trouble from atroposlib's log lines.
 */
import type { RunProcess } from '../../../core/files/home.js';
import type { RunFramework } from '../seams/framework.js';
import { atroposChildEnvironments } from './childEnvironments.js';
import { firstCause } from './logSignals.js';
import { AtroposObserver } from './observer.js';
import { judge } from './outcome.js';
import { STAGE_GOAL } from './readiness.js';
import { estimateAtropos, planAtropos, preflightAtropos } from './start.js';
import { AtroposStartUpProbe } from './startUpProbe.js';
import { readTrainerLog, TrainerLogFollower } from './trainerLog.js';
import { logOf } from '../seams/record.js';
import { UserError } from '../../../core/errors.js';

const PROCESS_NAME: Record<RunProcess, string> = { api: 'Atropos API server', trainer: 'trainer', env: 'environment' };

export const ATROPOS: RunFramework = {
  name: 'atropos',
  preflight: preflightAtropos,
  plan: planAtropos,
  estimate: estimateAtropos,
  startOrder: ['api', 'trainer', 'env'],
  stopOrder: ['env', 'trainer', 'api'],
  processName: (name) => PROCESS_NAME[name],
  stageGoal: (stage) => STAGE_GOAL[stage],
  startUpProbe: (run, logger) => new AtroposStartUpProbe(run, logger),
  judge,
  firstCause,
  observer: (run) => new AtroposObserver(run),
  readSummary: (record, opts) => readTrainerLog(logOf(record, 'trainer'), opts),
  follower: (record) => new TrainerLogFollower(logOf(record, 'trainer')),
  childEnvironments: (settings, record) => atroposChildEnvironments(settings, record.use_wandb),
  resumePoint: (record) =>
    Promise.reject(
      new UserError(
        `Run '${record.run_id}' is an Atropos run, which cannot be resumed: tinker-atropos' trainer creates a new LoRA on every launch and has no way to load a saved state with its optimizer. Start a new run (rl_start_training); its checkpoints stay usable for rl_evaluate.`,
        { run_id: record.run_id, framework: 'atropos', resumable: false },
      ),
    ),
  healthTerms: {
    noData: 'no data has reached the Atropos API',
    noProgress: 'no trainer step and no new data',
    stallConsequence: 'the trainer waits for a batch for ever',
    stallProcess: 'env',
  },
};
