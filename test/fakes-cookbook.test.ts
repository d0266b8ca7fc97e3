/**
 * The fake tinker-cookbook, chz and verifiers (test/fakes/cookbook/tinker_cookbook, chz, verifiers, and
 * the gsm8k environment) behave as upstream does where the product relies on them: the files a run
 * writes and their keys, the `ask` prompt on an existing log directory, resume from the last
 * checkpoint through the Tinker SDK, chz's argv errors, model and training failures, a stall, Tinker's
 * billing pause, a supervised recipe told apart from RL ones, and verifiers' evaluations, run directly
 * as a user would (`python -m tinker_cookbook.recipes.<recipe>.train key=value ...`, `vf-eval`).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { startFakeOpenAI } from './fakes/openaiServer.js';
import { makeFakeInstall } from './helpers/fakeInstall.js';
import { run, start, waitFor, type Proc } from './helpers/fakeProcesses.js';
import { makeFakeTinker } from './helpers/fakeTinker.js';
import { FAKE_COOKBOOK_PYTHONPATH, tempDir } from './helpers/tmp.js';

const TINKER_KEY = 'tml-cookbook-fake-test-5e1a';
const ENDPOINT_KEY = 'sk-cookbook-endpoint-key-77c0';
const MODEL = 'Qwen/Qwen3-8B';

const install = await makeFakeInstall({ cookbook: true });
const tinker = makeFakeTinker();
tinker.addKey(TINKER_KEY);
tinker.setModels([MODEL, 'Qwen/Qwen3.5-4B', 'Qwen/Qwen3.5-9B-Base']);

type Row = Record<string, any>;
const jsonl = (path: string): Row[] => readFileSync(path, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
const module = (recipe: string, script = 'train'): string[] => ['-m', `tinker_cookbook.recipes.${recipe}.${script}`];
const SMALL = ['groups_per_batch=2', 'group_size=2', `model_name=${MODEL}`];

/** A working directory with its own fake_cookbook.json (none when `control` is undefined). */
function workDir(control?: Record<string, unknown>): string {
  const dir = tempDir('rlmcp-cookbook-');
  if (control !== undefined) writeFileSync(join(dir, 'fake_cookbook.json'), JSON.stringify(control));
  return dir;
}

const cookbookEnv = (): Record<string, string> => ({ ...tinker.env(TINKER_KEY), PYTHONUNBUFFERED: '1' });
const runRecipe = (cwd: string, args: string[]) => run(install.python, args, { cwd, env: cookbookEnv() });
const startRecipe = (cwd: string, args: string[]): Proc => start(install.python, args, { cwd, env: cookbookEnv() });
const traceback = (stderr: string): string => stderr.trimEnd().split('\n').at(-1) ?? '';

