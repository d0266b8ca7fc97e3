/**
 * Runs placed on Slurm, against a real single-node cluster (scripts/slurm-cluster.sh, with
 * accounting): a run waits in the queue, then its three processes are steps of one job, as
 * healthy as a local run; a stop leaves no step and no job; a server killed with SIGKILL is
 * followed by one that adopts the run from its job id; a cancel from outside ends it with
 * Slurm's reason; a dry run submits nothing; the doctor finds the cluster, and says when its
 * controller is down. One cluster for the file: its tests run one after the other.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { callTool, connectStdio } from './helpers/client.js';
import { makeFakeInstall } from './helpers/fakeInstall.js';
import { type FullRecord, isAlive, killLeftovers, leftovers, newHome, record, runServer, runServerEnv, TINKER_KEY, waitForRun, waitUntil, type RunServer } from './helpers/runs.js';
import { waitFor } from './helpers/fakeProcesses.js';
import { slurmMissing, startSlurmCluster, type SlurmCluster } from './helpers/slurm.js';

const missing = slurmMissing({ accounting: true });
// Started here, not in a hook: it must outlive every test of the file (it is stopped when the file ends).
const cluster = (missing === undefined ? await startSlurmCluster({ accounting: true }) : undefined) as SlurmCluster;

describe('runs placed on Slurm', { skip: missing }, () => {
  const squeue = async (): Promise<string> => (await cluster.run('squeue', ['-h', '-o', '%i %T'])).trim();
  /** The settings of a server placing runs on the cluster, one CPU and 200 MB per process. */
  const slurmSettings = (): Record<string, string> => ({
    RL_PLACEMENT: 'slurm',
    SLURM_CONF: cluster.vars.SLURM_CONF!,
    RL_SLURM_PARTITION: cluster.vars.SLURM_TEST_PARTITION!,
    RL_SLURM_CPUS_PER_PROCESS: '1',
    RL_SLURM_MEM_PER_PROCESS: '200M',
  });
  /** A server whose test ends with no job of the cluster left (a failed test's too). */
  async function slurmServer(t: TestContext, opts: Parameters<typeof runServer>[1] = {}): Promise<RunServer> {
    t.after(async () => {
      await cluster.run('scancel', ['--me']);
    });
    return runServer(t, { ...opts, env: { ...slurmSettings(), ...opts.env } });
  }
  const steps = async (jobId: string): Promise<string> => cluster.run('sacct', ['-j', jobId, '--parsable2', '--noheader', '--format=JobID,JobName,State']);

  test('a dry run answers the job script and submits nothing', async (t) => {
    const h = await slurmServer(t);
    const answer = await h.call('rl_start_training', { dry_run: true, slurm: { time_limit: '2:00:00', mem_per_process: '1G' } });
    assert.equal(answer.isError, false, JSON.stringify(answer.json));
    assert.equal(answer.json.status, 'dry_run');
    assert.equal(answer.json.submitted, false);
    assert.equal(answer.json.placement, 'slurm');
    const script: string = answer.json.script;
    for (const line of ['#SBATCH --time=2:00:00', '#SBATCH --mem=3072M', '#SBATCH --cpus-per-task=3', '#SBATCH --no-requeue', `#SBATCH --partition=${cluster.vars.SLURM_TEST_PARTITION}`]) {
      assert.ok(script.split('\n').includes(line), `${line} in:\n${script}`);
    }
    assert.deepEqual([...script.matchAll(/^step '(\w+)'/gm)].map((m) => m[1]), ['api', 'trainer', 'env'], 'one step per process, in start order');
    assert.ok(!script.includes(TINKER_KEY), 'no key in the script');
    assert.equal(await squeue(), '', 'no job was submitted');
    assert.equal(existsSync(join(h.home, 'runs', answer.json.run_id)), false, 'nothing was written');
  });

  test('a run waits in the queue, then runs as steps of one job and completes, healthy as a local run', async (t) => {
    const h = await slurmServer(t, { lockedEnv: { total_steps: 4 } });
    h.install.trainerControl({ step_seconds: 0.5 });
    // A job holding every CPU of the node keeps the run's job pending.
    const blocker = (await cluster.run('sbatch', ['--parsable', '-c', '16', '--mem=100M', '-o', '/dev/null', '--wrap', 'sleep 300'])).trim();
    await waitFor('the blocker runs', async () => (await squeue()) === `${blocker} RUNNING`);
    const started = await h.call('rl_start_training');
    assert.equal(started.isError, false, JSON.stringify(started.json));
    const id: string = started.json.run_id;
    assert.equal(started.json.placement, 'slurm');
    const queued = await waitForRun(h, id, 'is queued behind the blocker', (r) => r.queued !== undefined && !r.queued.reason.includes(': None'), 60);
    assert.equal(queued.status, 'starting');
    assert.equal(queued.phase, 'queued');
    const pending = await h.call('rl_check_status', { run_id: id });
    assert.equal(pending.json.slurm_job_id, queued.slurm_job_id);
    assert.deepEqual([pending.json.status, pending.json.health.verdict, pending.json.health.reasons[0].code], ['starting', 'starting', 'queued']);
    assert.match(pending.json.health.reasons[0].message, new RegExp(`Slurm job ${queued.slurm_job_id} is pending: (Resources|Priority)`));
    await cluster.run('scancel', [blocker]);

    const seen: string[] = [];
    const ended = await waitUntil('the run ends', () => {
      const r = record(h, id);
      if (seen.at(-1) !== r.status) seen.push(r.status);
      return r.status !== 'starting' && r.status !== 'running' && r.status !== 'stopping' && Object.values(r.processes).every((p) => p.state === 'exited') ? r : undefined;
    }, 180);
    assert.equal(ended.status, 'completed', `${ended.error}\n${readFileSync(ended.logs.trainer, 'utf8')}`);
    assert.deepEqual(seen, ['starting', 'running', 'completed']);
    const jobId = ended.slurm_job_id!;
    for (const name of ['api', 'trainer', 'env'] as const) assert.deepEqual(ended.processes[name].slurm_step?.job_id, jobId, `the ${name} is a step of the run's job`);
    assert.equal(ended.processes.trainer.exit_code, 0, 'the step\'s exit code is known');
    // sacct lags squeue a little.
    const rows = await waitFor("sacct has the job's three steps", async () => {
      const out = await steps(jobId);
      return (out.match(/^\d+\.\d+\|/gm) ?? []).length >= 3 && out;
    });
    assert.match(rows, new RegExp(`^${jobId}\\.0\\|api\\|`, 'm'));
    assert.match(rows, new RegExp(`^${jobId}\\.1\\|trainer\\|COMPLETED$`, 'm'));
    assert.match(rows, new RegExp(`^${jobId}\\.2\\|env\\|`, 'm'));

    const status = await h.call('rl_check_status', { run_id: id });
    assert.deepEqual([status.json.status, status.json.placement, status.json.slurm_job_id], ['completed', 'slurm', jobId]);
    assert.deepEqual([status.json.health.verdict, status.json.health.last_step], ['completed', 4]);
    assert.deepEqual(status.json.progress, { step: 4, total_steps: 4 });
    assert.match(status.json.weights, /step_4$/);
    assert.equal(await squeue(), '', 'no job is left');
    assert.deepEqual(readdirSync(join(h.home, 'runs', id, 'slurm')).filter((f) => f.endsWith('.env')), [], 'every key file was read and removed');
    assert.ok(!readFileSync(join(h.home, 'runs', id, 'slurm', 'job.sh'), 'utf8').includes(TINKER_KEY));
  });

  /** A run that trains until it is stopped: running, with its three steps. */
  async function longRun(h: RunServer): Promise<FullRecord> {
    h.install.trainerControl({ step_seconds: 1 });
    const started = await h.call('rl_start_training');
    assert.equal(started.isError, false, JSON.stringify(started.json));
    return waitForRun(h, started.json.run_id, 'is running', (r) => r.status === 'running', 120);
  }

  test('rl_stop_training stops the steps env, trainer, API in turn, then the job: no step, no job, no process left', async (t) => {
    const h = await slurmServer(t, { lockedEnv: { total_steps: 500 } });
    const running = await longRun(h);
    const jobId = running.slurm_job_id!;
    assert.match(await cluster.run('squeue', ['-h', '-s', '-j', jobId, '-o', '%j']), /api\ntrainer\nenv|api[\s\S]*trainer[\s\S]*env/);
    const stop = await h.call('rl_stop_training', { run_id: running.run_id });
    assert.deepEqual(stop.json, { message: `Stopped training run '${running.run_id}'`, run_id: running.run_id, status: 'stopped' });
    const stopped = record(h, running.run_id);
    const endedAt = (name: 'api' | 'trainer' | 'env'): number => Date.parse(stopped.processes[name].ended_at!);
    assert.ok(endedAt('env') <= endedAt('trainer') && endedAt('trainer') <= endedAt('api'), 'env, then trainer, then API');
    assert.equal(await squeue(), '', 'no job left in the queue');
    assert.equal((await cluster.run('squeue', ['-h', '-s', '-o', '%i'])).trim(), '', 'no step left');
    const rows = await waitFor('sacct has the steps\' ends', async () => {
      const out = await steps(jobId);
      return !/RUNNING/.test(out) && (out.match(/^\d+\.\d+\|/gm) ?? []).length >= 3 && out;
    });
    assert.match(rows, new RegExp(`^${jobId}\\.\\d\\|trainer\\|CANCELLED`, 'm'), 'the trainer got TERM');
    assert.deepEqual(leftovers([h.install.root, h.home]), []);
  });

  test('a job cancelled from outside the server ends its run stopped, with Slurm\'s reason', async (t) => {
    const h = await slurmServer(t, { lockedEnv: { total_steps: 500 } });
    const running = await longRun(h);
    await cluster.run('scancel', [running.slurm_job_id!]);
    const ended = await waitForRun(h, running.run_id, 'ended', (r) => r.status !== 'running' && r.status !== 'stopping', 60);
    assert.equal(ended.status, 'stopped');
    assert.match(ended.error!, new RegExp(`Slurm job ${running.slurm_job_id} was cancelled outside this server \\(CANCELLED`));
    const status = await h.call('rl_check_status', { run_id: running.run_id });
    assert.deepEqual([status.json.status, status.json.health.verdict], ['stopped', 'stopped']);
    assert.match(status.json.health.reasons[0].message, /cancelled outside this server/);
    await waitUntil('the run let go of its processes', () => Object.values(record(h, running.run_id).processes).every((p) => p.state === 'exited'));
    assert.equal(await squeue(), '');
  });

  test('a server killed with SIGKILL while its Slurm run trains: the next server adopts the run by its job id and stops it', async (t) => {
    t.after(async () => {
      await cluster.run('scancel', ['--me']);
    });
    const install = await makeFakeInstall();
    install.trainerControl({ step_seconds: 1 });
    const home = newHome();
    const env = await runServerEnv(install, home, { lockedEnv: { total_steps: 500 }, env: slurmSettings() });
    const server = await connectStdio(env);
    t.after(async () => {
      await server.close();
      await killLeftovers([install.root, home]);
    });
    assert.equal((await callTool(server.client, 'rl_select_environment', { name: 'gsm8k' })).isError, false);
    const started = await callTool(server.client, 'rl_start_training');
    assert.equal(started.isError, false, JSON.stringify(started.json));
    const id: string = started.json.run_id;
    const runJson = (): FullRecord => JSON.parse(readFileSync(join(home, 'runs', id, 'run.json'), 'utf8')) as FullRecord;
    await waitUntil('the run is running', () => runJson().status === 'running', 120);
    const serverPid = server.transport.pid!;
    process.kill(serverPid, 'SIGKILL');
    await waitUntil('the server is dead', () => !isAlive(serverPid));
    const jobId = runJson().slurm_job_id!;
    assert.match(await squeue(), new RegExp(`^${jobId} RUNNING$`), 'the job outlived the server');

    const h = await runServer(t, { install, home, select: false, env: slurmSettings() });
    assert.ok(h.runtime.runs.supervises(id), 'the new server supervises the run');
    const status = await h.call('rl_check_status', { run_id: id });
    assert.deepEqual([status.json.status, status.json.slurm_job_id], ['running', jobId]);
    for (const p of ['api', 'trainer', 'env']) assert.equal(status.json.processes[p].state, 'running');
    const updates = (): number => (readFileSync(runJson().logs.trainer, 'utf8').match(/Sampling client updated/g) ?? []).length;
    const before = updates();
    await waitUntil('the trainer makes progress', () => updates() > before, 60);
    const stop = await h.call('rl_stop_training', { run_id: id });
    assert.equal(stop.json.status, 'stopped', JSON.stringify(stop.json));
    assert.equal(await squeue(), '');
    assert.deepEqual(leftovers([install.root, home]), []);
  });

  test('the doctor finds Slurm ready, then names the controller that is down', async (t) => {
    const h = await runServer(t, { select: false, env: slurmSettings() });
    type Check = { check: string; ok: boolean; detail: string; fix?: string };
    const checks = async (): Promise<Record<string, Check>> => Object.fromEntries(((await h.call('rl_doctor')).json.checks as Check[]).map((c) => [c.check, c]));
    const up = await checks();
    for (const name of ['slurm commands', 'slurm controller', 'slurm partition', 'slurm accounting', 'RL_HOME shared']) assert.equal(up[name]?.ok, true, `${name}: ${JSON.stringify(up[name])}`);
    assert.match(up['RL_HOME shared']!.detail, /sees/);
    assert.equal(up['api port'], undefined, 'this host\'s ports are not a Slurm run\'s');

    await cluster.stop();
    const down = await checks();
    assert.equal(down['slurm controller']!.ok, false);
    assert.match(down['slurm controller']!.detail, /DOWN/);
    assert.match(down['slurm controller']!.fix!, /controller does not answer.*SLURM_CONF/);
    assert.equal(down['slurm partition']!.ok, false);
    const start = await h.call('rl_start_training', { environment: 'gsm8k' });
    assert.equal(start.isError, true);
    assert.match(start.json.error, /controller does not answer/);
  });
});
