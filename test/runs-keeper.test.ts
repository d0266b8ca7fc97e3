/**
 * Runs are guarded with no server alive: the server that started a run (a real `node dist/index.js`)
 * is killed with SIGKILL once the run is running, and the run's keeper alone carries out the rules:
 * a stall with RL_STALL_ACTION=stop, a budget on Tinker's billed spend, the end of training, a
 * crash with its real exit code. For an Atropos run and a cookbook run each. A server started
 * afterwards answers from the record the keeper wrote, and starts nothing; no process of ours is
 * left (a scan of /proc), and a run never has two keepers.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { callTool, connectStdio } from './helpers/client.js';
import { makeFakeInstall, type FakeInstall } from './helpers/fakeInstall.js';
import { hourBucket, type FakeTinker } from './helpers/fakeTinker.js';
import { argvOf, type FullRecord, isAlive, killLeftovers, leftovers, newHome, procInfo, runServer, runServerEnv, runsTinker, TINKER_KEY, waitUntil } from './helpers/runs.js';
import { isActive, isEnded } from '../src/runtime/runs/seams/record.js';

type Framework = 'atropos' | 'cookbook';
const FRAMEWORKS: Framework[] = ['atropos', 'cookbook'];
const STALL_SECONDS = 3;

interface Setup {
  framework: Framework;
  install: FakeInstall;
  home: string;
  tinker: FakeTinker;
  env: Record<string, string>;
}

async function setUp(t: TestContext, framework: Framework, opts: { env?: Record<string, string>; totalSteps?: number; config?: Record<string, unknown>; billing?: boolean } = {}): Promise<Setup> {
  const tinker = runsTinker();
  if (opts.billing) tinker.addKey(TINKER_KEY, { billingView: true });
  const install = await makeFakeInstall(framework === 'cookbook' ? { cookbook: true, tinkerState: tinker.dir } : {});
  const home = newHome();
  t.after(() => killLeftovers([install.root, home]));
  const env = await runServerEnv(install, home, { tinker, lockedEnv: { total_steps: opts.totalSteps ?? 500 }, env: opts.env, config: opts.config });
  return { framework, install, home, tinker, env };
}

const readRecord = (s: Setup, id: string): FullRecord => JSON.parse(readFileSync(join(s.home, 'runs', id, 'run.json'), 'utf8')) as FullRecord;

/**
 * Live keepers of the run (keeper.js, living in the run's directory), from /proc. A process a
 * keeper is starting is a copy of it until it runs its own program, so a keeper's child is not one.
 */
function keepersOf(s: Setup, id: string): number[] {
  const keepers = leftovers([join(s.home, 'runs', id)]).filter((pid) => argvOf(pid).includes('keeper.js'));
  return keepers.filter((pid) => !keepers.includes(procInfo(pid)?.ppid ?? -1));
}

/** Starts a run from a real server, waits until it runs, then kills the server with SIGKILL: no server is left. */
async function startThenKillServer(s: Setup): Promise<string> {
  // Closed after the file by the harness; killed below.
  const server = await connectStdio(s.env);
  const selected = await callTool(server.client, 'rl_select_environment', { name: s.framework === 'cookbook' ? 'math_rl' : 'gsm8k' });
  assert.equal(selected.isError, false, JSON.stringify(selected.json));
  // A recipe keeps its own default model unless the operator locks one: the one the fake Tinker serves (and prices below).
  const config = s.framework === 'cookbook' ? { config: { model_name: 'Qwen/Qwen3-8B', groups_per_batch: 2, group_size: 2, save_every: 1 } } : {};
  const started = await callTool(server.client, 'rl_start_training', config);
  assert.equal(started.isError, false, JSON.stringify(started.json));
  const id = started.json.run_id as string;
  await waitUntil('the run is running', () => readRecord(s, id).status === 'running', 90, () => JSON.stringify(readRecord(s, id)));
  const pid = server.transport.pid!;
  process.kill(pid, 'SIGKILL');
  await waitUntil('the server is dead', () => !isAlive(pid));
  return id;
}

