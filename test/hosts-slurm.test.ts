/**
 * A Slurm run's processes are its job's steps, which any host with Slurm's commands reaches: when
 * the host whose server and keeper kept the run goes away (its namespace ended: test/helpers/hosts.ts),
 * of the servers on two other hosts exactly one takes the job over once the keeper's lease expired,
 * within the lease plus 10 s; never two keepers at once (every host's process table, and the lock's
 * history, show it); the run ends with its true record. For an Atropos run and a cookbook run,
 * against a real single-node cluster (scripts/slurm-cluster.sh).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { LEASE } from '../src/core/os/lease.js';
import { callTool } from './helpers/client.js';
import { makeFakeInstall } from './helpers/fakeInstall.js';
import { hostsMissing, keeperHistory, keepersOf, startHost } from './helpers/hosts.js';
import { type FullRecord, killLeftovers, newHome, runServerEnv, runsTinker, waitUntil } from './helpers/runs.js';
import { clusterForTests, slurmTestsCannotRun, type SlurmCluster } from './helpers/slurm.js';

const missing = slurmTestsCannotRun() ?? hostsMissing();
const cluster = (missing === undefined ? await clusterForTests() : undefined) as SlurmCluster;

for (const framework of ['atropos', 'cookbook'] as const) {
  test(`${framework}: a Slurm run's host goes away: of two servers on two other hosts, one takes its job over within the lease plus 10 s, never two keepers, and the run completes`, { skip: missing }, async (t) => {
    const tinker = runsTinker();
    const install = await makeFakeInstall(framework === 'cookbook' ? { cookbook: true, tinkerState: tinker.dir } : {});
    if (framework === 'cookbook') install.cookbookControl({ step_seconds: 1 });
    else install.trainerControl({ step_seconds: 1 });
    const home = newHome();
    const env = await runServerEnv(install, home, {
      tinker,
      lockedEnv: { total_steps: 30 },
      env: { RL_PLACEMENT: 'slurm', SLURM_CONF: cluster.vars.SLURM_CONF!, ...(cluster.vars.SLURM_TEST_PARTITION ? { RL_SLURM_PARTITION: cluster.vars.SLURM_TEST_PARTITION } : {}), RL_SLURM_CPUS_PER_PROCESS: '1', RL_SLURM_MEM_PER_PROCESS: '200M' },
    });
    const read = (id: string): FullRecord => JSON.parse(readFileSync(join(home, 'runs', id, 'run.json'), 'utf8')) as FullRecord;
    const [a, b, c] = [await startHost(t, 'host-a'), await startHost(t, 'host-b'), await startHost(t, 'host-c')];
    let id = '';
    t.after(async () => {
      const job = id ? read(id).slurm_job_id : undefined;
      if (job) await cluster.run('scancel', [job]).catch(() => undefined);
      await killLeftovers([install.root, home]);
    });
    const serverA = await a.connect(env);
    assert.equal((await callTool(serverA.client, 'rl_select_environment', { name: framework === 'cookbook' ? 'math_rl' : 'gsm8k' })).isError, false);
    const config = framework === 'cookbook' ? { config: { model_name: 'Qwen/Qwen3-8B', groups_per_batch: 2, group_size: 2, save_every: 1 } } : {};
    const started = await callTool(serverA.client, 'rl_start_training', config);
    assert.equal(started.isError, false, JSON.stringify(started.json));
    id = started.json.run_id as string;
    await waitUntil('the run is running', () => read(id).status === 'running', 120, () => JSON.stringify(read(id)));
    // Two servers, on two other hosts, both look at the registry every 2 s: only one may win the run.
    const others = [await b.connect(env), await c.connect(env)];
    for (const server of others) assert.equal((await callTool(server.client, 'rl_check_status', { run_id: id })).json.where.keeper.state, 'lease_fresh', "A's live keeper is left alone");
    const [keeperA] = keepersOf(id);
    assert.ok(keeperA !== undefined && a.holds(keeperA));

    await a.end();
    const endedAt = Date.now();
    // Sampled every 100 ms until a keeper on B or C holds the run: never two keepers in any host.
    const taker = await waitUntil('a keeper on host B or C keeps the run', () => {
      const keepers = keepersOf(id);
      assert.ok(keepers.length <= 1, `two keepers at once: ${keepers.join(', ')}`);
      return keepers.length === 1 && (b.holds(keepers[0]!) || c.holds(keepers[0]!)) ? keepers[0] : undefined;
    }, (LEASE.durationMs + LEASE.graceMs) / 1000 + 10);
    const tookSeconds = (Date.now() - endedAt) / 1000;
    const took = keeperHistory(home, id).filter((line) => line.event === 'acquired' && line.host !== 'host-a');
    assert.equal(took.length, 1, `one taking over, by one host: ${JSON.stringify(keeperHistory(home, id))}`);
    assert.equal(took[0]!.detail?.verdict, 'expired');
    assert.ok((took[0]!.detail?.lease_age_ms as number) > LEASE.durationMs + LEASE.graceMs, "taken only once A's lease had expired");

    const ended = await waitUntil('the run ends', () => { const r = read(id); return r.status === 'completed' || r.status === 'failed' ? r : undefined; }, 120, () => JSON.stringify(read(id)));
    assert.equal(ended.status, 'completed', ended.error);
    assert.equal(ended.observed?.steps_completed, 30);
    await waitUntil(`the keeper ${taker} exits once the run ended`, () => keepersOf(id).length === 0, 30);
    assert.equal(keeperHistory(home, id).filter((line) => line.event === 'acquired' && line.host !== 'host-a').length, 1, 'and no other taking after it');
    assert.equal((await cluster.run('squeue', ['-h', '-j', ended.slurm_job_id!]).catch(() => '')).trim(), '', 'its job is gone');
    t.diagnostic(`taken over by ${took[0]!.host} ${tookSeconds.toFixed(1)} s after host A went away`);
  });
}
