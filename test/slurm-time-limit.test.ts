/**
 * A Slurm run's job killed by its time limit (a start's own `slurm.time_limit`) ends the run
 * failed with Slurm's reason. Slurm checks limits every 30 s, so this takes over a minute: a file
 * of its own, which the suite's other worker overlaps with other files. Meanwhile, the limits per
 * placement: RL_MAX_SLURM_RUNS counts Slurm runs, RL_MAX_CONCURRENT_RUNS only this host's.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { record, runServer, waitForRun } from './helpers/runs.js';
import { clusterForTests, slurmTestsCannotRun, type SlurmCluster } from './helpers/slurm.js';

const missing = slurmTestsCannotRun();
const cluster = (missing === undefined ? await clusterForTests() : undefined) as SlurmCluster;

test('a job killed by its time limit fails its run with Slurm\'s reason; the limits count runs per placement', { skip: missing }, async (t) => {
  const h = await runServer(t, {
    lockedEnv: { total_steps: 500 },
    env: { SLURM_CONF: cluster.vars.SLURM_CONF, RL_SLURM_PARTITION: cluster.vars.SLURM_TEST_PARTITION, RL_SLURM_CPUS_PER_PROCESS: '1', RL_SLURM_MEM_PER_PROCESS: '200M', RL_MAX_SLURM_RUNS: '1', RL_MAX_CONCURRENT_RUNS: '1' },
  });
  h.install.trainerControl({ step_seconds: 1 });
  const started = await h.call('rl_start_training', { placement: 'slurm', slurm: { time_limit: '1' } });
  assert.equal(started.isError, false, JSON.stringify(started.json));
  const id: string = started.json.run_id;
  assert.match(started.json.script, /^#SBATCH --time=1$/m);
  t.after(async () => {
    const jobId = record(h, id).slurm_job_id;
    if (jobId !== undefined) await cluster.run('scancel', [jobId]);
  });
  const running = await waitForRun(h, id, 'is running', (r) => r.status === 'running', 120);

  const second = await h.call('rl_start_training', { placement: 'slurm' });
  assert.equal(second.isError, true);
  assert.equal(second.json.error.split(':')[0], '1 runs are active on Slurm, the most RL_MAX_SLURM_RUNS (1) allows');
  assert.deepEqual(second.json.active_runs, [id]);
  const local = await h.call('rl_start_training', { dry_run: true });
  assert.equal(local.isError, false, `a Slurm run does not count against RL_MAX_CONCURRENT_RUNS: ${JSON.stringify(local.json)}`);
  assert.deepEqual([local.json.placement, local.json.status, local.json.script], ['local', 'dry_run', undefined]);

  const ended = await waitForRun(h, id, 'ended', (r) => r.status !== 'running' && r.status !== 'stopping', 180);
  assert.equal(ended.status, 'failed');
  assert.match(ended.error!, new RegExp(`^Slurm ended job ${running.slurm_job_id} at its time limit \\(TIMEOUT, TimeLimit\\)`));
  await waitForRun(h, id, 'let go of its processes', (r) => Object.values(r.processes).every((p) => p.state === 'exited'));
  assert.doesNotMatch(await cluster.run('squeue', ['-h', '-o', '%i']), new RegExp(`^${running.slurm_job_id}$`, 'm'), 'the job is gone');
  const status = await h.call('rl_check_status', { run_id: id });
  assert.deepEqual([status.json.status, status.json.health.verdict], ['failed', 'failed']);
  assert.match(status.json.log_tail, /DUE TO TIME LIMIT/, "the failed step's log tail shows Slurm's own line");
});
