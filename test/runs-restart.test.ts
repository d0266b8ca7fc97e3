/**
 * Runs outlive their server: each is kept by its own keeper, so a server killed with SIGKILL mid-run
 * (a real `node dist/index.js`) leaves the run kept, and servers sharing RL_HOME only read it and
 * ask its keeper; a keeper killed with SIGKILL is replaced by the next server, whose keeper takes
 * the live processes over (their exit codes then unknown); RL_STOP_RUNS_ON_EXIT=1 stops runs at
 * shutdown instead.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { callTool, connectStdio } from './helpers/client.js';
import { type FullRecord, isAlive, killLeftovers, leftovers, newHome, occupyWithTrickle, record, runServer, runServerEnv, startRun, waitForRun, waitUntil } from './helpers/runs.js';
import { makeFakeInstall } from './helpers/fakeInstall.js';

const readRecord = (home: string, id: string): FullRecord => JSON.parse(readFileSync(join(home, 'runs', id, 'run.json'), 'utf8')) as FullRecord;
const pidsOf = (r: FullRecord): number[] => Object.values(r.processes).map((p) => p.pid!);
/** The pid the run's lock names (its keeper's); undefined when none. */
const keeperPid = (home: string, id: string): number | undefined => {
  try {
    return (JSON.parse(readFileSync(join(home, 'runs', id, 'supervisor.lock'), 'utf8')) as { pid: number }).pid;
  } catch {
    return undefined;
  }
};

/** Kills the run's keeper with SIGKILL, as the OOM killer would; its pid. */
async function killKeeper(home: string, id: string): Promise<number> {
  const pid = keeperPid(home, id);
  assert.ok(pid !== undefined && isAlive(pid), 'the run has a live keeper');
  process.kill(pid, 'SIGKILL');
  await waitUntil('the keeper is dead', () => !isAlive(pid));
  return pid;
}

/**
 * A real server process that starts a run and is then killed with SIGKILL once the run is running
 * (and `beforeKill`, if given, has run against it).
 */
async function runThenKillServer(t: TestContext, trainer: Record<string, unknown>, totalSteps: number, opts: { env?: Record<string, string>; beforeKill?: (client: Client, id: string) => Promise<void> } = {}) {
  const install = await makeFakeInstall();
  install.trainerControl(trainer);
  const home = newHome();
  const server = await connectStdio(await runServerEnv(install, home, { lockedEnv: { total_steps: totalSteps }, env: opts.env }));
  t.after(async () => {
    await server.close();
    await killLeftovers([install.root, home]);
  });
  assert.equal((await callTool(server.client, 'rl_select_environment', { name: 'gsm8k' })).isError, false);
  const started = await callTool(server.client, 'rl_start_training');
  assert.equal(started.isError, false, JSON.stringify(started.json));
  const id = started.json.run_id as string;
  await waitUntil('the run is running', () => readRecord(home, id).status === 'running');
  await opts.beforeKill?.(server.client, id);
  const serverPid = server.transport.pid!;
  process.kill(serverPid, 'SIGKILL');
  await waitUntil('the server is dead', () => !isAlive(serverPid));
  return { install, home, id, running: readRecord(home, id) };
}

test('after the server is killed with SIGKILL, the run goes on with its keeper; a new server lists it, leaves it to the keeper, and stops it through the keeper with no orphan', async (t) => {
  const { install, home, id, running } = await runThenKillServer(t, { step_seconds: 1, spawn_grandchild: true }, 500);
  for (const pid of pidsOf(running)) assert.ok(isAlive(pid), `process ${pid} survived the server`);
  const grandchild = Number(/grandchild pid: (\d+)/.exec(readFileSync(running.logs.trainer, 'utf8'))?.[1]);
  const keeper = keeperPid(home, id)!;
  assert.ok(isAlive(keeper), 'the keeper survived the server');

  const h = await runServer(t, { install, home, select: false });
  const list = await h.call('rl_list_runs');
  assert.deepEqual(list.json.runs.map((r: { run_id: string; status: string }) => [r.run_id, r.status]), [[id, 'running']]);
  assert.equal(h.runtime.runs.keeperOf(id), keeper, 'the new server leaves the run to its keeper');
  const status = await h.call('rl_check_status', { run_id: id });
  assert.equal(status.json.status, 'running');
  for (const p of ['api', 'trainer', 'env'] as const) {
    assert.equal(status.json.processes[p].state, 'running');
    assert.equal(status.json.processes[p].pid, running.processes[p].pid);
  }
  // The run really goes on: the trainer keeps saving checkpoints.
  const updates = (): number => (readFileSync(running.logs.trainer, 'utf8').match(/Sampling client updated/g) ?? []).length;
  const before = updates();
  await waitUntil('the trainer makes progress', () => updates() > before);

  const stop = await h.call('rl_stop_training', { run_id: id });
  assert.equal(stop.json.status, 'stopped', JSON.stringify(stop.json));
  await waitForRun(h, id, 'is stopped and its keeper gone', (r) => r.status === 'stopped');
  for (const pid of [...pidsOf(running), grandchild, keeper]) assert.ok(!isAlive(pid), `process ${pid} is left`);
  assert.deepEqual(leftovers([install.root, home]), []);
});