/** Waits, with no server alive, until the keeper ended the run and exited; never more than one keeper meanwhile. */
async function endsUnattended(s: Setup, id: string, seconds = 90): Promise<FullRecord> {
  return waitUntil(`run ${id} ends with no server alive`, () => {
    const keepers = keepersOf(s, id);
    assert.ok(keepers.length <= 1, `one keeper per run, not ${keepers.length}`);
    const r = readRecord(s, id);
    return isEnded(r.status) && keepers.length === 0 ? r : undefined;
  }, seconds, () => JSON.stringify(readRecord(s, id)));
}

/** A server started afterwards answers from the keeper's record, starts no keeper, changes nothing; nothing of ours is left. */
async function answeredAfterwards(t: TestContext, s: Setup, id: string, ended: FullRecord): Promise<Record<string, any>> {
  const h = await runServer(t, { install: s.install, home: s.home, select: false, tinker: s.tinker, env: s.env });
  const status = await h.call('rl_check_status', { run_id: id });
  assert.equal(status.isError, false, JSON.stringify(status.json));
  assert.equal(status.json.status, ended.status);
  assert.equal(h.runtime.runs.keeperOf(id), undefined, 'no keeper for an ended run');
  const after = readRecord(s, id);
  assert.deepEqual({ ...after, last_full_check_at: undefined, tinker: undefined }, { ...ended, last_full_check_at: undefined, tinker: undefined }, 'the server acted on nothing');
  assert.deepEqual(leftovers([s.install.root, s.home]), [], 'no process of ours is left');
  return status.json;
}

