/**
 * Runs placed on Slurm, against a real single-node cluster (scripts/slurm-cluster.sh, with
 * accounting): a run waits in the queue, then its three processes are steps of one job, as
 * healthy as a local run; a stop leaves no step and no job; a run whose server and keeper are
 * killed with SIGKILL is taken over from its job id by a new keeper; a cancel from outside ends it with
 * Slurm's reason; a dry run submits nothing; the doctor finds the cluster, and says when its
 * controller is down. One cluster for the file (or one's own: test/helpers/slurm.ts); its tests
 * run one after the other, and touch no job but their runs'.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test, type TestContext } from 'node:test';
import { callTool, connectInMemory, connectStdio, type InMemoryHarness } from './helpers/client.js';
import { makeFakeInstall } from './helpers/fakeInstall.js';
import { type FullRecord, isAlive, killLeftovers, leftovers, newHome, record, runServer, runServerEnv, TINKER_KEY, waitForRun, waitUntil } from './helpers/runs.js';
import { waitFor } from './helpers/fakeProcesses.js';
import { clusterForTests, slurmTestsCannotRun, type SlurmCluster } from './helpers/slurm.js';

const missing = slurmTestsCannotRun({ accounting: true });
// Started here, not in a hook: it must outlive every test of the file (it is stopped when the file ends).
const cluster = (missing === undefined ? await clusterForTests({ accounting: true }) : undefined) as SlurmCluster;
const accounting = cluster?.vars.SLURM_TEST_ACCOUNTING === '1';
const partition = cluster?.vars.SLURM_TEST_PARTITION;
/** The settings of a server placing runs on the cluster, one CPU and 200 MB per process; total_steps is each start's own. */
const slurmSettings = (): Record<string, string> => ({
  RL_PLACEMENT: 'slurm',
  SLURM_CONF: cluster.vars.SLURM_CONF!,
  ...(partition !== undefined ? { RL_SLURM_PARTITION: partition } : {}),
  RL_SLURM_CPUS_PER_PROCESS: '1',
  RL_SLURM_MEM_PER_PROCESS: '200M',
});
const UNLOCKED_STEPS = { config: { unlocked: ['total_steps'] } };
// One install and one server for the file's tests (the SIGKILL test starts servers of its own).
const install = missing === undefined ? await makeFakeInstall() : undefined;
async function sharedServer(): Promise<InMemoryHarness & { home: string }> {
  const home = newHome();
  const h = await connectInMemory(await runServerEnv(install!, home, { ...UNLOCKED_STEPS, env: slurmSettings() }));
  assert.equal((await h.call('rl_select_environment', { name: 'gsm8k' })).isError, false);
  return { ...h, home };
}
const h = (missing === undefined ? await sharedServer() : undefined)!;

/** The jobs of the runs under `home` (what a test may cancel: a cluster of one's own runs others' jobs too). */
function jobsOf(home: string): string[] {
  const runs = join(home, 'runs');
  if (!existsSync(runs)) return [];
  return readdirSync(runs).flatMap((id) => {
    try {
      const jobId = (JSON.parse(readFileSync(join(runs, id, 'run.json'), 'utf8')) as { slurm_job_id?: string }).slurm_job_id;
      return jobId === undefined ? [] : [jobId];
    } catch {
      return [];
    }
  });
}

