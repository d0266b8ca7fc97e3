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
import { writeRunDir, writeVerifiersRun } from './helpers/registry.js';
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
// The recipes' own default models (math_rl's Qwen/Qwen3.5-9B, verifiers_rl's Qwen/Qwen3.5-4B), served.
tinker.setModels(['Qwen/Qwen3-8B', 'Qwen/Qwen3.5-9B', 'Qwen/Qwen3.5-4B']);
// What every sample of the fake SDK says: right for one of the gsm8k training problems (answer 29).
tinker.setService({ sample_text: 'Adding up: \\boxed{29}' });
const install = await makeFakeInstall({ cookbook: true, tinkerState: tinker.dir });
const oai = await startFakeTinkerOai({ apiKey: KEY, baseModels: { 'Qwen/Qwen3-8B': 0.2, 'Qwen/Qwen3.5-4B': 0.2 }, checkpoint: (path) => (/\/sampler_weights\/(?:\d{6}|final)$/.test(path) ? 0.9 : undefined), solve: gsm8kSolver() });
after(() => oai.close());
const home = newHome();
after(() => killLeftovers([install.root, home]));

const ENDED = ['completed', 'failed', 'stopped'];
/** Prices of the recipes' default models (the shipped table has Qwen/Qwen3-8B only), so runs have dollar figures. */
const price = { prefill: 0.2, sample: 0.6, train: 0.45, as_of: new Date().toISOString().slice(0, 10), source: 'test' };
const PRICES = { 'Qwen/Qwen3.5-9B': price, 'Qwen/Qwen3.5-4B': price, 'Qwen/Qwen2-0.5B': price };
/** Runs later tests evaluate and compare. */
let verifiersRun: string | undefined;
let mathRun: string | undefined;

