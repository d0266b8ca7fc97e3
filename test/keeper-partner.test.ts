/**
 * No keeper is the last line: a keeper killed with SIGKILL (as the OOM killer does) while no
 * server is alive anywhere is replaced on its host within 10 s by its partner (a shell blocked on a
 * pipe only the keeper writes: src/runtime/runs/keeper/partner.ts), for one active run and for
 * three; the new keepers take the live processes over and still stop their runs on a stall and on
 * a budget. A keeper that ends by itself takes its partner with it: nothing of ours is left.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { callTool, connectStdio } from './helpers/client.js';
import { makeFakeInstall } from './helpers/fakeInstall.js';
import { hourBucket } from './helpers/fakeTinker.js';
import { keeperHistory, keepersOf } from './helpers/hosts.js';
import { argvOf, type FullRecord, isAlive, killLeftovers, leftovers, newHome, runServerEnv, runsTinker, TINKER_KEY, waitUntil } from './helpers/runs.js';

const PRICES = { 'Qwen/Qwen3-8B': { prefill: 0.001, sample: 0.001, train: 0.001, as_of: '2026-11-20', source: 'test' } };

async function setUp(t: TestContext, env: Record<string, string>, totalSteps = 500) {
  const tinker = runsTinker();
  tinker.addKey(TINKER_KEY, { billingView: true });
  const install = await makeFakeInstall();
  const home = newHome();
  t.after(() => killLeftovers([install.root, home]));
  install.trainerControl({ step_seconds: 0.5 });
  const serverEnv = await runServerEnv(install, home, { tinker, lockedEnv: { total_steps: totalSteps }, config: { prices: PRICES }, env });
  const read = (id: string): FullRecord => JSON.parse(readFileSync(join(home, 'runs', id, 'run.json'), 'utf8')) as FullRecord;
  return { tinker, install, home, env: serverEnv, read };
}

/** Starts `n` runs from a real server, waits until each has made a step, then kills the server with SIGKILL. */
async function startThenKillServer(s: Awaited<ReturnType<typeof setUp>>, n: number): Promise<string[]> {
  const server = await connectStdio(s.env);
  assert.equal((await callTool(server.client, 'rl_select_environment', { name: 'gsm8k' })).isError, false);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const started = await callTool(server.client, 'rl_start_training');
    assert.equal(started.isError, false, JSON.stringify(started.json));
    ids.push(started.json.run_id as string);
  }
  for (const id of ids) await waitUntil(`run ${id} made a step`, () => (s.read(id).observed?.steps_completed ?? 0) >= 1, 90, () => JSON.stringify(s.read(id)));
  const pid = server.transport.pid!;
  process.kill(pid, 'SIGKILL');
  await waitUntil('the server is dead', () => !isAlive(pid));
  return ids;
}

/** Kills each run's keeper with SIGKILL; waits (at most 10 s) for its replacement: a new keeper of the run, alone. */
async function killKeepers(ids: string[]): Promise<Map<string, number>> {
  const dead = new Map(ids.map((id) => [id, keepersOf(id)]));
  for (const [id, keepers] of dead) {
    assert.equal(keepers.length, 1, `run ${id} has one keeper`);
    process.kill(keepers[0]!, 'SIGKILL');
  }
  const killedAt = Date.now();
  const next = new Map<string, number>();
  for (const id of ids) {
    const replacement = await waitUntil(`run ${id} has a new keeper`, () => {
      const now = keepersOf(id);
      return now.length === 1 && now[0] !== dead.get(id)![0] ? now[0] : undefined;
    }, 10 - (Date.now() - killedAt) / 1000);
    next.set(id, replacement);
  }
  return next;
}

test('one run: its keeper killed with SIGKILL and no server alive is replaced within 10 s, and the new keeper stops the run on a stall', async (t) => {
  const s = await setUp(t, { RL_STALL_SECONDS: '3', RL_STALL_ACTION: 'stop', RL_STOP_GRACE_SECONDS: '2' });
  const [id] = await startThenKillServer(s, 1);
  const before = s.read(id!);
  const next = (await killKeepers([id!])).get(id!)!;
  assert.match(argvOf(next), new RegExp(`keeper\\.js keeping ${id}`), 'ps names the run a keeper keeps');
  for (const name of ['api', 'trainer', 'env'] as const) assert.ok(isAlive(before.processes[name].pid!), `${name} was taken over, not restarted`);
  const took = keeperHistory(s.home, id!).filter((line) => line.event === 'acquired').at(-1);
  assert.equal(took?.detail?.verdict, 'gone', 'the dead keeper was judged gone by the process table');
  process.kill(-before.processes.env.pid!, 'SIGSTOP');
  const ended = await waitUntil('the run stopped on its stall', () => { const r = s.read(id!); return r.status === 'failed' ? r : undefined; }, 60);
  assert.match(ended.error!, /^Stalled/);
  await waitUntil('nothing of ours is left: keeper and partner gone', () => leftovers([s.install.root, s.home]).length === 0, 20, () => leftovers([s.install.root, s.home]).map(argvOf).join('\n'));
});

test('three runs: their keepers killed with SIGKILL and no server alive are replaced within 10 s, and the new keepers stop each run on its budget', async (t) => {
  // 100 steps are estimated under the budget: only Tinker's bill reaches it.
  const s = await setUp(t, { RL_MAX_RUN_COST_USD: '1', RL_BILLING_REFRESH_SECONDS: '1', RL_STOP_GRACE_SECONDS: '2' }, 100);
  const ids = await startThenKillServer(s, 3);
  await killKeepers(ids);
  // $2 of training billed to each run's Tinker session, after the takeover.
  for (const id of ids) {
    const session = /tinker:\/\/([^/\s"]+):train:\d+\//.exec(readFileSync(s.read(id).logs.trainer, 'utf8'))?.[1];
    assert.ok(session !== undefined, `run ${id} names its Tinker session`);
    s.tinker.addBillingRows([{ bucket_start: hourBucket(0)[0], bucket_end: hourBucket(0)[1], base_model: 'Qwen/Qwen3-8B', session_id: session, event_info: { type: 'training', token_count: 2_000_000_000 } }]);
  }
  for (const id of ids) {
    const ended = await waitUntil(`run ${id} stopped on its budget`, () => { const r = s.read(id); return r.status === 'stopped' ? r : undefined; }, 60);
    assert.match(ended.error!, /^budget reached: billed spend \$2/);
  }
  await waitUntil('nothing of ours is left', () => leftovers([s.install.root, s.home]).length === 0, 20, () => leftovers([s.install.root, s.home]).map(argvOf).join('\n'));
});