describe('runs placed on Slurm', { skip: missing }, () => {
  /** Which of `jobIds` are still in the queue (pending, running or completing), as `<id> <state>` lines. */
  const queued = async (...jobIds: string[]): Promise<string> =>
    (await cluster.run('squeue', ['-h', '-o', '%i %T']))
      .split('\n')
      .filter((line) => jobIds.includes(line.split(' ')[0]!))
      .join('\n');
  /** When a test ends (failed or not), its runs' jobs go. */
  const cancelJobsAfter = (t: TestContext, home: string): void =>
    t.after(async () => {
      const jobs = jobsOf(home);
      if (jobs.length > 0) await cluster.run('scancel', jobs);
    });
  after(async () => {
    await h.close();
    await killLeftovers([install!.root, h.home]);
  });
  /** Starts a run on the shared server; its job goes when the test ends. */
  async function start(t: TestContext, args: Record<string, unknown>): Promise<string> {
    cancelJobsAfter(t, h.home);
    const started = await h.call('rl_start_training', args);
    assert.equal(started.isError, false, JSON.stringify(started.json));
    return started.json.run_id as string;
  }
  const steps = async (jobId: string): Promise<string> => cluster.run('sacct', ['-j', jobId, '--parsable2', '--noheader', '--format=JobID,JobName,State']);

  test('a dry run answers the job script and submits nothing', async () => {
    const answer = await h.call('rl_start_training', { dry_run: true, slurm: { time_limit: '2:00:00', mem_per_process: '1G' } });
    assert.equal(answer.isError, false, JSON.stringify(answer.json));
    assert.equal(answer.json.status, 'dry_run');
    assert.equal(answer.json.submitted, false);
    assert.equal(answer.json.placement, 'slurm');
    const script: string = answer.json.script;
    for (const line of ['#SBATCH --time=2:00:00', '#SBATCH --mem=3072M', '#SBATCH --cpus-per-task=3', '#SBATCH --no-requeue', ...(partition ? [`#SBATCH --partition=${partition}`] : [])]) {
      assert.ok(script.split('\n').includes(line), `${line} in:\n${script}`);
    }
    assert.deepEqual([...script.matchAll(/^step '(\w+)'/gm)].map((m) => m[1]), ['api', 'trainer', 'env'], 'one step per process, in start order');
    assert.ok(!script.includes(TINKER_KEY), 'no key in the script');
    assert.equal(await cluster.run('squeue', ['-h', '--me', '-n', `rl-${answer.json.run_id}`]), '', 'no job was submitted');
    assert.equal(existsSync(join(h.home, 'runs', answer.json.run_id)), false, 'nothing was written');
  });

  test('a run waits in the queue, then runs as steps of one job and completes, healthy as a local run', async (t) => {
    install!.trainerControl({ step_seconds: 0.5 });
    // No time limit is over the partition's (a finite MaxTime): the job pends until its limit is lowered.
    const id = await start(t, { config: { total_steps: 4 }, slurm: { time_limit: 'UNLIMITED' } });
    const waiting = await waitForRun(h, id, 'is queued', (r) => r.queued?.reason.includes('PartitionTimeLimit') === true, 60);
    assert.deepEqual([waiting.status, waiting.phase], ['starting', 'queued']);
    const pending = await h.call('rl_check_status', { run_id: id });
    assert.equal(pending.json.slurm_job_id, waiting.slurm_job_id);
    assert.deepEqual([pending.json.status, pending.json.phase, pending.json.health.verdict, pending.json.health.reasons[0].code], ['starting', 'queued', 'starting', 'queued']);
    assert.match(pending.json.health.reasons[0].message, new RegExp(`^Queued: Slurm job ${waiting.slurm_job_id} is pending: PartitionTimeLimit \\(its time limit is over the partition's: lower RL_SLURM_TIME_LIMIT`));
    await cluster.run('scontrol', ['update', `JobId=${waiting.slurm_job_id}`, 'TimeLimit=30']);

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
    if (accounting) {
      // sacct lags squeue a little.
      const rows = await waitFor("sacct has the job's three steps", async () => {
        const out = await steps(jobId);
        return (out.match(/^\d+\.\d+\|/gm) ?? []).length >= 3 && out;
      });
      assert.match(rows, new RegExp(`^${jobId}\\.0\\|api\\|`, 'm'));
      assert.match(rows, new RegExp(`^${jobId}\\.1\\|trainer\\|COMPLETED$`, 'm'));
      assert.match(rows, new RegExp(`^${jobId}\\.2\\|env\\|`, 'm'));
    }

    const status = await h.call('rl_check_status', { run_id: id });
    assert.deepEqual([status.json.status, status.json.placement, status.json.slurm_job_id], ['completed', 'slurm', jobId]);
    const listed = (await h.call('rl_list_runs')).json.runs.find((r: { run_id: string }) => r.run_id === id);
    assert.equal(listed.placement, 'slurm', 'the listing says where the run ran');
    assert.deepEqual([status.json.health.verdict, status.json.health.last_step], ['completed', 4]);
    assert.deepEqual(status.json.progress, { step: 4, total_steps: 4 });
    assert.match(status.json.weights, /step_4$/);
    assert.equal(await queued(jobId), '', 'the job is gone');
    assert.deepEqual(readdirSync(join(h.home, 'runs', id, 'slurm')).filter((f) => f.endsWith('.env')), [], 'every key file was read and removed');
    assert.ok(!readFileSync(join(h.home, 'runs', id, 'slurm', 'job.sh'), 'utf8').includes(TINKER_KEY));
  });

  /** A run that trains until it is stopped: running, with its three steps. */
  async function longRun(t: TestContext): Promise<FullRecord> {
    install!.trainerControl({ step_seconds: 1 });
    const id = await start(t, { config: { total_steps: 500 } });
    return waitForRun(h, id, 'is running', (r) => r.status === 'running', 120);
  }

  test('rl_stop_training stops the steps env, trainer, API in turn, then the job: no step, no job, no process left', async (t) => {
    const running = await longRun(t);
    const jobId = running.slurm_job_id!;
    assert.match(await cluster.run('squeue', ['-h', '-s', '-j', jobId, '-o', '%j']), /api\ntrainer\nenv|api[\s\S]*trainer[\s\S]*env/);
    const stop = await h.call('rl_stop_training', { run_id: running.run_id });
    assert.deepEqual(stop.json, { message: `Stopped training run '${running.run_id}'`, run_id: running.run_id, status: 'stopped' });
    const stopped = record(h, running.run_id);
    const endedAt = (name: 'api' | 'trainer' | 'env'): number => Date.parse(stopped.processes[name].ended_at!);
    assert.ok(endedAt('env') <= endedAt('trainer') && endedAt('trainer') <= endedAt('api'), 'env, then trainer, then API');
    assert.equal(await queued(jobId), '', 'the job is gone');
    assert.equal((await cluster.run('squeue', ['-h', '-s', '-o', '%i'])).split('\n').filter((step) => step.startsWith(`${jobId}.`)).join(), '', 'no step left');
    if (accounting) {
      const rows = await waitFor("sacct has the steps' ends", async () => {
        const out = await steps(jobId);
        return !/RUNNING/.test(out) && (out.match(/^\d+\.\d+\|/gm) ?? []).length >= 3 && out;
      });
      assert.match(rows, new RegExp(`^${jobId}\\.\\d\\|trainer\\|CANCELLED`, 'm'), 'the trainer got TERM');
    }
    assert.deepEqual(leftovers([install!.root, h.home]), []);
  });

  test('a job cancelled from outside the server ends its run stopped, with Slurm\'s reason', async (t) => {
    const running = await longRun(t);
    await cluster.run('scancel', [running.slurm_job_id!]);
    const ended = await waitForRun(h, running.run_id, 'ended', (r) => r.status !== 'running' && r.status !== 'stopping', 60);
    assert.equal(ended.status, 'stopped');
    assert.match(ended.error!, new RegExp(`Slurm job ${running.slurm_job_id} was cancelled outside this server \\(CANCELLED`));
    const status = await h.call('rl_check_status', { run_id: running.run_id });
    assert.deepEqual([status.json.status, status.json.health.verdict], ['stopped', 'stopped']);
    assert.match(status.json.health.reasons[0].message, /cancelled outside this server/);
    await waitUntil('the run let go of its processes', () => Object.values(record(h, running.run_id).processes).every((p) => p.state === 'exited'));
    assert.equal(await queued(running.slurm_job_id!), '');
  });

  test('with no server alive, Slurm runs are kept by their keepers: one trains to the end and completes, one starves and stops on its stall; their jobs go', async (t) => {
    install!.trainerControl({ step_seconds: 0.5 });
    install!.envControl(null);
    t.after(() => install!.envControl(null));
    const home = newHome();
    cancelJobsAfter(t, home);
    const env = await runServerEnv(install!, home, { ...UNLOCKED_STEPS, env: { ...slurmSettings(), RL_STALL_SECONDS: '3', RL_STALL_ACTION: 'stop', RL_STOP_GRACE_SECONDS: '2' } });
    const server = await connectStdio(env);
    t.after(async () => {
      await server.close();
      await killLeftovers([install!.root, home]);
    });
    const runJson = (id: string): FullRecord => JSON.parse(readFileSync(join(home, 'runs', id, 'run.json'), 'utf8')) as FullRecord;
    assert.equal((await callTool(server.client, 'rl_select_environment', { name: 'gsm8k' })).isError, false);
    const startOne = async (totalSteps: number): Promise<string> => {
      const started = await callTool(server.client, 'rl_start_training', { config: { total_steps: totalSteps } });
      assert.equal(started.isError, false, JSON.stringify(started.json));
      const id: string = started.json.run_id;
      await waitUntil(`run ${id} is running`, () => runJson(id).status === 'running', 120, () => JSON.stringify(runJson(id)));
      return id;
    };
    const completing = await startOne(8);
    // The next run's environment registers and exits without a group: its trainer waits for data for ever.
    install!.envControl({ exit_after_register: true, exit_code: 0 });
    const starving = await startOne(500);
    const serverPid = server.transport.pid!;
    process.kill(serverPid, 'SIGKILL');
    await waitUntil('the server is dead', () => !isAlive(serverPid));

    const keepersGone = (id: string): boolean => leftovers([join(home, 'runs', id)]).length === 0;
    const done = await waitUntil('the run completes with no server', () => (runJson(completing).status === 'completed' && keepersGone(completing) ? runJson(completing) : undefined), 120, () => JSON.stringify(runJson(completing)));
    assert.equal(done.observed?.steps_completed, 8);
    const stalled = await waitUntil('the starved run stops on its stall', () => (runJson(starving).status === 'failed' && keepersGone(starving) ? runJson(starving) : undefined), 120, () => JSON.stringify(runJson(starving)));
    assert.match(stalled.error!, /^Stalled/);
    assert.equal(await queued(done.slurm_job_id!, stalled.slurm_job_id!), '', 'both jobs are gone');
    assert.deepEqual(leftovers([install!.root, home]), []);
  });

  test('a server and then the keeper killed with SIGKILL while its Slurm run trains: the next server starts a keeper that takes the run over by its job id, and stops it', async (t) => {
    install!.trainerControl({ step_seconds: 1 });
    const home = newHome();
    cancelJobsAfter(t, home);
    const env = await runServerEnv(install!, home, { lockedEnv: { total_steps: 500 }, env: slurmSettings() });
    const server = await connectStdio(env);
    t.after(async () => {
      await server.close();
      await killLeftovers([install!.root, home]);
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
    assert.equal(await queued(jobId), `${jobId} RUNNING`, 'the job outlived the server');

    const next = await runServer(t, { install, home, select: false, env: slurmSettings() });
    // The run's keeper outlived the server; killed too, the next call starts a keeper that takes the job over by its id.
    const keeper = next.runtime.runs.keeperOf(id);
    assert.ok(keeper !== undefined && isAlive(keeper), 'the keeper outlived the server');
    process.kill(keeper, 'SIGKILL');
    await waitUntil('the keeper is dead', () => !isAlive(keeper));
    const status = await next.call('rl_check_status', { run_id: id });
    const newKeeper = next.runtime.runs.keeperOf(id);
    assert.ok(newKeeper !== undefined && newKeeper !== keeper, 'a new keeper keeps the run');
    assert.deepEqual([status.json.status, status.json.slurm_job_id], ['running', jobId]);
    for (const p of ['api', 'trainer', 'env']) assert.equal(status.json.processes[p].state, 'running');
    const updates = (): number => (readFileSync(runJson().logs.trainer, 'utf8').match(/Sampling client updated/g) ?? []).length;
    const before = updates();
    await waitUntil('the trainer makes progress', () => updates() > before, 60);
    const stop = await next.call('rl_stop_training', { run_id: id });
    assert.equal(stop.json.status, 'stopped', JSON.stringify(stop.json));
    assert.equal(await queued(jobId), '');
    assert.deepEqual(leftovers([install!.root, home]), []);
  });

  test('the doctor finds Slurm ready, then names the controller that is down', async () => {
    type Check = { check: string; ok: boolean; detail: string; fix?: string };
    const checks = async (): Promise<Record<string, Check>> => Object.fromEntries(((await h.call('rl_doctor')).json.checks as Check[]).map((c) => [c.check, c]));
    const up = await checks();
    for (const name of ['slurm commands', 'slurm controller', 'slurm partition', ...(accounting ? ['slurm accounting'] : []), 'RL_HOME shared']) assert.equal(up[name]?.ok, true, `${name}: ${JSON.stringify(up[name])}`);
    assert.match(up['RL_HOME shared']!.detail, /sees/);
    assert.equal(up['api port'], undefined, 'this host\'s ports are not a Slurm run\'s');

    // A cluster of one's own is not ours to stop.
    if (cluster.dir === '') return;
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