test('a math_rl run writes config.json, metrics.jsonl, checkpoints.jsonl and logs.log as the cookbook does', async () => {
  const cwd = workDir({ rewards: [0.2, 0.4, 0.6] });
  const logPath = join(cwd, 'run');
  const result = await runRecipe(cwd, [...module('math_rl'), ...SMALL, 'max_steps=3', 'save_every=2', `log_path=${logPath}`]);
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(readdirSync(logPath).sort(), ['checkpoints.jsonl', 'code.diff', 'config.json', 'logs.log', 'metrics.jsonl']);

  // config.json is the trainer's Config, in its field order, with the dataset builder nested.
  const config = JSON.parse(readFileSync(join(logPath, 'config.json'), 'utf8'));
  assert.deepEqual(Object.keys(config).slice(0, 8), ['learning_rate', 'dataset_builder', 'model_name', 'recipe_name', 'max_tokens', 'log_path', 'eval_every', 'save_every']);
  assert.equal(config.recipe_name, 'recipe_math_rl');
  assert.equal(config.ttl_seconds, 604800);
  assert.equal(config.dataset_builder.group_size, 2);
  assert.equal(config.dataset_builder.batch_size, 2);
  assert.equal(config.max_steps, 3);

  const rows = jsonl(join(logPath, 'metrics.jsonl'));
  assert.deepEqual(rows.map((r) => r.step), [0, 1, 2]);
  assert.deepEqual(Object.keys(rows[0]!).slice(0, 4), ['step', 'progress/batch', 'optim/lr', 'progress/done_frac']);
  assert.deepEqual(rows.map((r) => r['progress/done_frac']), [1 / 3, 2 / 3, 1]);
  rows.forEach((r, i) => assert.ok(Math.abs(r['env/all/reward/total'] - [0.2, 0.4, 0.6][i]!) < 1e-9, JSON.stringify(r)));
  for (const key of ['env/all/total_ac_tokens', 'env/all/total_ob_tokens', 'optim/kl_sample_train_v1', 'optim/entropy', 'time/total']) {
    assert.ok(key in rows[0]!, `${key} in ${Object.keys(rows[0]!)}`);
  }
  assert.equal(rows[0]!['env/all/total_episodes'], 4);

  const checkpoints = jsonl(join(logPath, 'checkpoints.jsonl'));
  assert.deepEqual(checkpoints.map((c) => [c.name, c.batch]), [['000002', 2], ['final', 3]]);
  assert.deepEqual(Object.keys(checkpoints[0]!), ['name', 'batch', 'state_path', 'sampler_path']);
  assert.match(checkpoints[0]!.state_path, /^tinker:\/\/.+:train:\d+\/weights\/000002$/);
  assert.match(checkpoints[1]!.sampler_path, /^tinker:\/\/.+:train:\d+\/sampler_weights\/final$/);
  // Periodic checkpoints expire after ttl_seconds; the final one is kept (no TTL).
  const ttls = Object.fromEntries(tinker.calls('save_state').map((c) => [c.args.name, c.args.ttl_seconds]));
  assert.equal(ttls['000002'], 604800);
  assert.equal(ttls.final, null);

  const log = readFileSync(join(logPath, 'logs.log'), 'utf8').split('\n');
  assert.match(log[0]!, /^root:\d+ \[INFO\] Command line invocation: \S+math_rl\/train\.py groups_per_batch=2 /);
  assert.ok(log.some((l) => /^tinker_cookbook\.rl\.train:\d+ \[INFO\] Will train on 3 batches$/.test(l)));
  assert.match(log.filter((l) => l !== '').at(-1)!, /^tinker_cookbook\.rl\.train:\d+ \[INFO\] Training completed successfully$/);
});

