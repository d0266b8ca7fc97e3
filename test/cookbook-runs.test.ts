/**
 * Cookbook runs through the tools, end to end: a tinker-cookbook install (the fakes of
 * test/fakes/cookbook in a venv, training through the fake Tinker SDK) and a server over it. A
 * math recipe and a verifiers environment are listed, selected, edited, started, running and
 * healthy with steps advancing, and stopped with no process left; a restarted server adopts a
 * running one; a starved run is stalled with evidence; a failed run resumed continues from its
 * last checkpoint with its history and spend; a run is evaluated against its base model and
 * compared with an Atropos run; a verifiers environment is smoke-tested against an endpoint.
 */
import assert from 'node:assert/strict';
import { readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { stringify } from 'yaml';
import { APPS_CLIENT_CAPABILITIES, connectInMemory } from './helpers/client.js';
import { makeFakeInstall } from './helpers/fakeInstall.js';
import { makeFakeTinker } from './helpers/fakeTinker.js';
import { writeRunDir } from './helpers/registry.js';
import { argvOf, environOf, killLeftovers, leftovers, newHome, record, runServer, waitForRun, type RunServer } from './helpers/runs.js';
import { gsm8kSolver } from './fakes/gsm8kAnswers.js';
import { assessHealth } from '../src/runtime/runs/watching/health.js';
import { startFakeOpenAI } from './fakes/openaiServer.js';
import { startFakeTinkerOai } from './fakes/tinkerOaiServer.js';

/** A Tinker key as the SDK wants it (`tml-`), long and random enough to be found nowhere by accident. */
const KEY = `tml-cookbook-runs-${process.pid}-7f3c9a1e5b`;
const ENDPOINT_KEY = 'sk-cookbook-endpoint-0c41';

const tinker = makeFakeTinker();
tinker.addKey(KEY);
tinker.setModels(['Qwen/Qwen3-8B']);
// What every sample of the fake SDK says: right for one of the gsm8k training problems (answer 29).
tinker.setService({ sample_text: 'Adding up: \\boxed{29}' });
const install = await makeFakeInstall({ cookbook: true, tinkerState: tinker.dir });
const oai = await startFakeTinkerOai({ apiKey: KEY, baseModels: { 'Qwen/Qwen3-8B': 0.2 }, checkpoint: (path) => (/\/sampler_weights\/(?:\d{6}|final)$/.test(path) ? 0.9 : undefined), solve: gsm8kSolver() });
after(() => oai.close());
const home = newHome();
after(() => killLeftovers([install.root, home]));

const ENDED = ['completed', 'failed', 'stopped'];
/** Runs later tests evaluate and compare. */
let verifiersRun: string | undefined;
let mathRun: string | undefined;

async function server(t: Parameters<typeof runServer>[0], env: Record<string, string> = {}, lockedSteps = 200, apps = false): Promise<RunServer> {
  return runServer(t, { install, home, select: false, lockedEnv: { total_steps: lockedSteps }, env: { TINKER_API_KEY: KEY, TINKER_OAI_BASE_URL: oai.baseUrl, ...env }, ...(apps ? { capabilities: APPS_CLIENT_CAPABILITIES } : {}) });
}

async function edit(h: RunServer, values: Record<string, unknown>): Promise<void> {
  for (const [field, value] of Object.entries(values)) {
    const answer = await h.call('rl_edit_config', { field, value });
    assert.equal(answer.isError, false, JSON.stringify(answer.json));
  }
}

async function start(h: RunServer, config: Record<string, unknown> = {}): Promise<string> {
  const answer = await h.call('rl_start_training', Object.keys(config).length > 0 ? { config } : {});
  assert.equal(answer.isError, false, JSON.stringify(answer.json));
  assert.equal(answer.json.framework, 'cookbook');
  assert.deepEqual(Object.keys(answer.json.logs), ['trainer']);
  return answer.json.run_id as string;
}

async function stopWithNothingLeft(h: RunServer, runId: string): Promise<void> {
  const stopped = await h.call('rl_stop_training', { run_id: runId });
  assert.equal(stopped.json.status, 'stopped', JSON.stringify(stopped.json));
  assert.deepEqual(leftovers([join(home, 'runs', runId)]), [], 'no process of the run is left');
  assert.equal(record(h, runId).processes.trainer.state, 'exited');
}

test('a math recipe: listed, selected, edited, started, running and healthy with steps advancing, stopped with no process left', async (t) => {
  install.cookbookControl({ step_seconds: 0.3 });
  const h = await server(t);
  const cookbook = await h.call('rl_list_environments', { framework: 'cookbook' });
  const listed = Object.fromEntries(cookbook.json.environments.map((e: any) => [e.name, e]));
  assert.deepEqual(Object.keys(listed).sort(), ['gsm8k', 'math_rl'], 'RL recipes and the verifiers environment; the supervised chat_sl is left out');
  assert.deepEqual([listed.math_rl.framework, listed.math_rl.recipe, listed.math_rl.managed_server], ['cookbook', 'math_rl', undefined]);
  assert.deepEqual([listed.gsm8k.recipe, listed.gsm8k.vf_env_id], ['verifiers_rl', 'gsm8k']);
  const atropos = await h.call('rl_list_environments', { framework: 'atropos' });
  assert.ok(atropos.json.environments.every((e: any) => e.framework === 'atropos') && atropos.json.environments.some((e: any) => e.name === 'gsm8k'));

  const selected = await h.call('rl_select_environment', { name: 'math_rl' });
  assert.deepEqual([selected.json.framework, selected.json.recipe, selected.json.introspection], ['cookbook', 'math_rl', 'static']);
  const config = await h.call('rl_get_current_config');
  const fields = Object.fromEntries(config.json.configurable_fields.map((f: any) => [f.name, f]));
  assert.deepEqual([fields.group_size.type, fields.group_size.default, fields.loss_fn.allowed], ['int', 4, 'one of cross_entropy, importance_sampling, ppo, cispo, dro']);
  for (const owned of ['log_path', 'behavior_if_log_dir_exists', 'wandb_project']) assert.equal(fields[owned], undefined, `${owned} is the server's`);
  assert.deepEqual(config.json.locked_fields.map((f: any) => [f.name, f.locked_value]), [['model_name', 'Qwen/Qwen3-8B'], ['lora_rank', 32], ['learning_rate', 0.00004], ['max_steps', 200]]);
  await edit(h, { groups_per_batch: 2, group_size: 2, save_every: 2 });
  const locked = await h.call('rl_edit_config', { field: 'lora_rank', value: 8 });
  assert.deepEqual([locked.isError, locked.json.locked_value], [true, 32]);
  const badEnum = await h.call('rl_edit_config', { field: 'loss_fn', value: 'sft' });
  assert.match(badEnum.json.expected, /one of cross_entropy, importance_sampling/);

  const runId = await start(h);
  mathRun = runId;
  const running = await h.call('rl_wait_for_run', { run_id: runId, until: 'running', timeout_seconds: 50 });
  assert.equal(running.json.reached, true, JSON.stringify(running.json));
  const pid = record(h, runId).processes.trainer.pid!;
  const argv = argvOf(pid);
  assert.match(argv, / -m tinker_cookbook\.recipes\.math_rl\.train /);
  assert.ok(argv.includes(`log_path=${join(home, 'runs', runId, 'cookbook')}`) && argv.includes('behavior_if_log_dir_exists=resume') && argv.includes('groups_per_batch=2'), argv);
  assert.ok(!argv.includes(KEY) && environOf(pid).includes(`TINKER_API_KEY=${KEY}`), 'the key is in the environment only');
  assert.equal(readlinkSync(`/proc/${pid}/fd/0`), '/dev/null', 'stdin is closed: `ask` could never block it');

  const first = await h.call('rl_wait_for_run', { run_id: runId, until: 'step', timeout_seconds: 50 });
  const second = await h.call('rl_wait_for_run', { run_id: runId, until: 'step', timeout_seconds: 50 });
  assert.ok(second.json.progress.step > first.json.progress.step - 1 && second.json.progress.step >= 2, JSON.stringify(second.json));
  await waitForRun(h, runId, 'trains', (r) => r.phase === 'training');
  const status = await h.call('rl_check_status', { run_id: runId });
  assert.deepEqual([status.json.status, status.json.health.verdict, status.json.framework], ['running', 'healthy', 'cookbook']);
  assert.equal(typeof status.json.metrics.reward_mean, 'number');
  assert.match(status.json.metrics_source, /^metrics\.jsonl/);
  assert.match(status.json.cost.basis, /^from the tokens the run logged \(metrics\.jsonl/);
  await stopWithNothingLeft(h, runId);
});

test('a verifiers environment: picked as cookbook:gsm8k, its args edited, trained, kept by its keeper across a restarted server, stopped with no process left', async (t) => {
  install.cookbookControl({ step_seconds: 0.2, hang_at_step: 3 });
  const h = await server(t);
  const ambiguous = await h.call('rl_select_environment', { name: 'gsm8k' });
  assert.equal(ambiguous.isError, true);
  assert.deepEqual(ambiguous.json.available, ['atropos:gsm8k', 'cookbook:gsm8k']);
  const selected = await h.call('rl_select_environment', { name: 'cookbook:gsm8k' });
  assert.deepEqual([selected.json.framework, selected.json.recipe, selected.json.vf_env_id], ['cookbook', 'verifiers_rl', 'gsm8k']);
  await edit(h, { vf_env_args: '{"num_train_examples": 8}', groups_per_batch: 1, group_size: 2, save_every: 1 });
  const runId = await start(h);
  verifiersRun = runId;
  assert.ok(argvOf((await waitForRun(h, runId, 'is running', (r) => r.status === 'running')).processes.trainer.pid!).includes('vf_env_args={"num_train_examples":8}'));
  await waitForRun(h, runId, 'has trained 3 steps', (r) => (r.observed?.steps_completed ?? 0) >= 3);

  // The server goes; the recipe trains on, kept by its keeper. The next server reads it and leaves it to the keeper.
  const keeper = h.runtime.runs.keeperOf(runId);
  assert.notEqual(keeper, undefined);
  await h.close();
  const pid = record(h, runId).processes.trainer.pid!;
  const next = await connectInMemory(h.env);
  assert.equal(next.runtime.runs.keeperOf(runId), keeper, 'the same keeper keeps the run');
  assert.equal(record(next, runId).processes.trainer.pid, pid, 'the same process');
  install.cookbookControl({ step_seconds: 0.2, hang_at_step: 5 });
  await waitForRun(next, runId, 'makes steps under the new server', (r) => (r.observed?.steps_completed ?? 0) >= 5);
  const status = await next.call('rl_check_status', { run_id: runId });
  assert.deepEqual([status.json.status, status.json.health.verdict], ['running', 'healthy']);
  assert.equal(status.json.metrics.percent_correct !== undefined, true);
  const stopped = await next.call('rl_stop_training', { run_id: runId });
  assert.equal(stopped.json.status, 'stopped');
  assert.deepEqual(leftovers([join(home, 'runs', runId)]), []);
});

test('a starved run (no metrics row) is stalled within twice RL_STALL_SECONDS before its first step, the billing pause its evidence', async (t) => {
  install.cookbookControl({ step_seconds: 0.1 });
  tinker.setService({ sample_text: 'Adding up: \\boxed{29}', billing_pause_seconds: 3600 });
  tinker.setFaults({ forward_backward: { status: 402, detail: 'organization balance exhausted' } });
  t.after(() => {
    tinker.setFaults(null);
    tinker.setService({ sample_text: 'Adding up: \\boxed{29}' });
  });
  const h = await server(t, { RL_STALL_SECONDS: '2' });
  await h.call('rl_select_environment', { name: 'math_rl' });
  const runId = await start(h, { groups_per_batch: 2, group_size: 2 });
  // The watchdog writes what it saw; health is judged from the record, as every status answer judges it.
  await waitForRun(h, runId, 'saw the billing pause', (r) => r.observed?.trainer_signals?.billing_paused !== undefined);
  await waitForRun(h, runId, 'is stalled', (r) => assessHealth(r, Date.now(), h.runtime.runs.healthPolicy).verdict === 'stalled');
  const answer = (await h.call('rl_check_status', { run_id: runId })).json;
  assert.equal(answer.health.verdict, 'stalled', JSON.stringify(answer.health));
  assert.equal(record(h, runId).observed?.data_first_at, undefined, 'no metrics row was written');
  const [stall, ...evidence] = answer.health.reasons;
  assert.match(stall.message, /^Stalled: the recipe has written no metrics row for \d+ s, more than 4 s \(before the first step the limit is 2 x RL_STALL_SECONDS=2\)/);
  assert.ok(answer.health.seconds_since_progress > 4);
  const pause = evidence.find((r: any) => r.code === 'billing_paused');
  assert.ok(pause, JSON.stringify(answer.health.reasons));
  assert.match(pause.evidence.line, /The job is paused due to billing status\. Error: .*organization balance exhausted/);
  assert.equal(pause.evidence.process, 'trainer');
  await stopWithNothingLeft(h, runId);
});

test('after its first step a run with no new row for RL_STALL_SECONDS is stalled; with RL_STALL_ACTION=stop it ends failed, nothing left', async (t) => {
  install.cookbookControl({ step_seconds: 0.1, hang_at_step: 1 });
  const h = await server(t, { RL_STALL_SECONDS: '1', RL_STALL_ACTION: 'stop' });
  await h.call('rl_select_environment', { name: 'math_rl' });
  const runId = await start(h, { groups_per_batch: 2, group_size: 2 });
  // The outcome is recorded first, then what still runs is stopped.
  const ended = await waitForRun(h, runId, 'ends, its process stopped', (r) => ENDED.includes(r.status) && r.processes.trainer.state === 'exited');
  assert.deepEqual([ended.status, ended.error_process, ended.observed?.steps_completed], ['failed', 'trainer', 1]);
  assert.match(ended.error!, /^Stalled: no new metrics row for \d+ s, more than 1 s \(RL_STALL_SECONDS\)/);
  assert.deepEqual(leftovers([join(home, 'runs', runId)]), []);
});

test("a failed run resumed continues from its last checkpoint's batch, its history and spend carried on", async (t) => {
  install.cookbookControl({ step_seconds: 0.1, fail_at_step: 3 });
  const h = await server(t, {}, 5);
  await h.call('rl_select_environment', { name: 'math_rl' });
  const runId = await start(h, { groups_per_batch: 2, group_size: 2, save_every: 2 });
  const failed = await waitForRun(h, runId, 'ends', (r) => ENDED.includes(r.status));
  assert.equal(failed.status, 'failed');
  assert.match(failed.error!, /RuntimeError: simulated failure in batch 3/);
  const before = (await h.call('rl_check_status', { run_id: runId })).json;
  assert.equal(before.cost.spent_usd > 0, true, JSON.stringify(before.cost));
  const checkpoints = readFileSync(join(home, 'runs', runId, 'cookbook', 'checkpoints.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(checkpoints.map((c) => c.name), ['000002']);

  // An Atropos run cannot be resumed, and says why.
  const atropos = writeRunDir(home, { runId: 'aaaa0001', createdMs: Date.now() - 60_000, status: 'failed' });
  const refused = await h.call('rl_resume_training', { run_id: atropos.run_id });
  assert.equal(refused.isError, true);
  assert.match(refused.json.error, /is an Atropos run, which cannot be resumed: tinker-atropos' trainer/);

  install.cookbookControl({ step_seconds: 0.1 });
  const resumed = await h.call('rl_resume_training', { run_id: runId });
  assert.equal(resumed.isError, false, JSON.stringify(resumed.json));
  assert.deepEqual([resumed.json.status, resumed.json.resumed_from_step, resumed.json.state_path, resumed.json.resumes], ['starting', 2, checkpoints[0].state_path, 1]);
  const done = await waitForRun(h, runId, 'ends again', (r) => ENDED.includes(r.status));
  assert.equal(done.status, 'completed', done.error);
  assert.deepEqual(tinker.calls('load_state_with_optimizer').map((c) => c.args.path), [checkpoints[0].state_path], 'the recipe was given the state path');
  assert.deepEqual(done.resumes!.map((r) => [r.from_step, r.state_path, r.after.status]), [[2, checkpoints[0].state_path, 'failed']]);
  const rows = readFileSync(join(home, 'runs', runId, 'cookbook', 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).step);
  assert.deepEqual(rows, [0, 1, 2, 2, 3, 4], 'batch 2 ran again after the resume; the rows before it stay');
  const results = (await h.call('rl_get_results', { run_id: runId })).json;
  assert.deepEqual(results.history.map((r: any) => r._step), [0, 1, 2, 3, 4]);
  assert.deepEqual(results.progress, { step: 5, total_steps: 5 });
  assert.ok(results.cost.spent_usd > before.cost.spent_usd, 'spend carries on');
  assert.match(results.cost.basis, /6 batch rows/);
  const again = await h.call('rl_resume_training', { run_id: runId });
  assert.match(again.json.error, /completed: it has nothing left to train/);

  // Tinker's own records of the run come from the sampler paths its checkpoints.jsonl names: both kinds it saved, with their sizes.
  const saved = readFileSync(join(home, 'runs', runId, 'cookbook', 'checkpoints.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const listed = (await h.call('rl_checkpoints', { run_id: runId, action: 'list' })).json;
  const expected = saved.flatMap((c) => [c.state_path, c.sampler_path]).filter((p) => p !== undefined).sort();
  assert.deepEqual(listed.checkpoints.map((c: any) => c.path).sort(), expected, JSON.stringify(listed).slice(0, 800));
  assert.deepEqual([...new Set(listed.checkpoints.map((c: any) => c.kind))].sort(), ['sampler', 'state']);
  assert.ok(listed.checkpoints.every((c: any) => c.size_bytes > 0));
  assert.equal((await h.call('rl_get_results', { run_id: runId })).json.storage.checkpoints, expected.length);
});

test('rl_evaluate compares the verifiers run\'s checkpoint with its base model through verifiers\' eval; a math_rl run is refused with the reason', async (t) => {
  assert.ok(verifiersRun && mathRun, 'the runs of the tests above');
  const h = await server(t);
  const evaluated = await h.call('rl_evaluate', { run_id: verifiersRun, num_items: 5, group_size: 2, wait_seconds: 200 });
  assert.equal(evaluated.isError, false, JSON.stringify(evaluated.json));
  assert.equal(evaluated.json.method, 'vf_eval');
  assert.match(evaluated.json.method_reason, /verifiers' own eval/);
  assert.deepEqual(evaluated.json.models.map((m: any) => [m.label, m.items]), [['base', 5], [evaluated.json.checkpoints[0], 5]]);
  assert.equal(evaluated.json.verdict.verdict, 'better', JSON.stringify(evaluated.json.verdict));
  assert.ok(oai.requests.some((r) => r.model?.startsWith('tinker://') && r.authorized), 'the checkpoint was sampled at the Tinker endpoint with the Tinker key');
  const refused = await h.call('rl_evaluate', { run_id: mathRun });
  assert.equal(refused.isError, true);
  assert.match(refused.json.error, /math_rl, which has no evaluation the server can run against an endpoint/);
});

test('rl_compare_runs, rl_list_runs and the dashboard put a cookbook run beside an Atropos run', async (t) => {
  const h = await server(t, {}, 200, true);
  const atropos = writeRunDir(home, { runId: 'aaaa0002', createdMs: Date.now() - 30_000, status: 'completed' });
  writeFileSync(atropos.config_path, stringify({ env: { group_size: 16, batch_size: 128 }, tinker: { wandb_project: 'p' } }));
  const compared = await h.call('rl_compare_runs', { run_ids: [atropos.run_id, verifiersRun!] });
  assert.equal(compared.isError, false, JSON.stringify(compared.json));
  const [a, c] = compared.json.runs;
  assert.deepEqual([a.status, c.status], ['completed', 'stopped']);
  assert.ok(c.steps >= 5);
  assert.equal(typeof c.metrics.reward_mean.final, 'number');
  assert.equal(compared.json.best.run_id, verifiersRun, 'only the cookbook run has a reward (from its metrics.jsonl)');
  assert.deepEqual(compared.json.differing_config.group_size, { [atropos.run_id]: 16, [verifiersRun!]: 2 });

  const listed = (await h.call('rl_list_runs', { limit: 50 })).json.runs;
  const frameworkOf = (id: string) => listed.find((r: any) => r.run_id === id)?.framework;
  assert.deepEqual([frameworkOf(atropos.run_id), frameworkOf(verifiersRun!)], ['atropos', 'cookbook']);
  const snapshot = (await h.call('rl_dashboard_snapshot', { run_ids: [verifiersRun!, atropos.run_id] })).json;
  assert.equal(snapshot.runs.length, 2, JSON.stringify(snapshot).slice(0, 500));
  const [dashCookbook, dashAtropos] = snapshot.runs;
  assert.ok(dashCookbook.series.reward_mean.points.length >= 5, JSON.stringify(dashCookbook.series.reward_mean));
  assert.deepEqual(dashCookbook.series.reward_mean.points.map((p: number[]) => p[0]).slice(0, 3), [0, 1, 2], 'one point per batch of metrics.jsonl');
  assert.equal(dashAtropos.status, 'completed');
});

test('rl_test_inference smoke-tests the verifiers environment with verifiers\' eval against an endpoint; a recipe is refused', async (t) => {
  const endpoint = await startFakeOpenAI({ apiKey: ENDPOINT_KEY, models: { right: { mode: 'right' }, wrong: { mode: 'wrong' } }, solve: gsm8kSolver() });
  t.after(() => endpoint.close());
  const h = await server(t, { OPENROUTER_API_KEY: ENDPOINT_KEY });
  const tested = await h.call('rl_test_inference', { environment: 'cookbook:gsm8k', models: ['right', 'wrong'], base_url: endpoint.baseUrl, num_steps: 3, group_size: 2, wait_seconds: 120 });
  assert.equal(tested.isError, false, JSON.stringify(tested.json));
  assert.deepEqual(tested.json.models_tested.map((m: any) => [m.model, m.accuracy, m.total_completions]), [['right', 1, 6], ['wrong', 0, 6]]);
  assert.ok(endpoint.requests.length >= 12 && endpoint.requests.every((r) => r.authorized), 'the key reached the endpoint from the variable verifiers was told');
  const refused = await h.call('rl_test_inference', { environment: 'math_rl', models: ['right'], base_url: endpoint.baseUrl });
  assert.match(refused.json.error, /math_rl is a tinker-cookbook recipe/);
});
