/**
 * The Slurm placement's decisions and texts without a cluster: what a job's state means for its
 * run, the values a job is asked with (settings and a start's own), the job script, the files a
 * step starts by, and the placement's verdict before the framework's.
 */
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { SettingsError, UserError } from '../../src/core/errors.js';
import { placementSettings } from '../../src/runtime/config/placementSettings.js';
import { requestStart, stepEnded, withdrawStart } from '../../src/runtime/runs/placement/slurm/control.js';
import { jobEnd, parseAccountingLine, parseQueueLine, queuedReason, stepExit } from '../../src/runtime/runs/placement/slurm/jobState.js';
import { jobResources } from '../../src/runtime/runs/placement/slurm/resources.js';
import { renderJobScript } from '../../src/runtime/runs/placement/slurm/script.js';
import { initialRecord, type RunRecord } from '../../src/runtime/runs/seams/record.js';
import { placementVerdict } from '../../src/runtime/runs/supervision/judging.js';
import { tempDir } from '../helpers/tmp.js';

test('a job state read from squeue or sacct: its phase, and the run\'s outcome when Slurm ended it', () => {
  const table: [string, 'queue' | 'sacct', string, 'stopped' | 'failed' | undefined, RegExp | undefined][] = [
    ['PENDING|Resources|', 'queue', 'queued', undefined, undefined],
    ['RUNNING|None|n1', 'queue', 'running', undefined, undefined],
    ['COMPLETING|TimeLimit|n1', 'queue', 'completing', undefined, undefined],
    ['COMPLETED|None|n1', 'queue', 'ended', undefined, undefined],
    ['CANCELLED by 0|None|0:0', 'sacct', 'ended', 'stopped', /^Slurm job 7 was cancelled outside this server \(CANCELLED by 0\)\.$/],
    ['TIMEOUT|TimeLimit|n1', 'queue', 'ended', 'failed', /^Slurm ended job 7 at its time limit \(TIMEOUT, TimeLimit\): give runs more time with RL_SLURM_TIME_LIMIT/],
    ['NODE_FAIL|NodeDown|n1', 'queue', 'ended', 'failed', /its node failed \(NODE_FAIL, NodeDown, node n1\)/],
    ['PREEMPTED|None|n1', 'queue', 'ended', 'failed', /preempted job 7 for a job of higher priority \(PREEMPTED\)/],
    ['OUT_OF_MEMORY|OutOfMemory|n1', 'queue', 'ended', 'failed', /RL_SLURM_MEM_PER_PROCESS/],
    ['FAILED|JobLaunchFailure|n1', 'queue', 'ended', 'failed', /^Slurm ended job 7 \(FAILED, JobLaunchFailure\)\.$/],
  ];
  for (const [line, source, phase, status, reason] of table) {
    const view = source === 'queue' ? parseQueueLine(line) : parseAccountingLine(line);
    assert.equal(view.phase, phase, line);
    const end = jobEnd('7', view);
    assert.equal(end?.status, status, line);
    if (reason) assert.match(end!.reason, reason, line);
  }
  assert.equal(parseQueueLine('RUNNING|None|n1').nodes, 'n1');
  assert.equal(queuedReason('7', parseQueueLine('PENDING|Resources|')), 'Slurm job 7 is pending: Resources (the nodes are busy: it starts when enough CPUs and memory are free).');
  assert.match(queuedReason('7', parseQueueLine('PENDING|ReqNodeNotAvail, UnavailableNodes:n1|')), /ReqNodeNotAvail, UnavailableNodes:n1 \(the nodes it may use are not available/);
  assert.equal(queuedReason('7', parseQueueLine('PENDING|SomethingNew|')), 'Slurm job 7 is pending: SomethingNew.');
  assert.deepEqual([stepExit(0), stepExit(3), stepExit(143), stepExit(137)], [
    { exit_code: 0, signal: null },
    { exit_code: 3, signal: null },
    { exit_code: null, signal: 'SIGTERM' },
    { exit_code: null, signal: 'SIGKILL' },
  ]);
});

const SLURM_DEFAULTS = placementSettings(() => undefined).slurm;

test('RL_PLACEMENT and RL_SLURM_* are checked at start; a start\'s own values are checked the same way', () => {
  assert.deepEqual(placementSettings(() => undefined), { placement: 'local', slurm: { cpusPerProcess: 2, memPerProcessMb: 4096, maxRuns: 4 } });
  const set: Record<string, string> = { RL_PLACEMENT: 'Slurm', RL_SLURM_PARTITION: 'gpu,cpu', RL_SLURM_ACCOUNT: 'lab-1', RL_SLURM_TIME_LIMIT: '1-12:00:00', RL_SLURM_CPUS_PER_PROCESS: '4', RL_SLURM_MEM_PER_PROCESS: '1500M', RL_MAX_SLURM_RUNS: '10' };
  assert.deepEqual(placementSettings((k) => set[k]), { placement: 'slurm', slurm: { partition: 'gpu,cpu', account: 'lab-1', timeLimit: '1-12:00:00', cpusPerProcess: 4, memPerProcessMb: 1500, maxRuns: 10 } });
  const bad: [string, string, RegExp][] = [
    ['RL_PLACEMENT', 'cloud', /RL_PLACEMENT="cloud" is not local or slurm/],
    ['RL_SLURM_TIME_LIMIT', '2 hours', /is not a Slurm time limit: minutes, MM:SS/],
    ['RL_SLURM_MEM_PER_PROCESS', 'lots', /is not an amount of memory/],
    ['RL_SLURM_PARTITION', 'main; rm -rf /', /is not a Slurm partition name/],
    ['RL_SLURM_CPUS_PER_PROCESS', '0', /is not a whole number from 1/],
  ];
  for (const [key, value, message] of bad) assert.throws(() => placementSettings((k) => (k === key ? value : undefined)), (err: Error) => err instanceof SettingsError && message.test(err.message), key);

  assert.deepEqual(jobResources(SLURM_DEFAULTS, { partition: 'debug', time_limit: '30', cpus_per_process: 1, mem_per_process: '1G' }), { partition: 'debug', timeLimit: '30', cpusPerProcess: 1, memPerProcessMb: 1024 });
  const refusals: [object, RegExp][] = [
    [{ time_limit: 'soon' }, /^slurm.time_limit "soon" is not a Slurm time limit/],
    [{ mem_per_process: '4X' }, /^slurm.mem_per_process "4X" is not an amount of memory/],
    [{ account: '$(id)' }, /^slurm.account "\$\(id\)" is not a Slurm account name/],
  ];
  for (const [options, message] of refusals) assert.throws(() => jobResources(SLURM_DEFAULTS, options), (err: Error) => err instanceof UserError && message.test(err.message));
});

function aRun(): RunRecord {
  const commands = { api: ['/venv/bin/run-api', '--port', '8000'], trainer: ['python', "it's.py"], env: ['python', 'env.py', 'serve'] };
  return initialRecord({
    runId: '0123abcd',
    framework: 'atropos',
    placement: 'slurm',
    selection: { environment: { name: 'gsm8k', file_path: '/envs/gsm8k.py' } },
    names: { wandb_project: 'p', wandb_group: 'g', wandb_run_name: 'n', trainer_wandb_run_name: 't', wandb_run_suffix: 's', wandb_name: 'w', use_wandb: false },
    configPath: '/home/runs/0123abcd/config.yaml',
    logs: { api: '/home/runs/0123abcd/api.log', trainer: '/home/runs/0123abcd/trainer.log', env: '/home/runs/0123abcd/env.log' },
    ports: { api: 8000, inference: 8001 },
    commands,
    cwds: { trainer: '/home/runs/0123abcd/trainer' },
  });
}

test('the job script: one job on one node asking for its steps\' sum, a step per process in start order, every word quoted', () => {
  const script = renderJobScript({ run: aRun(), resources: { ...SLURM_DEFAULTS, account: 'lab' }, runDir: '/home/runs/0123abcd', dir: '/home/runs/0123abcd/slurm', root: '/checkout' });
  const options = script.split('\n').filter((l) => l.startsWith('#SBATCH '));
  assert.deepEqual(options, [
    '#SBATCH --job-name=rl-0123abcd',
    '#SBATCH --output="/home/runs/0123abcd/slurm/batch.out"',
    '#SBATCH --open-mode=append',
    '#SBATCH --chdir="/home/runs/0123abcd"',
    '#SBATCH --nodes=1',
    '#SBATCH --ntasks=1',
    '#SBATCH --cpus-per-task=6',
    '#SBATCH --mem=12288M',
    '#SBATCH --no-requeue',
    '#SBATCH --account=lab',
  ]);
  const steps = script.split('\n').filter((l) => l.startsWith('step '));
  assert.deepEqual(steps, [
    "step 'api' '/home/runs/0123abcd/api.log' '/checkout' '/venv/bin/run-api' '--port' '8000'",
    "step 'trainer' '/home/runs/0123abcd/trainer.log' '/home/runs/0123abcd/trainer' 'python' 'it'\\''s.py'",
    "step 'env' '/home/runs/0123abcd/env.log' '/checkout' 'python' 'env.py' 'serve'",
  ]);
  assert.match(script, /^cpus=2\nmem=4096M$/m);
  assert.throws(() => renderJobScript({ run: aRun(), resources: SLURM_DEFAULTS, runDir: '/home/100%/runs/x', dir: '/d', root: '/r' }), /set RL_HOME to a path without them/);
});

test("a step's start: its keys in a 0600 file first, then the request; a withdrawal wins over the script or loses, never both", () => {
  const dir = tempDir();
  const step = { job_id: '9', name: 'trainer', dir };
  requestStart(step, { TINKER_API_KEY: "k'ey $HOME", 'NOT-A-NAME': 'x' });
  assert.equal(statSync(join(dir, 'trainer.env')).mode & 0o777, 0o600);
  assert.equal(readFileSync(join(dir, 'trainer.env'), 'utf8'), "export TINKER_API_KEY='k'\\''ey $HOME'\n");
  assert.equal(stepEnded(step), undefined);
  assert.equal(withdrawStart(step), true);
  assert.equal(withdrawStart(step), false, 'once');
  assert.equal(stepEnded(step), 'withdrawn');

  const other = { ...step, name: 'env' };
  requestStart(other, {});
  writeFileSync(join(dir, 'env.started'), ''); // the script took it (by renaming .start)
  assert.equal(withdrawStart({ ...other, name: 'api' }), false);
  writeFileSync(join(dir, 'env.exit'), '143\n');
  assert.equal(stepEnded(other), 143);
});

test("the placement's verdict comes before the framework's: the first process it ended, with Slurm's reason", () => {
  const run = aRun();
  assert.equal(placementVerdict(run), undefined);
  run.processes.env!.ended_by = { status: 'failed', reason: 'Slurm ended job 9 at its time limit (TIMEOUT, TimeLimit).' };
  assert.deepEqual(placementVerdict(run), { status: 'failed', error: 'Slurm ended job 9 at its time limit (TIMEOUT, TimeLimit).', error_process: 'env' });
  run.processes.api!.ended_by = { status: 'stopped', reason: 'Slurm job 9 was cancelled outside this server (CANCELLED by 0).' };
  assert.deepEqual(placementVerdict(run), { status: 'stopped', error: 'Slurm job 9 was cancelled outside this server (CANCELLED by 0).' });
});