for (const framework of FRAMEWORKS) {
  test(`${framework}: a starved run with RL_STALL_ACTION=stop and no server alive ends failed with the stall within RL_STALL_SECONDS + 10 s`, async (t) => {
    const s = await setUp(t, framework, { env: { RL_STALL_SECONDS: String(STALL_SECONDS), RL_STALL_ACTION: 'stop', RL_STOP_GRACE_SECONDS: '2' } });
    if (framework === 'cookbook') s.install.cookbookControl({ step_seconds: 0.2, hang_at_step: 2 });
    else s.install.trainerControl({ step_seconds: 0.3 });
    const id = await startThenKillServer(s);
    const first = await waitUntil('a first step', () => { const r = readRecord(s, id); return (r.observed?.steps_completed ?? 0) >= 1 ? r : undefined; }, 60);
    // An Atropos environment that freezes: no more data, the trainer waits for a batch for ever.
    if (framework === 'atropos') process.kill(-first.processes.env.pid!, 'SIGSTOP');
    const ended = await endsUnattended(s, id);
    assert.equal(ended.status, 'failed');
    assert.match(ended.error!, /^Stalled: /);
    const lastSign = Math.max(...[ended.observed?.step_completed_at, ended.observed?.data_last_at].filter((x): x is string => x !== undefined).map(Date.parse));
    const after = (Date.parse(ended.ended_at!) - lastSign) / 1000;
    assert.ok(after <= STALL_SECONDS + 10, `ended ${after} s after the last step or data`);
    const answer = await answeredAfterwards(t, s, id, ended);
    assert.equal(answer.health.verdict, 'failed');
  });

  test(`${framework}: billed spend reaching RL_MAX_RUN_COST_USD with no server alive stops the run, budget reached`, async (t) => {
    const prices = { 'Qwen/Qwen3-8B': { prefill: 0.001, sample: 0.001, train: 0.001, as_of: '2026-11-20', source: 'test' } };
    const s = await setUp(t, framework, { billing: true, totalSteps: 40, config: { prices }, env: { RL_MAX_RUN_COST_USD: '1', RL_BILLING_REFRESH_SECONDS: '1' } });
    if (framework === 'cookbook') s.install.cookbookControl({ step_seconds: 0.5 });
    else s.install.trainerControl({ step_seconds: 0.5 });
    const id = await startThenKillServer(s);
    // The run's Tinker session, from the first tinker:// path it wrote; $2 of training billed to it.
    const session = await waitUntil('the run names its Tinker session', () => {
      const r = readRecord(s, id);
      const text = s.framework === 'cookbook' ? readFileSync(join(s.home, 'runs', id, 'cookbook', 'checkpoints.jsonl'), { encoding: 'utf8', flag: 'a+' }) : readFileSync(r.logs.trainer, 'utf8');
      return /tinker:\/\/([^/\s"]+):train:\d+\//.exec(text)?.[1];
    }, 60);
    s.tinker.addBillingRows([{ bucket_start: hourBucket(0)[0], bucket_end: hourBucket(0)[1], base_model: 'Qwen/Qwen3-8B', session_id: session, event_info: { type: 'training', token_count: 2_000_000_000 } }]);
    const ended = await endsUnattended(s, id);
    assert.equal(ended.status, 'stopped');
    assert.match(ended.error!, /^budget reached: billed spend \$2 reached RL_MAX_RUN_COST_USD=\$1/);
    const answer = await answeredAfterwards(t, s, id, ended);
    assert.ok(answer.cost.billed.usd >= 2 && answer.cost.billed.usd < 2.01, JSON.stringify(answer.cost.billed));
  });

  test(`${framework}: a run that trains to the end with no server alive is completed with its final metrics and spend`, async (t) => {
    const s = await setUp(t, framework, { totalSteps: 4 });
    if (framework === 'cookbook') s.install.cookbookControl({ step_seconds: 0.3 });
    else s.install.trainerControl({ step_seconds: 0.5 });
    const id = await startThenKillServer(s);
    const ended = await endsUnattended(s, id);
    assert.equal(ended.status, 'completed', ended.error);
    assert.equal(ended.processes.trainer.exit_code, 0, 'the keeper, its parent, saw the exit code');
    assert.equal(ended.observed?.steps_completed, 4);
    const answer = await answeredAfterwards(t, s, id, ended);
    assert.deepEqual(answer.progress, { step: 4, total_steps: 4 });
    assert.ok(answer.cost.spent_usd > 0, JSON.stringify(answer.cost));
  });

  test(`${framework}: a trainer that crashes with no server alive is failed with its real exit code and the cause from its log`, async (t) => {
    const s = await setUp(t, framework);
    if (framework === 'cookbook') s.install.cookbookControl({ step_seconds: 0.3, fail_at_step: 2 });
    else s.install.trainerControl({ step_seconds: 0.3, error_in_step: 2, exit_code: 3 });
    const id = await startThenKillServer(s);
    const ended = await endsUnattended(s, id);
    assert.equal(ended.status, 'failed');
    assert.equal(ended.processes.trainer.exit_code, framework === 'cookbook' ? 1 : 3);
    assert.match(ended.error!, framework === 'cookbook' ? /RuntimeError: simulated failure in batch 2/ : /Error in step 2: simulated error/);
    await answeredAfterwards(t, s, id, ended);
  });
}

test('a run is never shown running with nothing keeping it: a status call on a run whose keeper died starts one first', async (t) => {
  const s = await setUp(t, 'atropos');
  s.install.trainerControl({ step_seconds: 0.5 });
  const id = await startThenKillServer(s);
  const [keeper] = keepersOf(s, id);
  assert.ok(keeper !== undefined);
  process.kill(keeper, 'SIGKILL');
  await waitUntil('the keeper is dead', () => !isAlive(keeper));
  const h = await runServer(t, { install: s.install, home: s.home, select: false, tinker: s.tinker, env: s.env });
  const status = await h.call('rl_check_status', { run_id: id });
  assert.equal(status.json.status, 'running');
  const kept = h.runtime.runs.keeperOf(id);
  assert.ok(kept !== undefined && kept !== keeper && isAlive(kept), 'a new keeper keeps the run it answered running');
  // Once booted it lives in its run's directory; one keeper, never two.
  await waitUntil('the new keeper is in its run', () => keepersOf(s, id).length > 0);
  assert.deepEqual(keepersOf(s, id), [kept]);
  // It stays: a keeper that took over processes it did not start (no child holds it open) lives on with them.
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  assert.deepEqual(keepersOf(s, id), [kept], 'the same keeper, still alive');
  assert.ok(isActive(readRecord(s, id).status));
  const stop = await h.call('rl_stop_training', { run_id: id });
  assert.equal(stop.json.status, 'stopped');
});

test('cookbook: Tinker answering 503 at step 3 with no server alive: the keeper resumes the run from its last checkpoint and it completes, resumes 1 with the cause', async (t) => {
  const s = await setUp(t, 'cookbook', { totalSteps: 5 });
  // The SDK gives up at once (its retry window is minutes upstream), so the failure is the recipe's.
  s.tinker.setService({ retry_window_seconds: 0 });
  s.install.cookbookControl({ step_seconds: 1 });
  const id = await startThenKillServer(s);
  await waitUntil('two steps', () => (readRecord(s, id).observed?.steps_completed ?? 0) >= 2, 60);
  s.tinker.setFaults({ forward_backward: { status: 503, detail: 'Service Unavailable', times: 1 } });
  const ended = await endsUnattended(s, id, 120);
  assert.equal(ended.status, 'completed', ended.error);
  assert.equal(ended.resumes?.length, 1);
  assert.equal(ended.resumes![0]!.after.status, 'failed');
  assert.match(ended.resumes![0]!.automatic!.cause, /^Tinker answered 5xx: .*Error code: 503/);
  assert.ok(ended.notes?.some((n) => /^Resuming automatically at \S+ \(attempt 1 of RL_AUTO_RESUME=2\): Tinker answered 5xx/.test(n)), JSON.stringify(ended.notes));
  const answer = await answeredAfterwards(t, s, id, ended);
  assert.deepEqual(answer.resumes.map((r: Record<string, unknown>) => [r.automatic, r.after, r.from_step]), [[true, 'failed', ended.resumes![0]!.from_step]]);
  assert.match(answer.resumes[0].cause, /503/);
});

test('cookbook: a 402 from Tinker is never retried: the run stays failed and its keeper exits', async (t) => {
  const s = await setUp(t, 'cookbook', { totalSteps: 5 });
  s.tinker.setService({ retry_window_seconds: 0, billing_pause_seconds: 0 });
  s.install.cookbookControl({ step_seconds: 1 });
  const id = await startThenKillServer(s);
  await waitUntil('two steps', () => (readRecord(s, id).observed?.steps_completed ?? 0) >= 2, 60);
  // The SDK pauses once (a billing pause of 0 s here), then the second 402 ends the recipe.
  s.tinker.setFaults({ forward_backward: { status: 402, detail: 'payment required', times: 2 } });
  const ended = await endsUnattended(s, id, 120);
  assert.equal(ended.status, 'failed');
  assert.match(ended.error!, /402/);
  assert.equal(ended.resumes, undefined, 'not resumed');
  await answeredAfterwards(t, s, id, ended);
});

test('cookbook: a ConfigurationError raised by the recipe mid-run is never retried, though a saved state is there: the run stays failed with the cause and its keeper exits', async (t) => {
  const s = await setUp(t, 'cookbook', { totalSteps: 5 });
  // Raised as the cookbook's own checks raise it once training runs (an evaluator's config), after
  // batches 0 and 1 were saved: a resume would have something to start from.
  s.install.cookbookControl({ step_seconds: 0.5, fail_at_step: 2, fail_with: 'ConfigurationError' });
  const id = await startThenKillServer(s);
  const ended = await endsUnattended(s, id, 120);
  assert.equal(ended.status, 'failed');
  assert.equal(ended.processes.trainer.exit_code, 1);
  assert.match(ended.error!, /tinker_cookbook\.exceptions\.ConfigurationError: simulated failure in batch 2/);
  const saved = readFileSync(join(s.home, 'runs', id, 'cookbook', 'checkpoints.jsonl'), 'utf8');
  assert.match(saved, /"state_path": ?"tinker:\/\//, 'a state to resume from was saved');
  assert.equal(ended.resumes, undefined, 'not resumed');
  assert.ok(!ended.notes?.some((n) => /Resuming automatically/.test(n)), JSON.stringify(ended.notes));
  const answer = await answeredAfterwards(t, s, id, ended);
  assert.equal(answer.resumes, undefined);
});