test('on an existing log directory "ask" prompts on stdout and blocks until stdin answers', async () => {
  const cwd = workDir();
  const logPath = join(cwd, 'run');
  assert.equal((await runRecipe(cwd, [...module('math_rl'), ...SMALL, 'max_steps=1', `log_path=${logPath}`])).code, 0);
  const before = readFileSync(join(logPath, 'metrics.jsonl'), 'utf8');

  const child = spawn(install.python, [...module('math_rl'), ...SMALL, 'max_steps=1', `log_path=${logPath}`], { cwd, env: cookbookEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  after(() => child.kill('SIGKILL'));
  const prompt = `Log directory ${logPath} already exists. What do you want to do? [delete, resume, exit]: `;
  await waitFor('the prompt', () => out === prompt);
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal(child.exitCode, null, 'the recipe waits for an answer');
  child.stdin.write('maybe\n');
  await waitFor('the warning', () => err.includes("Invalid input: maybe. Please enter 'delete', 'resume', or 'exit'."));
  await waitFor('the prompt again', () => out === prompt + prompt);
  child.stdin.write('exit\n');
  assert.equal(await exit, 0);
  assert.equal(readFileSync(join(logPath, 'metrics.jsonl'), 'utf8'), before, 'nothing was trained');
});

test('with stdin closed, "ask" on an existing log directory ends in EOFError before any training', async () => {
  const cwd = workDir();
  const logPath = join(cwd, 'run');
  // A first run makes the log directory (at 0.5.5 verifiers_rl then fails at its first batch: TypeError).
  await runRecipe(cwd, [...module('verifiers_rl'), 'vf_env_id=gsm8k', ...SMALL, 'max_steps=1', `log_path=${logPath}`]);
  assert.ok(existsSync(join(logPath, 'config.json')));
  const calls = tinker.calls().length;
  const result = await runRecipe(cwd, [...module('verifiers_rl'), 'vf_env_id=gsm8k', ...SMALL, 'max_steps=1', `log_path=${logPath}`]);
  assert.equal(result.code, 1);
  assert.equal(result.stdout, `Log directory ${logPath} already exists. What do you want to do? [delete, resume, exit]: `);
  assert.equal(traceback(result.stderr), 'EOFError: EOF when reading a line');
  assert.equal(tinker.calls().length, calls, 'no Tinker call was made');
  // behavior_if_log_dir_exists=raise refuses instead.
  const raised = await runRecipe(cwd, [...module('verifiers_rl'), 'vf_env_id=gsm8k', `log_path=${logPath}`, 'behavior_if_log_dir_exists=raise']);
  assert.equal(raised.code, 1);
  assert.equal(traceback(raised.stderr), `tinker_cookbook.exceptions.ConfigurationError: Log directory ${logPath} already exists. Will not delete it.`);
});

test('resume continues from the last checkpoint batch, through the SDK with its state path and optimizer', async () => {
  const cwd = workDir({ fail_at_step: 3, rewards: [0.3] });
  const logPath = join(cwd, 'run');
  const args = [...module('math_rl'), ...SMALL, 'max_steps=5', 'save_every=2', `log_path=${logPath}`];
  const failed = await runRecipe(cwd, args);
  assert.equal(failed.code, 1);
  assert.equal(traceback(failed.stderr), 'RuntimeError: simulated failure in batch 3');
  assert.match(failed.stderr, /Traceback \(most recent call last\):/);
  const saved = jsonl(join(logPath, 'checkpoints.jsonl'));
  assert.deepEqual(saved.map((c) => c.name), ['000002'], 'no final checkpoint after a failure');
  assert.deepEqual(jsonl(join(logPath, 'metrics.jsonl')).map((r) => r.step), [0, 1, 2]);

  rmSync(join(cwd, 'fake_cookbook.json'));
  const resumed = await runRecipe(cwd, [...args, 'behavior_if_log_dir_exists=resume']);
  assert.equal(resumed.code, 0, resumed.stderr);
  const loads = tinker.calls('load_state_with_optimizer').map((c) => c.args.path);
  assert.deepEqual(loads, [saved[0]!.state_path], 'the state path went to the resume call');
  // Batch 2 runs again (its row was written before the failure): metrics.jsonl keeps both rows.
  assert.deepEqual(jsonl(join(logPath, 'metrics.jsonl')).map((r) => r.step), [0, 1, 2, 2, 3, 4]);
  assert.deepEqual(jsonl(join(logPath, 'checkpoints.jsonl')).map((c) => [c.name, c.batch]), [['000002', 2], ['000004', 4], ['final', 5]]);
  assert.match(readFileSync(join(logPath, 'logs.log'), 'utf8'), new RegExp(`\\[INFO\\] Resumed training from ${saved[0]!.state_path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n`));

  // Once "final" is recorded there is nothing left to do.
  const again = await runRecipe(cwd, [...args, 'behavior_if_log_dir_exists=resume']);
  assert.equal(again.code, 0);
  assert.match(readFileSync(join(logPath, 'logs.log'), 'utf8'), /\[INFO\] Training was already complete; nothing to do\n/);
});

test('chz rejects a bad key=value as upstream does', async () => {
  const cwd = workDir();
  const badValue = await runRecipe(cwd, [...module('math_rl'), 'lora_rank=abc']);
  assert.equal(badValue.code, 1);
  assert.equal(badValue.stderr, "Error:\nCould not interpret argument 'abc' provided for param 'lora_rank'...\n\n- Failed to interpret it as a value:\nCould not cast 'abc' to int\n\n- Failed to interpret it as a factory for polymorphic construction:\nNo subclass of int named 'abc'\n");

  const typo = await runRecipe(cwd, [...module('math_rl'), 'lora_rnk=8']);
  assert.equal(typo.code, 1);
  assert.equal(typo.stderr, "Error:\nExtraneous argument 'lora_rnk' to Blueprint for CLIConfig\nDid you mean 'lora_rank'?\nAppend --help to your command to see valid arguments\n");

  const literal = await runRecipe(cwd, [...module('math_rl'), 'behavior_if_log_dir_exists=maybe']);
  assert.match(literal.stderr, /Could not cast 'maybe' to Literal\['delete', 'resume', 'ask', 'raise'\]/);

  const noEquals = await runRecipe(cwd, [...module('math_rl'), 'max_steps']);
  assert.equal(noEquals.code, 1);
  assert.equal(traceback(noEquals.stderr), "ValueError: Invalid argument 'max_steps'. Specify arguments in the form key=value");

  const help = await runRecipe(cwd, [...module('verifiers_rl'), 'group_size=4', '--help']);
  assert.equal(help.code, 1);
  assert.match(help.stdout, /^Entry point: CLIConfig\n\nArguments:\n/);
  assert.match(help.stdout, /\n {2}vf_env_id +str +'reverse-text' \(default\)\n/);
  assert.match(help.stdout, /\n {2}group_size +int +4 \(from command line\)\n/);

  const missing = await run(install.python, ['-c', 'import chz\n@chz.chz\nclass Run:\n    name: str\n    steps: int = 1\nchz.entrypoint(Run)', 'steps=2'], { cwd, env: cookbookEnv() });
  assert.equal(missing.stderr, 'Error:\nMissing required arguments for parameter(s): name\n');
});

test('an unknown model fails in the cookbook, a retired one at Tinker', async () => {
  const cwd = workDir();
  const unknown = await runRecipe(cwd, [...module('math_rl'), 'model_name=Qwen/Qwen9-1B', `log_path=${join(cwd, 'unknown')}`]);
  assert.equal(unknown.code, 1);
  assert.equal(traceback(unknown.stderr), "KeyError: 'Qwen9-1B'");
  assert.equal(existsSync(join(cwd, 'unknown')), false, 'nothing is written before the model is known');

  const unknownOrg = await runRecipe(cwd, [...module('math_rl'), 'model_name=acme/Model-1B', `log_path=${join(cwd, 'org')}`]);
  assert.equal(traceback(unknownOrg.stderr), 'tinker_cookbook.exceptions.ConfigurationError: Unknown model: acme/Model-1B');

  const retired = join(cwd, 'retired');
  const result = await runRecipe(cwd, [...module('math_rl'), 'model_name=meta-llama/Llama-3.1-8B-Instruct', 'max_steps=1', `log_path=${retired}`]);
  assert.equal(result.code, 1);
  assert.match(traceback(result.stderr), /^tinker\._exceptions\.BadRequestError: Error code: 400 - .*meta-llama\/Llama-3\.1-8B-Instruct/);
  assert.equal(existsSync(join(retired, 'config.json')), true);
  assert.equal(existsSync(join(retired, 'metrics.jsonl')), false);
});

test('a stalled run keeps running without a new metrics row until the stall is lifted', async () => {
  const cwd = workDir({ hang_at_step: 1 });
  const logPath = join(cwd, 'run');
  const proc = startRecipe(cwd, [...module('math_rl'), ...SMALL, 'max_steps=3', `log_path=${logPath}`]);
  const metrics = join(logPath, 'metrics.jsonl');
  await waitFor('row 0', () => existsSync(metrics) && jsonl(metrics).length === 1);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(proc.child.exitCode, null);
  assert.equal(jsonl(metrics).length, 1, 'no row while stalled');
  writeFileSync(join(cwd, 'fake_cookbook.json'), '{}');
  assert.equal((await proc.exit).code, 0);
  assert.deepEqual(jsonl(metrics).map((r) => r.step), [0, 1, 2]);
});

test('a run that ignores SIGTERM lives on until SIGKILL', async () => {
  const cwd = workDir({ ignore_sigterm: true, hang_at_step: 0 });
  const proc = startRecipe(cwd, [...module('math_rl'), ...SMALL, `log_path=${join(cwd, 'run')}`]);
  await waitFor('the trainer started', () => existsSync(join(cwd, 'run', 'logs.log')) && readFileSync(join(cwd, 'run', 'logs.log'), 'utf8').includes('Will train on'));
  proc.child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 700));
  assert.equal(proc.child.exitCode, null);
  proc.child.kill('SIGKILL');
  assert.equal((await proc.exit).signal, 'SIGKILL');
});