test('a keeper killed in the middle of a stop leaves the run stopping; a server starts a new keeper that finishes the stop, nothing left', async (t) => {
  // A trainer deaf to SIGTERM and a grace of a minute: the stop is still under way when the keeper dies.
  const { install, home, id, running: atKill } = await runThenKillServer(t, { step_seconds: 1, ignore_sigterm: true }, 500, {
    env: { RL_STOP_GRACE_SECONDS: '60' },
    beforeKill: async (client, runId) => {
      const stop = await callTool(client, 'rl_stop_training', { run_id: runId });
      assert.equal(stop.json.status, 'stopping', JSON.stringify(stop.json));
    },
  });
  assert.equal(atKill.status, 'stopping');
  await killKeeper(home, id);
  assert.ok(isAlive(atKill.processes.trainer.pid!), 'the trainer outlived the keeper that was stopping it');

  const h = await runServer(t, { install, home, select: false, env: { RL_STOP_GRACE_SECONDS: '2' } });
  const status = await h.call('rl_check_status', { run_id: id });
  assert.equal(status.isError, false, JSON.stringify(status.json));
  const stopped = await waitForRun(h, id, 'stopped', (r) => r.status === 'stopped' && Object.values(r.processes).every((p) => p.state !== 'running'), 60);
  assert.equal(stopped.error, undefined, 'a stop asked for is not a failure');
  for (const pid of pidsOf(atKill)) assert.ok(!isAlive(pid), `process ${pid} is left`);
  assert.deepEqual(leftovers([install.root, home]), []);
});

test('a run that completed while it had no keeper is reported completed by the next server', async (t) => {
  const { install, home, id, running } = await runThenKillServer(t, { step_seconds: 0.5 }, 6);
  await killKeeper(home, id);
  await waitUntil('the trainer finished on its own', () => !isAlive(running.processes.trainer.pid!), 60);
  const h = await runServer(t, { install, home, select: false });
  const r = await waitForRun(h, id, 'ended and cleaned up', (x) => x.status !== 'running' && Object.values(x.processes).every((p) => p.state === 'exited'));
  assert.equal(r.status, 'completed', r.error);
  assert.equal(r.processes.trainer.exit_code, null, 'an exit nobody saw has no known code');
  assert.deepEqual(leftovers([install.root, home]), []);
  assert.match((await h.call('rl_check_status', { run_id: id })).json.weights, /step_6$/);
});

test('a run whose processes all died while it had no keeper is marked failed with the reason', async (t) => {
  const { install, home, id, running } = await runThenKillServer(t, { step_seconds: 1 }, 500);
  await killKeeper(home, id);
  for (const pid of pidsOf(running)) process.kill(-pid, 'SIGKILL');
  await waitUntil('the run processes are dead', () => pidsOf(running).every((pid) => !isAlive(pid)));
  const h = await runServer(t, { install, home, select: false });
  const r = await waitForRun(h, id, 'ended', (x) => x.status !== 'running');
  assert.equal(r.status, 'failed');
  assert.match(r.error!, /ended \(exit code unknown: it ended while the run had no keeper\)/);
});

test('two servers on one RL_HOME: the run is kept by its keeper, the other server reads it and asks the keeper to stop', async (t) => {
  const a = await runServer(t, { lockedEnv: { total_steps: 500 } });
  a.install.trainerControl({ step_seconds: 1 });
  const id = await startRun(a);
  const running = await waitForRun(a, id, 'is running', (r) => r.status === 'running');
  const b = await runServer(t, { install: a.install, home: a.home, select: false, env: { RL_MAX_CONCURRENT_RUNS: '1' } });

  const keeper = a.runtime.runs.keeperOf(id);
  assert.ok(keeper !== undefined && keeper !== process.pid, 'a process of its own keeps the run, not a server');
  assert.equal(b.runtime.runs.keeperOf(id), keeper, 'both servers see the one keeper');
  assert.equal((await b.call('rl_check_status', { run_id: id })).json.status, 'running');
  const start = await b.call('rl_start_training');
  assert.equal(start.isError, true, "b has a's selection (it is saved in RL_HOME), but a's run fills b's limit of one");
  assert.deepEqual(start.json.active_runs, [id], 'the limit counts runs of every server sharing RL_HOME');

  const stop = await b.call('rl_stop_training', { run_id: id });
  assert.deepEqual(stop.json, { message: `Stopped training run '${id}'`, run_id: id, status: 'stopped' });
  await waitForRun(b, id, 'has no keeper left', (r) => r.status === 'stopped');
  for (const pid of [...pidsOf(running), keeper]) assert.ok(!isAlive(pid));
});

