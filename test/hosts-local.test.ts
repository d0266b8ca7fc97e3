/**
 * Two hosts share one RL_HOME (PID and UTS namespaces: test/helpers/hosts.ts), as login nodes
 * share one over NFS. A run started by a server on host A is answered by a server on host B with
 * where it lives and who keeps it, never taken for dead: B cannot see A's processes and leaves
 * them to A's keeper, whose lease says it lives. B's stop reaches that keeper through the run's
 * directory. Once A is gone, B says what is known and that it cannot see the processes. For an
 * Atropos run and a cookbook run.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { callTool } from './helpers/client.js';
import { makeFakeInstall } from './helpers/fakeInstall.js';
import { type Host, hostsMissing, keeperHistory, keepersOf, startHost } from './helpers/hosts.js';
import { type FullRecord, killLeftovers, leftovers, newHome, runServerEnv, runsTinker, waitUntil } from './helpers/runs.js';

const missing = hostsMissing();
type Framework = 'atropos' | 'cookbook';

async function setUp(t: TestContext, framework: Framework) {
  const tinker = runsTinker();
  const install = await makeFakeInstall(framework === 'cookbook' ? { cookbook: true, tinkerState: tinker.dir } : {});
  const home = newHome();
  t.after(() => killLeftovers([install.root, home]));
  if (framework === 'cookbook') install.cookbookControl({ step_seconds: 1 });
  else install.trainerControl({ step_seconds: 1 });
  const env = await runServerEnv(install, home, { tinker, lockedEnv: { total_steps: 500 } });
  const read = (id: string): FullRecord => JSON.parse(readFileSync(join(home, 'runs', id, 'run.json'), 'utf8')) as FullRecord;
  return { install, home, env, read };
}

/** Starts a run from a server on `host`; its id once it runs. */
async function startOn(host: Host, env: Record<string, string>, framework: Framework, read: (id: string) => FullRecord): Promise<string> {
  const server = await host.connect(env);
  assert.equal((await callTool(server.client, 'rl_select_environment', { name: framework === 'cookbook' ? 'math_rl' : 'gsm8k' })).isError, false);
  const config = framework === 'cookbook' ? { config: { model_name: 'Qwen/Qwen3-8B', groups_per_batch: 2, group_size: 2, save_every: 1 } } : {};
  const started = await callTool(server.client, 'rl_start_training', config);
  assert.equal(started.isError, false, JSON.stringify(started.json));
  const id = started.json.run_id as string;
  await waitUntil('the run is running', () => read(id).status === 'running', 90, () => JSON.stringify(read(id)));
  return id;
}

/** The run's processes (as this machine sees them: under its directory) on `host`. */
const runProcessesOn = (host: Host, home: string, id: string): number[] => leftovers([join(home, 'runs', id)]).filter((pid) => host.holds(pid));

for (const framework of ['atropos', 'cookbook'] as const) {
  test(`${framework}: a run of host A is answered from host B as running there, left to its keeper for 30 s, and stopped from B`, { skip: missing }, async (t) => {
    const s = await setUp(t, framework);
    const [a, b] = [await startHost(t, 'host-a'), await startHost(t, 'host-b')];
    const id = await startOn(a, s.env, framework, s.read);
    const onA = runProcessesOn(a, s.home, id);
    const serverB = await b.connect(s.env);

    const listed = (await callTool(serverB.client, 'rl_list_runs')).json.runs.find((r: { run_id: string }) => r.run_id === id);
    assert.deepEqual([listed.status, listed.host, listed.keeper], ['running', 'host-a', 'lease_fresh']);
    const status = await callTool(serverB.client, 'rl_check_status', { run_id: id });
    assert.equal(status.json.status, 'running');
    assert.deepEqual([status.json.where.lives_on, status.json.where.seen_from, status.json.where.keeper.state, status.json.where.keeper.host], ['host-a', 'host-b', 'lease_fresh', 'host-a']);
    assert.match(status.json.where.note, /^This host \(host-b\) cannot see the run's processes: they live on host-a, kept by its keeper there/);

    // B looks at the registry every 2 s and was asked twice: nothing of it may judge A's run.
    await new Promise((resolve) => setTimeout(resolve, 30_000));
    const after30 = s.read(id);
    assert.equal(after30.status, 'running', JSON.stringify(after30));
    for (const pid of onA) assert.ok(runProcessesOn(a, s.home, id).includes(pid), `process ${pid} on host A lives`);
    const keepers = keepersOf(id);
    assert.equal(keepers.length, 1, `one keeper: ${keepers.join(', ')}`);
    assert.ok(a.holds(keepers[0]!), 'on host A');
    assert.equal((await callTool(serverB.client, 'rl_check_status', { run_id: id })).json.where.keeper.state, 'lease_fresh', 'its lease renewed all along');

    const stop = await callTool(serverB.client, 'rl_stop_training', { run_id: id });
    assert.equal(stop.json.status, 'stopped', JSON.stringify(stop.json));
    assert.equal(s.read(id).status, 'stopped');
    await waitUntil("the run's processes and keeper on host A are gone", () => runProcessesOn(a, s.home, id).length === 0, 20);
    const history = keeperHistory(s.home, id);
    assert.ok(history.every((line) => line.host === 'host-a'), `only host A ever held the run: ${JSON.stringify(history)}`);
    assert.equal(history.at(-1)?.event, 'released');
  });
}

test('a local run whose host is gone: another host answers what is known (host, last lease, last step) and that it cannot see the processes, and a stop says what to do', { skip: missing }, async (t) => {
  const s = await setUp(t, 'atropos');
  const [a, b] = [await startHost(t, 'host-a'), await startHost(t, 'host-b')];
  const id = await startOn(a, s.env, 'atropos', s.read);
  await waitUntil('a first step', () => (s.read(id).observed?.steps_completed ?? 0) >= 1, 60);
  await a.end();
  const serverB = await b.connect(s.env);
  let expired = (await callTool(serverB.client, 'rl_check_status', { run_id: id })).json;
  for (const deadline = Date.now() + 40_000; expired.where.keeper.state !== 'lease_expired' && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expired = (await callTool(serverB.client, 'rl_check_status', { run_id: id })).json;
  }
  assert.equal(expired.where.keeper.state, 'lease_expired', JSON.stringify(expired.where));
  assert.equal(expired.status, 'running', 'the last status recorded, never failed from a pid this host cannot see');
  assert.ok(expired.progress.step >= 1, 'the last step recorded');
  assert.match(expired.where.note, /^This host \(host-b\) cannot see the run's processes: they live on host-a, nothing there is known to keep them: its keeper's lease expired \(written [\d.]+ s ago, last renewed at \S+ by that host's clock\)/);
  const stop = await callTool(serverB.client, 'rl_stop_training', { run_id: id });
  assert.equal(stop.json.status, 'running');
  assert.match(stop.json.message, /was not stopped yet: .*The stop is recorded \(stop\.request\) for a keeper or server of host-a\. To end it now, on host-a: kill -TERM -\d+ -\d+ -\d+/);
  assert.equal(s.read(id).status, 'running', 'nothing recorded it ended');
  assert.deepEqual(keepersOf(id), [], 'no keeper anywhere: host B took nothing over');
});