test("Tinker's billing pause (402) shows in logs.log while the step waits", async () => {
  const cwd = workDir();
  const logPath = join(cwd, 'run');
  tinker.setFaults({ forward_backward: { status: 402, detail: 'organization balance exhausted', times: 1 } });
  try {
    const result = await runRecipe(cwd, [...module('math_rl'), ...SMALL, 'max_steps=1', `log_path=${logPath}`]);
    assert.equal(result.code, 0, result.stderr);
  } finally {
    tinker.setFaults(null);
  }
  const log = readFileSync(join(logPath, 'logs.log'), 'utf8');
  assert.match(log, /^tinker\.lib\.internal_client_holder:\d+ \[WARNING\] The job is paused due to billing status\. Error: .*organization balance exhausted/m);
  assert.ok(log.indexOf('The job is paused') < log.indexOf('Wrote metrics'), 'the pause came before the row');
});

test('the supervised chat_sl recipe is told apart from the RL ones, and writes its own keys', async () => {
  const source = (recipe: string): string => readFileSync(join(FAKE_COOKBOOK_PYTHONPATH, 'tinker_cookbook', 'recipes', recipe, 'train.py'), 'utf8');
  for (const rl of ['math_rl', 'verifiers_rl']) {
    assert.match(source(rl), /^from tinker_cookbook\.rl(\.train)? import /m);
    assert.match(source(rl), /^\s+group_size: int = \d+$/m);
  }
  assert.doesNotMatch(source('chat_sl'), /^from tinker_cookbook\.rl\b/m);
  assert.doesNotMatch(source('chat_sl'), /^\s+(group_size|groups_per_batch):/m);
  assert.match(source('chat_sl'), /^from tinker_cookbook\.supervised import train$/m);

  const cwd = workDir();
  const logPath = join(cwd, 'sl');
  const result = await runRecipe(cwd, [...module('chat_sl'), 'batch_size=2', 'save_every=2', 'model_name=Qwen/Qwen3.5-9B-Base', `log_path=${logPath}`]);
  assert.equal(result.code, 0, result.stderr);
  const rows = jsonl(join(logPath, 'metrics.jsonl'));
  assert.deepEqual(Object.keys(rows[0]!).slice(0, 4), ['step', 'epoch', 'progress', 'learning_rate']);
  assert.ok('train_mean_nll' in rows[0]! && !('progress/batch' in rows[0]!));
  const checkpoints = jsonl(join(logPath, 'checkpoints.jsonl'));
  assert.deepEqual(Object.keys(checkpoints[0]!), ['name', 'batch', 'epoch', 'state_path', 'sampler_path', 'elapsed_tokens']);
  assert.deepEqual(checkpoints.at(-1)!.name, 'final');
  assert.deepEqual([checkpoints.at(-1)!.epoch, checkpoints.at(-1)!.batch], [1, 0]);
});

