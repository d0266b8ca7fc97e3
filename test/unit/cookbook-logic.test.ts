/**
 * The cookbook framework's pure decisions, as tables: readiness, the outcome rules, the first
 * cause in a recipe's output, chz's argv, what metrics.jsonl and checkpoints.jsonl say, where a
 * resume starts and when a run may be resumed, spend from logged tokens, health after a resume,
 * name clashes between frameworks, the operator's locks under the cookbook's names, and verifiers'
 * eval results read back.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { test } from 'node:test';
import { cookbookLockedValues } from '../../src/runtime/config/cookbookFields.js';
import { spendOf, type CostPlan } from '../../src/runtime/cost/spend.js';
import { joinReports, splitSelector } from '../../src/runtime/environments/catalog.js';
import type { DiscoveredEnvironment, DiscoveryReport } from '../../src/runtime/environments/report.js';
import { byExample, vfRowsFailure, type VfRow } from '../../src/runtime/inference/vfEval.js';
import { addLogSignals, lastState, MetricsScanner, parseCheckpoints, type LogSignals } from '../../src/runtime/runs/cookbook/files.js';
import { nextObservations } from '../../src/runtime/runs/cookbook/observer.js';
import { resumePointOf } from '../../src/runtime/runs/cookbook/resume.js';
import { firstCause, trainerReadiness, verdictOf } from '../../src/runtime/runs/cookbook/rules.js';
import { chzArgument, estimateCookbook, pythonLiteral, stepsOf } from '../../src/runtime/runs/cookbook/start.js';
import type { RunRecord } from '../../src/runtime/runs/seams/record.js';
import { resumedRecord, resumeRefusal, resumeRun } from '../../src/runtime/runs/resume.js';
import { placementOf } from '../../src/runtime/runs/choice/placements.js';
import { RunStore } from '../../src/runtime/runs/registry/store.js';
import { assessHealth } from '../../src/runtime/runs/watching/health.js';
import { loadSettings } from '../../src/runtime/config/settings.js';
import { writeFailedCookbookRun } from '../helpers/registry.js';
import { tempDir } from '../helpers/tmp.js';

test('readiness: the process lives and wrote config.json since it started (a second of slack)', () => {
  const started = 1_000_000;
  const rows: [Parameters<typeof trainerReadiness>[0], string][] = [
    [{ running: true, startedMs: started }, 'waiting'],
    [{ running: true, startedMs: started, configWrittenMs: started + 50 }, 'ready'],
    [{ running: true, startedMs: started, configWrittenMs: started - 900 }, 'ready'],
    // A resumed run finds the config.json of its earlier start: not ready on that.
    [{ running: true, startedMs: started, configWrittenMs: started - 60_000 }, 'waiting'],
    [{ running: false, startedMs: started, configWrittenMs: started + 50 }, 'waiting'],
  ];
  for (const [facts, want] of rows) assert.equal(trainerReadiness(facts), want, JSON.stringify(facts));
});

test('outcome: exit 0 (or unseen) with the final checkpoint completes; anything else fails with its cause', () => {
  const exited = (exit_code: number | null, signal: string | null = null) => ({ state: 'exited' as const, exit_code, signal });
  assert.equal(verdictOf({ trainer: { state: 'running', exit_code: null, signal: null }, finalSaved: false }), undefined);
  assert.deepEqual(verdictOf({ trainer: exited(0), finalSaved: true }), { status: 'completed' });
  assert.deepEqual(verdictOf({ trainer: exited(null), finalSaved: true }), { status: 'completed' });
  const failed = verdictOf({ trainer: exited(1), finalSaved: false, cause: 'RuntimeError: boom' });
  assert.deepEqual(failed, { status: 'failed', error: 'The recipe ended without its final checkpoint (exit code 1): RuntimeError: boom', error_process: 'trainer' });
  assert.match(verdictOf({ trainer: exited(0), finalSaved: false })!.error!, /without its final checkpoint \(exit code 0\)\.$/);
  assert.match(verdictOf({ trainer: exited(null, 'SIGKILL'), finalSaved: true })!.error!, /saved its final checkpoint but then ended abnormally \(killed by SIGKILL\)/);
  assert.match(verdictOf({ trainer: exited(null), finalSaved: false })!.error!, /exit code unknown/);
});

test('first cause: the exception of the last traceback, chz\'s message, else the billing pause', () => {
  const traceback = ['Traceback (most recent call last):', '  File "x.py", line 1, in <module>', '    raise KeyError', "KeyError: 'Qwen9-1B'"];
  const rows: [string[], string | undefined][] = [
    [traceback, "KeyError: 'Qwen9-1B'"],
    [['noise', ...traceback, '\x1b[92mINFO\x1b[0m after'], "KeyError: 'Qwen9-1B'"],
    [['Traceback (most recent call last):', '  File "a"', 'tinker._exceptions.BadRequestError: Error code: 400 - {"detail": "retired"}'], 'tinker._exceptions.BadRequestError: Error code: 400 - {"detail": "retired"}'],
    [['Error:', "Extraneous argument 'lora_rnk' to Blueprint for CLIConfig", "Did you mean 'lora_rank'?"], "chz: Extraneous argument 'lora_rnk' to Blueprint for CLIConfig Did you mean 'lora_rank'?"],
    [['tinker.lib.internal_client_holder:340 [WARNING] The job is paused due to billing status. Error: balance'], 'tinker.lib.internal_client_holder:340 [WARNING] The job is paused due to billing status. Error: balance'],
    [['all is well'], undefined],
  ];
  for (const [lines, want] of rows) assert.equal(firstCause(lines), want, lines.join(' | '));
});

test("chz's argv: text as is, numbers and booleans as Python, containers as literals, vf_env_args as JSON", () => {
  const rows: [string, Parameters<typeof chzArgument>[1], string][] = [
    ['model_name', 'Qwen/Qwen3-8B', 'model_name=Qwen/Qwen3-8B'],
    ['learning_rate', 0.00004, 'learning_rate=0.00004'],
    ['compute_post_kl', false, 'compute_post_kl=False'],
    ['loss_fn_config', { clip: 0.2, on: true, none: null }, 'loss_fn_config={"clip": 0.2, "on": True, "none": None}'],
    ['vf_env_args', { num_train_examples: 4, flag: true }, 'vf_env_args={"num_train_examples":4,"flag":true}'],
    ['dataset_seed', null, 'dataset_seed=None'],
  ];
  for (const [name, value, want] of rows) assert.equal(chzArgument(name, value), want);
  assert.equal(pythonLiteral(['a', [1, false]]), '["a", [1, False]]');
});

test('metrics.jsonl: the last row of a repeated step wins, every row counts for tokens, NaN is read', () => {
  const scanner = new MetricsScanner(true);
  const row = (step: number, reward: number | string, ob = 100, ac = 10) => `{"step": ${step}, "env/all/reward/total": ${reward}, "env/all/total_ob_tokens": ${ob}, "env/all/total_ac_tokens": ${ac}}\n`;
  scanner.feed(row(0, 0.1) + row(1, 0.2) + row(2, 0.3));
  // A resumed run runs batch 2 again; a line still being written waits for its newline.
  scanner.feed(row(2, 0.35) + row(3, 'NaN').trimEnd());
  assert.equal(scanner.maxStep, 2);
  scanner.feed('\n{"no step": 1}\nnot json\n');
  assert.equal(scanner.maxStep, 3);
  assert.deepEqual([...scanner.rewards.entries()], [[0, 0.1], [1, 0.2], [2, 0.35], [3, 'NaN']]);
  assert.deepEqual(scanner.tokens, { rows: 5, prompt_tokens: 500, completion_tokens: 50 });
  assert.equal(scanner.rows!.get(2)!['env/all/reward/total'], 0.35);
});

test('checkpoints.jsonl: records read in order, a resume starts from the last one with a state', () => {
  const text = ['{"name": "000002", "batch": 2, "state_path": "tinker://r/weights/000002", "sampler_path": "tinker://r/sampler_weights/000002"}', '{"name": "000003", "batch": 3, "state_path": "tinker://r/weights/000003", "rolling": true}', 'garbage', '{"name": "000004", "batch": 4, "sampler_path": "tinker://r/sampler_weights/000004"}'].join('\n');
  const records = parseCheckpoints(text);
  assert.deepEqual(records.map((r) => r.name), ['000002', '000003', '000004']);
  assert.equal(lastState(records)?.name, '000003');
  assert.deepEqual(resumePointOf({ run_id: 'r' }, lastState(records)), { from_step: 3, state_path: 'tinker://r/weights/000003' });
  assert.throws(() => resumePointOf({ run_id: 'r' }, undefined), /saved no resumable state/);
  assert.throws(() => resumePointOf({ run_id: 'r' }, { name: 'final', batch: 5, state_path: 'tinker://r/weights/final' }), /nothing left to train/);
});

test('logs.log: batches to train on, the billing pause and logged errors, counted with their latest line', () => {
  const signals: LogSignals = {};
  assert.equal(addLogSignals(signals, ['tinker_cookbook.rl.train:1991 [INFO] Will train on 7 batches'], 't1'), false);
  assert.equal(signals.total_steps, 7);
  const pause = 'tinker.lib.internal_client_holder:340 [WARNING] The job is paused due to billing status. Error: balance exhausted';
  assert.equal(addLogSignals(signals, [pause, pause, 'x:1 [ERROR] rollout failed'], 't2'), true);
  assert.deepEqual(signals.billing_paused, { line: pause, count: 2, at: 't2' });
  assert.deepEqual(signals.errors, { line: 'x:1 [ERROR] rollout failed', count: 1, at: 't2' });
});

test('observations: a new row is new data, a higher step a completed step; a repeated step is data, not a step', () => {
  const scanner = new MetricsScanner();
  scanner.feed('{"step": 0, "env/all/reward/total": 0.5}\n');
  const state = { metrics: scanner, checkpoints: [], signals: { total_steps: 3 } };
  const first = nextObservations(undefined, state, 'a');
  assert.deepEqual([first.next.steps_completed, first.next.step_completed_at, first.next.data_first_at, first.next.total_steps], [1, 'a', 'a', 3]);
  const same = nextObservations(first.next, state, 'b');
  assert.equal(same.changed, false);
  assert.equal(same.next.data_last_at, 'a');
  scanner.feed('{"step": 0, "env/all/reward/total": 0.6}\n');
  const repeated = nextObservations(same.next, state, 'c');
  assert.deepEqual([repeated.changed, repeated.next.steps_completed, repeated.next.step_completed_at, repeated.next.data_last_at], [true, 1, 'a', 'c']);
  assert.deepEqual(repeated.next.recent_rewards, [0.6]);
});

const PRICE = { prefill: 0.2, sample: 0.6, train: 0.4, as_of: '2026-10-07', source: 'test' };
const PLAN: CostPlan = { estimate: true, model: 'm', total_steps: 10, batch_size: 8, group_size: 2, total_usd: { high: 1 }, price: PRICE, spend_scenario: 'high', lengths: { prompt: 100, completion: 100, trained: 200 }, unknown: [] };

test('spend from logged tokens: prompts prefilled, completions sampled, both trained; the rest at their mean per row', () => {
  const logged = { rows: 4, prompt_tokens: 1_000_000, completion_tokens: 500_000 };
  const spend = spendOf(PLAN, { steps: 3, total_steps: 10, logged })!;
  // 1M x 0.2 + 0.5M x 0.6 + 1.5M x 0.4 = 0.2 + 0.3 + 0.6 = $1.10 over 4 rows; 7 steps left at $0.275.
  assert.equal(spend.spent_usd, 1.1);
  assert.equal(spend.remaining_usd, 1.925);
  assert.match(spend.basis, /^from the tokens the run logged \(metrics\.jsonl, 4 batch rows: 1000000 prompt \+ 500000 sampled tokens/);
  // Without logged tokens (or none counted), the lengths at start.
  assert.match(spendOf(PLAN, { steps: 3, logged: { rows: 3, prompt_tokens: 0, completion_tokens: 0 } })!.basis, /^estimate: 3 steps done/);
});

test('resume: only a failed or stopped run; its record starts again with its history kept and how it ended recorded', () => {
  const home = tempDir('rlmcp-home-');
  const record = writeFailedCookbookRun(home, 'abcd0001', ['python', '-m', 'recipe']) as RunRecord;
  record.observed = { observed_at: 'x', steps_completed: 3, logged_tokens: { rows: 3, prompt_tokens: 30, completion_tokens: 3 } };
  for (const status of ['starting', 'running', 'stopping', 'completed'] as const) assert.ok(resumeRefusal({ ...record, status }), status);
  for (const status of ['failed', 'stopped'] as const) assert.equal(resumeRefusal({ ...record, status }), undefined, status);
  const resumed = resumedRecord(record, { from_step: 2, state_path: 'tinker://s' }, '2026-11-25T00:00:00.000Z');
  assert.deepEqual([resumed.status, resumed.phase, resumed.phase_started_at], ['starting', 'starting_trainer', '2026-11-25T00:00:00.000Z']);
  assert.deepEqual(resumed.processes.trainer, { ...record.processes.trainer, state: 'not_started', started_at: null, ended_at: null });
  assert.equal(resumed.error, undefined);
  assert.equal(resumed.ended_at, undefined);
  assert.deepEqual(resumed.observed, record.observed);
  assert.deepEqual(resumed.resumes, [{ at: '2026-11-25T00:00:00.000Z', from_step: 2, state_path: 'tinker://s', after: { status: 'failed', error: record.error, ended_at: record.ended_at } }]);
  assert.equal(resumedRecord(resumed as RunRecord & { status: 'failed' }, { from_step: 4, state_path: 'tinker://t' }, 'later').resumes!.length, 2);
});

test('health after a resume: progress counts from the new start, with the first-step allowance again', () => {
  const began = Date.parse('2026-11-25T10:00:00Z');
  const record = {
    status: 'running',
    phase: 'training',
    running_at: new Date(began).toISOString(),
    phase_started_at: new Date(began).toISOString(),
    processes: { trainer: { state: 'running' } },
    framework: 'cookbook',
    resumes: [{ at: 'x', from_step: 2, state_path: 's', after: { status: 'failed' } }],
    observed: { observed_at: 'x', steps_completed: 3, step_completed_at: '2026-11-25T09:00:00Z', data_first_at: '2026-11-25T08:00:00Z', data_last_at: '2026-11-25T09:00:00Z' },
  } as unknown as RunRecord;
  const policy = { stallSeconds: 60 };
  assert.equal(assessHealth(record, began + 90_000, policy).verdict, 'healthy', 'an hour-old last step is not this start\'s stall');
  const stalled = assessHealth(record, began + 121_000, policy);
  assert.equal(stalled.verdict, 'stalled');
  assert.match(stalled.reasons[0]!.message, /^Stalled: no new metrics row for 121 s, more than 120 s \(before the first step since the run resumed the limit is 2 x RL_STALL_SECONDS=60\)/);
  // Once a step completes after the resume, the plain limit applies.
  const stepped = { ...record, observed: { ...record.observed!, steps_completed: 4, step_completed_at: new Date(began + 30_000).toISOString() } } as RunRecord;
  assert.equal(assessHealth(stepped, began + 91_000, policy).verdict, 'stalled');
});

test('a billing pause in the trainer log is a reason of its own, quoted', () => {
  const now = Date.parse('2026-11-25T10:00:30Z');
  const record = {
    status: 'running',
    phase: 'training',
    running_at: '2026-11-25T10:00:00Z',
    phase_started_at: '2026-11-25T10:00:00Z',
    processes: { trainer: { state: 'running' } },
    framework: 'cookbook',
    observed: { observed_at: 'x', steps_completed: 1, step_completed_at: '2026-11-25T10:00:10Z', data_first_at: '2026-11-25T10:00:10Z', data_last_at: '2026-11-25T10:00:10Z', trainer_signals: { billing_paused: { line: 'The job is paused due to billing status. Error: x', count: 2, at: '2026-11-25T10:00:20Z' } } },
  } as unknown as RunRecord;
  const health = assessHealth(record, now, { stallSeconds: 600 });
  assert.equal(health.verdict, 'degraded');
  assert.equal(health.reasons[0]!.code, 'billing_paused');
  assert.deepEqual(health.reasons[0]!.evidence, { line: 'The job is paused due to billing status. Error: x', count: 2, at: '2026-11-25T10:00:20Z', process: 'trainer' });
});

const env = (name: string, file: string, framework?: 'cookbook'): DiscoveredEnvironment => ({ name, class_name: framework ? 'load_environment' : 'Env', file_path: file, description: '', config_class: 'C', managed_server: true, server_configs: 'list', ...(framework ? { framework, recipe: 'verifiers_rl', vf_env_id: name } : {}) });

test('a name two frameworks use is listed as a duplicate, each picked with its framework in front', () => {
  const atropos: DiscoveryReport = { environments: [env('gsm8k', '/a/gsm8k.py'), env('word_sort', '/a/ws.py')], skipped: [], duplicates: [], abstract: [] };
  const joined = joinReports(atropos, [env('gsm8k', '/site/gsm8k/__init__.py', 'cookbook'), env('math_rl', '/cb/math_rl/train.py', 'cookbook')]);
  assert.deepEqual(joined.environments.map((e) => `${e.framework ?? 'atropos'}:${e.name}`), ['atropos:gsm8k', 'cookbook:gsm8k', 'cookbook:math_rl', 'atropos:word_sort']);
  assert.deepEqual(joined.duplicates, [{ name: 'gsm8k', file_paths: ['/a/gsm8k.py', '/site/gsm8k/__init__.py'], select_as: ['atropos:gsm8k', 'cookbook:gsm8k'] }]);
  assert.deepEqual(splitSelector('cookbook:gsm8k'), { framework: 'cookbook', name: 'gsm8k' });
  assert.deepEqual(splitSelector('atropos:gsm8k'), { framework: 'atropos', name: 'gsm8k' });
  assert.deepEqual(splitSelector('other:gsm8k'), { name: 'other:gsm8k' });
});

test("the operator's own locks under the cookbook's names; tinker-atropos' built-in locks do not apply", () => {
  const settings = loadSettings({ HOME: tempDir(), RL_HOME: tempDir() });
  assert.equal(settings.locked.env.total_steps, 2500, 'an Atropos run still has them');
  assert.deepEqual(cookbookLockedValues(settings), {}, "without the operator's config the recipe's defaults stand");
  const dir = tempDir();
  const file = join(dir, 'rl.yaml');
  writeFileSync(file, 'locked:\n  env: {total_steps: 7, use_wandb: false, steps_per_eval: 5}\n  openai: {model_name: Qwen/Qwen3-32B}\n  tinker: {learning_rate: 0.0002}\nunlocked: [steps_per_eval]\n');
  const operated = loadSettings({ HOME: dir, RL_HOME: tempDir(), RL_MCP_CONFIG: file });
  assert.deepEqual(cookbookLockedValues(operated), { model_name: 'Qwen/Qwen3-32B', learning_rate: 0.0002, max_steps: 7 });
  assert.deepEqual(operated.operatorLocked.env, { total_steps: 7, use_wandb: false });
});

test('estimates count the steps a recipe trains, min(max_steps, its dataset\'s batches) where its source says them, and whole prompts', () => {
  const arithmetic = [{ field: 'env', value: 'arithmetic', batches: 100 }];
  const rows: [Record<string, unknown>, number, RegExp][] = [
    [{ env: 'arithmetic', max_steps: null }, 100, /^steps: 100, the 100 batches its dataset holds \(env=arithmetic/],
    [{ env: 'arithmetic', max_steps: 2500 }, 100, /min\(max_steps 2500, the 100 batches/],
    [{ env: 'arithmetic', max_steps: 3 }, 3, /^steps: 3, min\(max_steps 3/],
    [{ env: 'gsm8k', max_steps: 40 }, 40, /max_steps 40 is an upper bound/],
    [{ env: 'gsm8k', max_steps: null }, 100, /max_steps is unset and the dataset's size is not known before the run .*100 steps are assumed/],
  ];
  for (const [values, steps, says] of rows) {
    const got = stepsOf(values as never, arithmetic);
    assert.equal(got.steps, steps, JSON.stringify(values));
    assert.match(got.fact ?? got.unknown!, says);
  }
  const settings = loadSettings({ HOME: tempDir(), RL_HOME: tempDir() });
  const selection = (values: Record<string, unknown>) => ({ environment: { name: 'math_rl', file_path: '/cb/math_rl/train.py', framework: 'cookbook' as const, recipe: 'math_rl', dataset_batches: arithmetic }, values: values as never, wandbProject: 'p' });
  // math_rl's defaults: Qwen/Qwen3.5-9B, 100 problems x 4 samples of at most 5 tokens, all 100 batches.
  const priced = { ...settings, cost: { ...settings.cost, prices: { 'Qwen/Qwen3.5-9B': { prefill: 0.2, sample: 0.6, train: 0.45, as_of: '2026-11-01', source: 't' } } } };
  const e = estimateCookbook(priced, selection({ model_name: 'Qwen/Qwen3.5-9B', env: 'arithmetic', group_size: 4, groups_per_batch: 100, max_tokens: 5, max_steps: null }));
  assert.deepEqual(e.shape, { model: 'Qwen/Qwen3.5-9B', total_steps: 100, batch_size: 400, group_size: 4, max_token_length: 5 });
  assert.deepEqual(e.lengths?.high, { prompt: 1024, completion: 5, trained: 1029 }, 'prompts are not bounded by max_tokens: a cookbook run sends them whole');
  assert.doesNotMatch(JSON.stringify(e), /atroposlib/);
  assert.match(e.total_usd.high!.basis, /prompts assumed at 1024 tokens \(no inference test measured this environment; a cookbook run sends whole prompts, none is dropped\)/);
  assert.match(e.assumptions[0]!, /Will train on 100 batches/);
});

test("verifiers' eval results: rollouts grouped by example; every rollout failing at the endpoint says why", () => {
  const row = (example_id: number, reward: number, error: string | null = null): VfRow => ({ example_id, reward, error, prompt: [], completion: [] });
  assert.deepEqual(byExample([row(1, 1), row(0, 0), row(1, 0)]).map((g) => g.map((r) => r.reward)), [[0], [1, 0]]);
  const ctx = { baseUrl: 'http://x/v1', model: 'm' };
  assert.equal(vfRowsFailure([row(0, 0, 'ModelError(AuthenticationError())'), row(0, 1)], ctx), undefined);
  const rows: [string, string][] = [
    ["ModelError(AuthenticationError('Error code: 401'))", 'authentication'],
    ["ModelError(NotFoundError('Error code: 404'))", 'model_not_found'],
    ['ModelError(RateLimitError())', 'rate_limited'],
    ['ModelError(APIConnectionError())', 'unreachable'],
    ['ModelError(InternalServerError())', 'endpoint_error'],
  ];
  for (const [error, kind] of rows) assert.equal(vfRowsFailure([row(0, 0, error)], ctx)?.kind, kind, error);
});

test('resume: a run placed on Slurm is refused with the way forward, its record untouched; a local one passes that check', async () => {
  const home = tempDir('rlmcp-home-');
  const settings = loadSettings({ RL_HOME: home });
  const store = new RunStore(home);
  const ctx = { settings, logger: pino({ level: 'silent' }), store, activeRuns: () => [], supervise: () => assert.fail('nothing is supervised') };
  const onSlurm = { ...writeFailedCookbookRun(home, 'abcd0003', ['python', '-m', 'recipe']), placement: 'slurm' as const, slurm_job_id: '17' };
  writeFileSync(join(home, 'runs', 'abcd0003', 'run.json'), JSON.stringify(onSlurm));
  await assert.rejects(resumeRun(ctx, 'abcd0003'), /placed on Slurm cannot be resumed in place yet: its job ended with it\. Start a new run/);
  assert.deepEqual(JSON.parse(readFileSync(join(home, 'runs', 'abcd0003', 'run.json'), 'utf8')), onSlurm);
  assert.equal(placementOf(writeFailedCookbookRun(home, 'abcd0004', ['python']), settings).resumeRefusal, undefined);
});
