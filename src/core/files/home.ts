/**
 * The layout of RL_HOME, the one place that spells it. Every server process sharing RL_HOME reads
 * and writes these paths, so a name changed here changes it for all of them at once:
 *
 *   RL_HOME/
 *     server.log
 *     selection.json (+ selection.json.lock)
 *     cache/discovery.json, cache/cookbook.json, cache/run-index.json, cache/rollout-lengths.json,
 *       cache/tinker-models.json
 *     runs/.start.lock
 *     runs/<run_id>/run.json (+ run.json.lock), config.yaml, api.log, trainer.log, env.log,
 *                   supervisor.lock, stop.request, keeper.log, trainer/ (its cwd), checkpoints/,
 *                   wandb-history.json, cookbook/ (a cookbook run's log_path),
 *                   slurm/ (a Slurm run's job script and the files its steps start by)
 *     inference_tests/<test_id>/result.json, owner.json, cancel.request, <model files>
 *     evaluations/<eval_id>/result.json, owner.json, cancel.request, <model files> (samples, logs, the environment's metrics)
 *     tasks.key, tasks/<digest>.cancelled (a cancelled task that waited on a job or a run)
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

/** Run ids and inference-test ids: 8 lowercase hex characters. */
export const RUN_ID_PATTERN = /^[0-9a-f]{8}$/;
export const TEST_ID_PATTERN = /^[0-9a-f]{8}$/;
export const EVAL_ID_PATTERN = /^[0-9a-f]{8}$/;

/**
 * A new run, test or evaluation id: 8 hex characters with a letter other than `e`, so that no id
 * reads as a JSON number. Clients that take a tool argument as JSON first (the Inspector's CLI
 * `--tool-arg`) turn `12345678` into a number and `5e123456` into Infinity, and refuse the call.
 */
export function newId(): string {
  for (;;) {
    const id = randomBytes(4).toString('hex');
    if (/[a-df]/.test(id)) return id;
  }
}

/** The three processes of a training run, in start-up order. */
export const RUN_PROCESSES = ['api', 'trainer', 'env'] as const;
export type RunProcess = (typeof RUN_PROCESSES)[number];

/** The fixed file names inside a run directory. */
export const RUN_FILES = {
  record: 'run.json',
  config: 'config.yaml',
  /** The lock naming the run's keeper, the one process that keeps the run (or the server creating it, until its keeper runs). */
  supervisorLock: 'supervisor.lock',
  /** Each taking, hand-over and release of the supervisor lock, one JSON line each: who kept the run when. */
  keeperHistory: 'keepers.jsonl',
  /** Written by a server to ask the run's keeper to stop the run. */
  stopRequest: 'stop.request',
  /** What the keeper itself printed (a crash's stack); its log lines go to server.log. */
  keeperLog: 'keeper.log',
  /** The trainer's own working directory: it rewrites temp.json there at every batch. */
  trainerDir: 'trainer',
  /** The run's checkpoint_dir (upstream's default is relative to the trainer's cwd). */
  checkpoints: 'checkpoints',
  /** The W&B history rl_get_results sampled, when its answer holds fewer rows. */
  history: 'wandb-history.json',
  /** A tinker-cookbook run's log_path: its config.json, metrics.jsonl, checkpoints.jsonl and logs.log. */
  cookbookLogDir: 'cookbook',
  /** A Slurm run's job script, its output, and the files the server and the script start and follow its steps by. */
  slurm: 'slurm',
} as const;

/** The batch the trainer took last, rewritten in its working directory at every step (tinker-atropos). */
export const TRAINER_BATCH_FILE = 'temp.json';

export const runLogFile = (process: RunProcess): string => `${process}.log`;

/** The lock every run.json read-modify-write takes. */
export const recordLockFile = `${RUN_FILES.record}.lock`;

export const INFERENCE_TEST_RESULT = 'result.json';
/** Beside a model's output in a test or an evaluation: what the wire to its endpoint carried (`<n>-<model>.wire.jsonl`). */
export const WIRE_SUFFIX = '.wire.jsonl';

export const serverLogPath = (home: string): string => join(home, 'server.log');
/** The selected environment and its edited config, shared by every server (+ `.lock`, its write lock). */
export const selectionPath = (home: string): string => join(home, 'selection.json');
export const discoveryCachePath = (home: string): string => join(home, 'cache', 'discovery.json');
/** What RL_PYTHON has of tinker-cookbook and verifiers, with the stamps of the files it was read from. */
export const cookbookCachePath = (home: string): string => join(home, 'cache', 'cookbook.json');
/** What rl_list_runs and adoption know of each run, by run.json's stat, so a restart parses no unchanged record. */
export const runIndexPath = (home: string): string => join(home, 'cache', 'run-index.json');
/** Each environment's rollout lengths as its latest inference test measured them: what cost estimates start from. */
export const rolloutLengthsPath = (home: string): string => join(home, 'cache', 'rollout-lengths.json');
/** The base models Tinker serves, as it last said (kept an hour): what starts and the doctor check a run's model against. */
/** Each environment's prompt lengths as its latest offline check rendered them: the estimate's high bound until an inference test measures more. */
export const promptLengthsPath = (home: string): string => join(home, 'cache', 'prompt-lengths.json');
/** Readiness verdicts (rl_check_environment), one file per environment holding the last verdict per config. */
export const readinessRoot = (home: string): string => join(home, 'readiness');
export const tinkerModelsCachePath = (home: string): string => join(home, 'cache', 'tinker-models.json');
export const runsRoot = (home: string): string => join(home, 'runs');
export const runFilePath = (home: string, runId: string, name: string): string => join(runsRoot(home), runId, name);
/** Held while a start checks the active runs and creates its directory (servers sharing RL_HOME). */
export const startLockPath = (home: string): string => join(runsRoot(home), '.start.lock');
export const inferenceTestsRoot = (home: string): string => join(home, 'inference_tests');
export const inferenceTestDir = (home: string, testId: string): string => join(inferenceTestsRoot(home), testId);
/** Checkpoint evaluations (rl_evaluate): one directory each, its result.json written at the start and at the end. */
export const evaluationsRoot = (home: string): string => join(home, 'evaluations');
export const evaluationDir = (home: string, evalId: string): string => join(evaluationsRoot(home), evalId);
export const EVALUATION_RESULT = 'result.json';
/** The files of a job's directory (an evaluation, an inference test), the same for every kind. */
export const JOB_FILES = {
  result: 'result.json',
  /** The server process that runs the job: the one that carries out a cancel. */
  owner: 'owner.json',
  /** Written by any server to ask the owner to cancel the job (its reason inside). */
  cancelRequest: 'cancel.request',
} as const;
/** Cancelled tasks that only waited (on a run, or a job another call started): nothing of theirs runs, the mark is all. */
export const cancelledTaskPath = (home: string, digest: string): string => join(home, 'tasks', `${digest}.cancelled`);
/** The key that signs task ids (the MCP tasks extension), so any server sharing RL_HOME knows a task another issued. */
export const taskKeyPath = (home: string): string => join(home, 'tasks.key');