test("verifiers_rl at v0.5.5 loads the installed environment, then its first batch raises TypeError: its rollout function does not take rollouts.py's termination=", async () => {
  tinker.setService({ sample_text: 'Adding up: \\boxed{29}' });
  try {
    const cwd = workDir();
    const logPath = join(cwd, 'run');
    const result = await runRecipe(cwd, [...module('verifiers_rl'), 'vf_env_id=primeintellect/gsm8k', 'vf_env_args={"num_train_examples": 4}', ...SMALL, `log_path=${logPath}`]);
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /verifiers\.utils\.env_utils - INFO - Loading environment: primeintellect\/gsm8k/);
    assert.equal(traceback(result.stderr), "TypeError: cli_main.<locals>.custom_do_group_rollout() got an unexpected keyword argument 'termination'");
    assert.match(readFileSync(join(logPath, 'logs.log'), 'utf8'), /Will train on 2 batches/);
    assert.equal(existsSync(join(logPath, 'metrics.jsonl')) ? jsonl(join(logPath, 'metrics.jsonl')).length : 0, 0, 'no batch was trained');

    const missing = await runRecipe(cwd, [...module('verifiers_rl'), 'vf_env_id=reverse-text', ...SMALL, `log_path=${join(cwd, 'missing')}`]);
    assert.equal(missing.code, 1);
    assert.equal(traceback(missing.stderr), "ValueError: Could not import 'reverse-text' environment. Ensure the package for the 'reverse-text' environment is installed.");
  } finally {
    tinker.setService({});
  }
});

test("verifiers_rl.evaluate scores a checkpoint's sampler through the SDK, not an endpoint", async () => {
  tinker.setService({ sample_text: 'So \\boxed{67}' });
  try {
    const cwd = workDir();
    const logPath = join(cwd, 'run');
    assert.equal((await runRecipe(cwd, [...module('math_rl'), ...SMALL, 'max_steps=1', `log_path=${logPath}`])).code, 0);
    const sampler = jsonl(join(logPath, 'checkpoints.jsonl')).at(-1)!.sampler_path as string;
    const result = await runRecipe(cwd, [...module('verifiers_rl', 'evaluate'), 'vf_env_id=gsm8k', `model_path=${sampler}`, 'num_examples=2', 'rollouts_per_example=2']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^Using renderer: qwen3\n/);
    assert.match(result.stdout, /\nModel: Qwen\/Qwen3-8B\n/);
    // Rollout i of example j is printed at index i*n + j, as upstream does: the sorted rows are 1, 1, 0, 0.
    assert.match(result.stdout, /\nreward: avg - 0\.500, std - 0\.500\nr1: \[1\.0, 1\.0\]\nr2: \[0\.0, 0\.0\]\n/);
    assert.ok(tinker.calls('create_sampling_client').some((c) => c.args.model_path === sampler));

    const mismatch = await runRecipe(cwd, [...module('verifiers_rl', 'evaluate'), 'vf_env_id=gsm8k', `model_path=${sampler}`, 'model_name=Qwen/Qwen3.5-4B']);
    assert.equal(traceback(mismatch.stderr), `ValueError: Model name Qwen/Qwen3.5-4B does not match training run base model ${MODEL}`);
  } finally {
    tinker.setService({});
  }
});

