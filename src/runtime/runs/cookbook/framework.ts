/**
 * The tinker-cookbook framework: a run is one process, a recipe's train module, read through
 * the files it writes under its log_path (metrics.jsonl, checkpoints.jsonl, logs.log) and its
 * own output (trainer.log: its tracebacks reach stderr only). It resumes from its last saved
 * state with its optimizer in the same log_path.
 */
import { readFile } from 'node:fs/promises';
import { childEnv } from '../../../core/childEnv.js';
import type { RunProcess } from '../../../core/files/home.js';
import type { RunFramework } from '../seams/framework.js';
import { logOf, processOf, type RunRecord } from '../seams/record.js';
import { CookbookFiles, cookbookFile, lastState, parseCheckpoints } from './files.js';
import { CookbookFollower, CookbookObserver, CookbookStartUpProbe, readCookbookSummary } from './observer.js';
import { resumePointOf } from './resume.js';
import { firstCause, STAGE_GOAL, verdictOf } from './rules.js';
import { estimateCookbook, planCookbook, preflightCookbook } from './start.js';
import { tailLines } from '../../../core/files/logTail.js';

/** How far up the recipe's output the cause of a failure is looked for. */
const CAUSE_LINES = 200;

const readCheckpoints = async (record: RunRecord) => parseCheckpoints(await readFile(cookbookFile(record, 'checkpoints'), 'utf8').catch(() => ''));

async function judge(record: RunRecord) {
  const trainer = processOf(record, 'trainer');
  if (trainer.state !== 'exited') return undefined;
  const checkpoints = await readCheckpoints(record);
  return verdictOf({ trainer, finalSaved: checkpoints.some((c) => c.name === 'final'), cause: firstCause(await tailLines(logOf(record, 'trainer'), CAUSE_LINES)) });
}

export const COOKBOOK: RunFramework = {
  name: 'cookbook',
  preflight: preflightCookbook,
  plan: planCookbook,
  estimate: estimateCookbook,
  startOrder: ['trainer'],
  stopOrder: ['trainer'],
  processName: (name: RunProcess) => (name === 'trainer' ? 'recipe' : name),
  stageGoal: () => STAGE_GOAL,
  startUpProbe: (run, logger) => new CookbookStartUpProbe(run, logger),
  judge,
  firstCause,
  observer: (run) => new CookbookObserver(run),
  readSummary: readCookbookSummary,
  follower: (record) => new CookbookFollower(record),
  metricRows: async (record) => [...((await new CookbookFiles(record, true).read()).metrics.rows ?? new Map()).entries()].sort((a, b) => a[0] - b[0]).map(([, row]) => row),
  // Only the Tinker key: metrics go to metrics.jsonl, not W&B. Unbuffered, so trainer.log follows the run.
  childEnvironments: (settings) => ({ trainer: childEnv(settings.processEnv, { TINKER_API_KEY: settings.secrets.tinkerApiKey, PYTHONUNBUFFERED: '1' }) }),
  resumePoint: async (record) => resumePointOf(record, lastState(await readCheckpoints(record))),
  healthTerms: {
    noData: 'the recipe has written no metrics row',
    noProgress: 'no new metrics row',
    stallConsequence: 'a batch writes its row only once it is sampled and trained, so sampling is stuck or slow (Tinker paused, a slow sampler) while the run is paid for',
    stallProcess: 'trainer',
  },
};