test('when the server that started a run exits, the run keeps going with its keeper and another server stops it', async (t) => {
  const a = await runServer(t, { lockedEnv: { total_steps: 500 } });
  a.install.trainerControl({ step_seconds: 1 });
  const id = await startRun(a);
  const running = await waitForRun(a, id, 'is running', (r) => r.status === 'running');
  const b = await runServer(t, { install: a.install, home: a.home, select: false });
  const keeper = b.runtime.runs.keeperOf(id);

  await a.close();
  assert.equal(record(b, id).status, 'running', 'the run survives its server');
  for (const pid of [...pidsOf(running), keeper!]) assert.ok(isAlive(pid));
  assert.equal(b.runtime.runs.keeperOf(id), keeper, 'the same keeper keeps it');

  const stop = await b.call('rl_stop_training', { run_id: id });
  assert.equal(stop.json.status, 'stopped');
  await waitForRun(b, id, 'has no keeper left', (r) => r.status === 'stopped');
  assert.deepEqual(leftovers([a.install.root, a.home]), []);
});

test('with RL_STOP_RUNS_ON_EXIT=1 the server stops its runs when it shuts down', async (t) => {
  const h = await runServer(t, { lockedEnv: { total_steps: 500 }, env: { RL_STOP_RUNS_ON_EXIT: '1' } });
  h.install.trainerControl({ step_seconds: 1 });
  const id = await startRun(h);
  const running = await waitForRun(h, id, 'is running', (r) => r.status === 'running');
  await h.runtime.close();
  const r = readRecord(h.home, id);
  assert.equal(r.status, 'stopped');
  assert.ok(r.notes?.some((n) => /RL_STOP_RUNS_ON_EXIT=1/.test(n)));
  for (const pid of pidsOf(running)) assert.ok(!isAlive(pid));
});

test('a keeper killed with SIGKILL: a server that was up, unasked, starts a new keeper on the live processes within 10 s, which still stops the run on a stall', async (t) => {
  // A replacement keeper runs with the settings of the server that starts it, as an adopting server's supervision did.
  const stall = { RL_STALL_SECONDS: '3', RL_STALL_ACTION: 'stop' };
  const b = await runServer(t, { select: false, env: stall });
  const a = await runServer(t, { install: b.install, home: b.home, lockedEnv: { total_steps: 500 }, env: stall });
  a.install.trainerControl({ step_seconds: 0.5 });
  const id = await startRun(a);
  const running = await waitForRun(a, id, 'has made a step', (r) => (r.observed?.steps_completed ?? 0) >= 1);
  await a.close();

  const dead = await killKeeper(b.home, id);
  // No call reaches b: it must notice on its own, or the run goes on with nothing to judge it or stop it.
  const next = await waitUntil('a new keeper keeps the run', () => { const k = b.runtime.runs.keeperOf(id); return k !== undefined && k !== dead ? k : undefined; }, 10);
  assert.equal(record(b, id).status, 'running', 'the run goes on under its new keeper');
  for (const pid of pidsOf(running)) assert.ok(isAlive(pid), `process ${pid} was taken over, not restarted`);
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  assert.equal(b.runtime.runs.keeperOf(id), next, 'the new keeper stays with the processes it took over');
  // The environment freezes: no more data, the trainer waits for a batch for ever.
  process.kill(-running.processes.env.pid!, 'SIGSTOP');
  const ended = await waitForRun(b, id, 'stopped on its stall', (r) => r.status === 'failed', 60);
  assert.match(ended.error!, /^Stalled/);
  for (const pid of [...pidsOf(running), next]) assert.ok(!isAlive(pid), `process ${pid} is left`);
  assert.deepEqual(leftovers([b.install.root, b.home]), []);
});

test('with RL_STOP_RUNS_ON_EXIT=1 a run still starting is stopped at shutdown, even with a readiness probe in flight', async (t) => {
  const h = await runServer(t, { lockedEnv: { total_steps: 500 }, env: { RL_STOP_RUNS_ON_EXIT: '1' } });
  h.install.trainerControl({ step_seconds: 1 });
  const id = await startRun(h);
  // Taken after the pre-flight check, before the trainer binds it.
  await occupyWithTrickle(t, Number(h.env.RL_INFERENCE_PORT));
  const waiting = await waitForRun(h, id, 'has a registered trainer', (r) => r.phase === 'starting_trainer' && readFileSync(r.logs.trainer, 'utf8').includes('Registered as trainer'));
  await h.runtime.close();
  const r = readRecord(h.home, id);
  assert.equal(r.status, 'stopped');
  for (const pid of [waiting.processes.api.pid!, waiting.processes.trainer.pid!]) assert.ok(!isAlive(pid), `process ${pid} outlived the server`);
});