test('vf-eval scores an environment against an OpenAI-compatible endpoint and saves its results folder', async () => {
  const answers = JSON.parse((await run(install.python, ['-c', 'import gsm8k, json; print(json.dumps({p["question"]: p["answer"].split("####")[-1].strip() for p in gsm8k.TRAIN_PROBLEMS + gsm8k.TEST_PROBLEMS}))'], { cwd: workDir(), env: cookbookEnv() })).stdout) as Record<string, string>;
  const endpoint = await startFakeOpenAI({
    apiKey: ENDPOINT_KEY,
    models: { right: { mode: 'right' }, wrong: { mode: 'wrong' } },
    solve: (messages) => answers[[...messages].reverse().find((m) => m.role === 'user')?.content ?? ''],
  });
  after(() => endpoint.close());
  const vfEval = (cwd: string, model: string, extra: string[] = []) =>
    run(install.python, ['-m', 'verifiers.scripts.eval', 'gsm8k', '-m', model, '-b', endpoint.baseUrl, '-k', 'MY_ENDPOINT_KEY', '-n', '3', '-r', '2', ...extra], { cwd, env: { ...cookbookEnv(), MY_ENDPOINT_KEY: ENDPOINT_KEY } });

  const cwd = workDir();
  const right = await vfEval(cwd, 'right', ['-s', '-t', '256']);
  assert.equal(right.code, 0, right.stderr);
  assert.match(right.stdout, /\nreward: avg - 1\.000, std - 0\.000\nr1: \[1\.0, 1\.0, 1\.0\]\nr2: \[1\.0, 1\.0, 1\.0\]\n/);
  assert.match(right.stdout, /\nProvider: http:\/\/127\.0\.0\.1:\d+\/v1\/\n/);
  const [folder] = readdirSync(join(cwd, 'outputs', 'evals', 'gsm8k--right'));
  assert.match(folder!, /^[0-9a-f]{8}$/);
  const saved = join(cwd, 'outputs', 'evals', 'gsm8k--right', folder!);
  const metadata = JSON.parse(readFileSync(join(saved, 'metadata.json'), 'utf8'));
  assert.deepEqual(Object.keys(metadata), ['env_id', 'env_args', 'model', 'base_url', 'num_examples', 'rollouts_per_example', 'sampling_args', 'time_ms', 'avg_reward', 'avg_metrics', 'state_columns']);
  assert.deepEqual([metadata.avg_reward, metadata.num_examples, metadata.rollouts_per_example], [1, 3, 2]);
  assert.deepEqual(metadata.avg_metrics, { correct_answer: 1, num_turns: 1 });
  const results = jsonl(join(saved, 'results.jsonl'));
  assert.equal(results.length, 6);
  assert.deepEqual(Object.keys(results[0]!), ['example_id', 'prompt', 'completion', 'task', 'reward', 'error', 'generation_ms', 'scoring_ms', 'total_ms', 'answer', 'correct_answer', 'num_turns']);
  assert.deepEqual(results.map((r) => r.example_id), [0, 0, 1, 1, 2, 2]);
  const requests = endpoint.requestsFor('right');
  assert.equal(requests.length, 6);
  assert.ok(endpoint.requests.every((r) => r.authorized), 'the key came from the variable -k names');

  const wrong = await vfEval(workDir(), 'wrong');
  assert.match(wrong.stdout, /\nreward: avg - 0\.000, std - 0\.000\n/);
  const unauthorized = await run(install.python, ['-m', 'verifiers.scripts.eval', 'gsm8k', '-m', 'right', '-b', endpoint.baseUrl, '-n', '1', '-r', '1'], { cwd: workDir(), env: cookbookEnv() });
  assert.equal(unauthorized.code, 0);
  assert.match(unauthorized.stdout, /\n - ModelError -> AuthenticationError: 1\.000\n/);
});