async function server(t: Parameters<typeof runServer>[0], env: Record<string, string> = {}, lockedSteps = 200, apps = false): Promise<RunServer> {
  return runServer(t, { install, home, select: false, lockedEnv: { total_steps: lockedSteps }, config: { prices: PRICES }, env: { TINKER_API_KEY: KEY, TINKER_OAI_BASE_URL: oai.baseUrl, ...env }, ...(apps ? { capabilities: APPS_CLIENT_CAPABILITIES } : {}) });
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
  assert.deepEqual(Object.keys(listed).sort(), ['gsm8k', 'harbor_rl', 'math_rl', 'search_tool'], 'RL recipes and the verifiers environment; the supervised chat_sl is left out');
  // Recipes whose optional extras a plain install lacks say what they import that RL_PYTHON cannot, and the extra that brings it.
  assert.equal(listed.math_rl.lacks, undefined);
  assert.deepEqual([listed.harbor_rl.lacks.modules, listed.harbor_rl.lacks.extras], [['modal'], ['modal']]);
  assert.equal(listed.harbor_rl.lacks.at_start, false, 'modal is imported where a sandbox is made, not as the recipe loads');
  assert.match(listed.harbor_rl.lacks.install, /^Its code imports modal \(\[modal\] extra\) where it uses it, which RL_PYTHON cannot: a run that reaches that code fails there\. Install into RL_PYTHON: pip install 'tinker-cookbook\[modal\]'\.$/);
  assert.equal(listed.search_tool.lacks.at_start, true);
  assert.deepEqual([listed.search_tool.lacks.modules, listed.search_tool.lacks.extras], [['chromadb', 'google.genai', 'pandas'], ['vector-search']]);
  assert.match(listed.search_tool.lacks.install, /^It imports chromadb \(\[vector-search\] extra\), google\.genai \(\[vector-search\] extra\), pandas as it starts, which RL_PYTHON cannot: a start would fail on ModuleNotFoundError\. Install into RL_PYTHON: pip install 'tinker-cookbook\[vector-search\]' and pip install pandas\.$/);
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
  // Only what the operator's config locks (total_steps: 200); the recipe's tuned defaults stand for the rest.
  assert.deepEqual(config.json.locked_fields.map((f: any) => [f.name, f.locked_value]), [['max_steps', 200]]);
  assert.deepEqual([fields.model_name.default, fields.learning_rate.default, fields.max_tokens.default], ['Qwen/Qwen3.5-9B', 0.00001, 5]);
  await edit(h, { groups_per_batch: 2, group_size: 2, save_every: 2 });
  const locked = await h.call('rl_edit_config', { field: 'max_steps', value: 8 });
  assert.deepEqual([locked.isError, locked.json.locked_value], [true, 200]);
  const badEnum = await h.call('rl_edit_config', { field: 'loss_fn', value: 'sft' });
  assert.match(badEnum.json.expected, /one of cross_entropy, importance_sampling/);

  // The recipe trains min(max_steps 200, the 100 batches env=arithmetic holds), as it will log; its prompts are not bounded by max_tokens.
  const planned = (await h.call('rl_start_training', { dry_run: true })).json;
  assert.equal(planned.cost_estimate.shape.total_steps, 100, JSON.stringify(planned.cost_estimate));
  assert.match(planned.cost_estimate.assumptions[0], /min\(max_steps 200, the 100 batches its dataset holds \(env=arithmetic/);
  assert.doesNotMatch(JSON.stringify(planned.cost_estimate), /atroposlib|at most max_tokens/);
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
  // The RL loop logs the optimizer's metrics, KL and entropy, never a loss: said so, not left as "not logged yet".
  assert.equal(status.json.metrics.loss, null);
  assert.match(status.json.metrics.not_logged.loss, /tinker-cookbook's RL loop logs its optimizer's metrics, KL and entropy/);
  assert.equal(typeof status.json.metrics.training['optim/entropy'], 'number', JSON.stringify(status.json.metrics));
  assert.equal(typeof status.json.metrics.training['optim/kl_sample_train_v1'], 'number');
  assert.match(status.json.metrics_source, /^metrics\.jsonl/);
  assert.match(status.json.cost.basis, /^from the tokens the run logged \(metrics\.jsonl/);
  await stopWithNothingLeft(h, runId);
});

test("without the operator's locks a recipe's own defaults stand; max_steps and model_name are edited; the model is checked against Tinker's list and its renderer against model_info's; budgets hold", async (t) => {
  const h = await runServer(t, { install, home, select: false, tinker, config: { locked: { env: { use_wandb: false } }, prices: PRICES }, env: { TINKER_API_KEY: KEY, RL_MAX_RUN_COST_USD: '50' } });
  await h.call('rl_select_environment', { name: 'math_rl' });
  const config = (await h.call('rl_get_current_config')).json;
  assert.deepEqual(config.locked_fields, [], 'nothing is locked: tinker-atropos\' built-in locks are not a recipe\'s');
  const dry = async (values: Record<string, unknown> = {}) => h.call('rl_start_training', { dry_run: true, config: values });
  const defaults = await dry();
  assert.equal(defaults.isError, false, JSON.stringify(defaults.json));
  assert.deepEqual([defaults.json.config.model_name, defaults.json.config.learning_rate, defaults.json.config.max_steps], ['Qwen/Qwen3.5-9B', 0.00001, undefined], JSON.stringify(defaults.json.config));
  await edit(h, { max_steps: 2, groups_per_batch: 2, group_size: 2 });
  const retired = await h.call('rl_edit_config', { field: 'model_name', value: 'Qwen/Qwen2-0.5B' });
  assert.equal(retired.isError, false, 'model_name is a recipe field like another');
  const refused = await dry();
  assert.equal(refused.isError, true);
  assert.match(refused.json.error, /Tinker no longer serves the base model Qwen\/Qwen2-0\.5B .*rl_edit_config\('model_name'/);
  const doctor = (await h.call('rl_doctor')).json.checks.find((c: any) => c.check === 'base model on Tinker');
  assert.deepEqual([doctor?.ok, doctor?.detail], [false, 'Qwen/Qwen2-0.5B is not served by Tinker (retired?)'], 'the doctor checks the recipe\'s model, not tinker-atropos\' locked one');
  await edit(h, { model_name: 'Qwen/Qwen3.5-9B' });
  const short = await dry();
  assert.deepEqual([short.isError, short.json.config.model_name, short.json.config.max_steps], [false, 'Qwen/Qwen3.5-9B', 2], JSON.stringify(short.json));
  // Another model with the Qwen3.5 chat template (verifiers_rl's default renderer): refused, naming model_info's own recommendation.
  const mismatched = await dry({ model_name: 'Qwen/Qwen3-8B', renderer_name: 'qwen3_5_disable_thinking' });
  assert.equal(mismatched.isError, true);
  assert.match(mismatched.json.error, /^renderer_name qwen3_5_disable_thinking is not a chat template tinker-cookbook's model_info recommends for Qwen\/Qwen3-8B \(qwen3, qwen3_disable_thinking\).*rl_edit_config\('renderer_name', 'qwen3'\)/);
  assert.equal((await dry({ model_name: 'Qwen/Qwen3-8B', renderer_name: 'qwen3' })).isError, false);
  assert.equal((await dry({ model_name: 'Qwen/Qwen3-8B', renderer_name: null })).isError, false, 'null: the recipe takes the recommended one');
  const overBudget = await dry({ max_steps: 100000, groups_per_batch: 1000, group_size: 64 });
  assert.equal(overBudget.isError, true);
  assert.match(overBudget.json.error, /RL_MAX_RUN_COST_USD=\$50\. Train fewer steps or smaller batches \(.*a cookbook run: max_steps, groups_per_batch, group_size/);
  // A recipe whose imports a plain install lacks is refused at start, with the extra that brings them.
  await h.call('rl_select_environment', { name: 'search_tool' });
  const lacking = await dry();
  assert.equal(lacking.isError, true);
  assert.match(lacking.json.error, /^The search_tool recipe cannot start: It imports chromadb .*pip install 'tinker-cookbook\[vector-search\]' and pip install pandas\.$/);
});

test("a verifiers environment: picked as cookbook:gsm8k and edited; at tinker-cookbook 0.5.5 the listing, the doctor and a start say verifiers_rl cannot train, and why; a math run is kept by its keeper across a restarted server, stopped with no process left", async (t) => {
  install.cookbookControl({ step_seconds: 0.2, hang_at_step: 3 });
  const h = await server(t);
  const ambiguous = await h.call('rl_select_environment', { name: 'gsm8k' });
  assert.equal(ambiguous.isError, true);
  assert.deepEqual(ambiguous.json.available, ['atropos:gsm8k', 'cookbook:gsm8k']);
  const selected = await h.call('rl_select_environment', { name: 'cookbook:gsm8k' });
  assert.deepEqual([selected.json.framework, selected.json.recipe, selected.json.vf_env_id], ['cookbook', 'verifiers_rl', 'gsm8k']);
  await edit(h, { vf_env_args: '{"num_train_examples": 8}', groups_per_batch: 1, group_size: 2, save_every: 1 });
  // The installed recipe's rollout function does not take what the cookbook's own rollouts pass: found before anything is paid for.
  const cause = /the recipe's custom_do_group_rollout\(builder, policy, strategy=None\) does not accept 'termination', which tinker_cookbook\/rl\/rollouts\.py:\d+ passes to do_group_rollout: the first batch raises TypeError/;
  const listed = (await h.call('rl_list_environments', { framework: 'cookbook' })).json.environments;
  assert.match(listed.find((e: any) => e.name === 'gsm8k').cannot_train, cause);
  assert.equal(listed.find((e: any) => e.name === 'math_rl').cannot_train, undefined);
  const refused = await h.call('rl_start_training', {});
  assert.equal(refused.isError, true);
  assert.match(refused.json.error, /^The installed tinker-cookbook's verifiers_rl recipe cannot train: /);
  assert.match(refused.json.error, cause);
  assert.equal(tinker.calls('create_lora_training_client').filter((c) => c.args.base_model === 'Qwen/Qwen3.5-4B').length, 0, 'nothing was started on Tinker');
  const doctor = (await h.call('rl_doctor')).json;
  const check = doctor.checks.find((c: any) => c.check === 'cookbook recipe');
  assert.deepEqual([check?.ok, check?.required], [false, true], JSON.stringify(doctor.checks));
  assert.match(check.fix, cause);

  await h.call('rl_select_environment', { name: 'math_rl' });
  await edit(h, { groups_per_batch: 2, group_size: 2, save_every: 1 });
  const runId = await start(h);
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

  // The `final` record (batch 5, as 000004's neighbour) is the run's trained weights: the newest, and no delete or expiry in any mode lists it.
  const weights = (await h.call('rl_get_results', { run_id: runId })).json.weights.latest;
  assert.equal(weights, saved.at(-1).sampler_path);
  assert.match(weights, /\/sampler_weights\/final$/);
  assert.deepEqual(listed.checkpoints.slice(-2).map((c: any) => c.path).sort(), [saved.at(-1).sampler_path, saved.at(-1).state_path].sort(), 'final is listed as the newest');
  const limited = (await h.call('rl_checkpoints', { run_id: runId, action: 'list', limit: 1 })).json;
  assert.match(limited.checkpoints[0].path, /\/final$/);
  const modes = [{ action: 'delete' }, { action: 'delete', keep: { latest: false, best: false } }, { action: 'set_ttl', ttl_seconds: 60 }, { action: 'set_ttl', ttl_seconds: 60, keep: { latest: false } }, { action: 'delete', keep: { latest: false }, steps: [2, 4, 5] }];
  for (const mode of modes) {
    const planned = (await h.call('rl_checkpoints', { run_id: runId, dry_run: true, ...mode })).json;
    assert.ok(planned.affected.every((p: string) => !p.includes('final')), `${JSON.stringify(mode)}: ${JSON.stringify(planned.affected)}`);
    assert.ok(planned.kept.some((k: any) => k.path === weights && /trained weights/.test(k.why)), JSON.stringify(planned.kept));
  }
  const exported = (await h.call('rl_checkpoints', { run_id: runId, action: 'export' })).json;
  assert.equal(exported.path, weights, 'export picks the trained weights by default');
});

test('rl_evaluate compares the verifiers run\'s checkpoint with its base model through verifiers\' eval; a math_rl run is evaluated through its own environments', async (t) => {
  assert.ok(mathRun, 'the run of the tests above');
  const h = await server(t);
  verifiersRun = writeVerifiersRun(home, 'cb00f001', { vfEnvId: 'gsm8k', file: install.python, env: { model_name: 'Qwen/Qwen3.5-4B', group_size: 2, groups_per_batch: 1, max_tokens: 512, vf_env_args: { num_train_examples: 8 } }, steps: 6 }).run_id;
  const evaluated = await h.call('rl_evaluate', { run_id: verifiersRun, num_items: 5, group_size: 2, wait_seconds: 200 });
  assert.equal(evaluated.isError, false, JSON.stringify(evaluated.json));
  assert.equal(evaluated.json.method, 'vf_eval');
  assert.match(evaluated.json.method_reason, /verifiers' own eval/);
  assert.deepEqual(evaluated.json.models.map((m: any) => [m.label, m.items]), [['base', 5], [evaluated.json.checkpoints[0], 5]]);
  assert.equal(evaluated.json.verdict.verdict, 'better', JSON.stringify(evaluated.json.verdict));
  assert.ok(oai.requests.some((r) => r.model?.startsWith('tinker://') && r.authorized), 'the checkpoint was sampled at the Tinker endpoint with the Tinker key');
  // Refused before #45 ("no evaluation the server can run against an endpoint"); test/cookbook-evaluate.test.ts has the whole of it.
  const recipe = await h.call('rl_evaluate', { run_id: mathRun, num_items: 4, group_size: 1, wait_seconds: 200 });
  assert.equal(recipe.isError, false, JSON.stringify(recipe.json));
  assert.deepEqual([recipe.json.method, recipe.json.models.map((m: any) => m.items)], ['recipe', [4, 4]], JSON.stringify(recipe.json));
});

test('rl_compare_runs, rl_list_runs and the dashboard put a cookbook run beside an Atropos run', async (t) => {
  const h = await server(t, {}, 200, true);
  const atropos = writeRunDir(home, { runId: 'aaaa0002', createdMs: Date.now() - 30_000, status: 'completed' });
  writeFileSync(atropos.config_path, stringify({ env: { group_size: 16, batch_size: 128 }, tinker: { wandb_project: 'p' } }));
  const compared = await h.call('rl_compare_runs', { run_ids: [atropos.run_id, verifiersRun!] });
  assert.equal(compared.isError, false, JSON.stringify(compared.json));
  const [a, c] = compared.json.runs;
  assert.deepEqual([a.status, c.status], ['completed', 'completed']);
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
  assert.equal(dashCookbook.series.loss, undefined);
  assert.match(dashCookbook.not_logged.loss, /logs its optimizer's metrics, KL and entropy/, 'the empty loss chart says why');
  assert.equal(dashAtropos.not_logged, undefined);
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
