/**
 * rl_evaluate and rl_get_rollouts against the fake Tinker OpenAI-compatible endpoint: a finished
 * run's checkpoint against its base model (better, then no clear difference), a running run's
 * latest checkpoint and latest example, an inference test's best and worst rollouts with a Tinker
 * model routed to Tinker, and the Tinker key in no argv, file or answer.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { test, type TestContext } from 'node:test';
import { gsm8kSolver } from './fakes/gsm8kAnswers.js';
import { startFakeTinkerOai, type FakeTinkerOai } from './fakes/tinkerOaiServer.js';
import { KEY, startEndpoint } from './helpers/inference.js';
import { filesUnder, record, runServer, startRun, TINKER_KEY, waitForRun, type RunServer } from './helpers/runs.js';

const BASE = 'Qwen/Qwen3-8B';

interface Qualities {
  base: number;
  trained: number;
}

async function tinkerEndpoint(t: TestContext, q: Qualities, trainerLog: () => string): Promise<FakeTinkerOai> {
  const fake = await startFakeTinkerOai({
    apiKey: TINKER_KEY,
    baseModels: Object.defineProperty({}, BASE, { get: () => q.base, enumerable: true }),
    // A checkpoint exists once the trainer printed it; step_0 is the untrained start.
    checkpoint: (path) => (trainerLog().includes(`${path}\n`) ? (path.endsWith('/step_0') ? q.base : q.trained) : undefined),
    solve: gsm8kSolver(),
  });
  t.after(() => fake.close());
  return fake;
}

async function evaluate(h: RunServer, args: Record<string, unknown>, answers: string[]): Promise<Record<string, any>> {
  let answer = await h.call('rl_evaluate', { wait_seconds: 120, ...args });
  while (!answer.isError && answer.json.status === 'running') answer = await h.call('rl_evaluate', { eval_id: answer.json.eval_id, wait_seconds: 120 });
  answers.push(JSON.stringify(answer.raw));
  assert.equal(answer.isError, false, JSON.stringify(answer.json));
  return answer.json;
}

/**
 * The private key directories holding this test process's Tinker key (random per process): other
 * test files, run at the same time, make and remove their own under the same temp directory.
 */
function keyDirs(): string[] {
  const holdsOurKey = (dir: string): boolean => {
    try {
      return readdirSync(join(tmpdir(), dir)).some((f) => readFileSync(join(tmpdir(), dir, f), 'utf8').includes(TINKER_KEY));
    } catch {
      return false; // removed meanwhile, or not a directory of files
    }
  };
  return readdirSync(tmpdir()).filter((d) => d.startsWith('rl-inference-key-') && holdsOurKey(d));
}

test('a finished run: the trained checkpoint is better than the base model on the same items, then no clear difference at equal quality; the key stays secret', async (t) => {
  const q: Qualities = { base: 0, trained: 1 };
  let h!: RunServer;
  const fake = await tinkerEndpoint(t, q, () => readFileSync(record(h, runId).logs.trainer, 'utf8'));
  h = await runServer(t, { env: { TINKER_OAI_BASE_URL: fake.baseUrl } });
  const runId = await startRun(h);
  await waitForRun(h, runId, 'completed', (r) => r.status === 'completed');
  const keyDirsBefore = keyDirs();
  const answers: string[] = [];

  const better = await evaluate(h, { run_id: runId }, answers);
  assert.equal(better.method, 'evaluate', 'the bundled gsm8k has a held-out evaluation');
  assert.match(better.method_reason, /evaluate_log/);
  assert.deepEqual(better.checkpoints, ['step_3']);
  assert.deepEqual([better.verdict.checkpoint, better.verdict.verdict], ['step_3', 'better'], better.message);
  const [base, step3] = better.models;
  assert.deepEqual([base.model, base.score, step3.score, step3.vs_baseline.method], [BASE, 0, 1, 'paired_t']);
  assert.ok(base.ci[1] > 0 && base.interval === 'wilson', 'an interval, by Wilson, even at 0%');
  assert.equal(better.same_items, true);
  const ckpt = step3.model as string;
  assert.match(ckpt, /^tinker:\/\/.*\/sampler_weights\/step_3$/);
  assert.ok(fake.questionsOf(BASE).length >= 4, 'the base model was sampled');
  assert.deepEqual(fake.questionsOf(ckpt), fake.questionsOf(BASE), 'the same items, in the same order');
  assert.ok(better.statistics.paired_t && better.statistics.wilson);

  q.base = 0.5;
  q.trained = 0.5;
  const equal = await evaluate(h, { run_id: runId, checkpoints: [3] }, answers);
  assert.equal(equal.verdict.verdict, 'no_clear_difference', equal.message);
  assert.equal(equal.models[1].vs_baseline.diff, 0);

  q.base = 0;
  q.trained = 1;
  const rollouts = await evaluate(h, { run_id: runId, method: 'process', num_items: 3, group_size: 2 }, answers);
  assert.deepEqual([rollouts.method, rollouts.same_items, rollouts.verdict.verdict], ['process', true, 'better'], rollouts.message);
  assert.deepEqual(rollouts.models.map((m: { items: number }) => m.items), [3, 3]);

  const worst = await h.call('rl_get_rollouts', { eval_id: better.eval_id, filter: 'worst', limit: 2 });
  answers.push(JSON.stringify(worst.raw));
  assert.equal(worst.isError, false, JSON.stringify(worst.json));
  assert.deepEqual(worst.json.rollouts.map((r: { score: number; model: string }) => [r.model, r.score]), [['base', 0], ['base', 0]]);
  assert.match(worst.json.rollouts[0].completion, /\\boxed\{/);
  const results = await h.call('rl_get_results', { run_id: runId });
  answers.push(JSON.stringify(results.raw));
  assert.deepEqual(results.json.evaluations.map((e: { eval_id: string; verdict: string }) => [e.eval_id, e.verdict]), [[rollouts.eval_id, 'better'], [equal.eval_id, 'no_clear_difference'], [better.eval_id, 'better']]);
  const resource = await h.client.readResource({ uri: better.result });
  assert.match((resource.contents[0] as { text: string }).text, /"verdict":"better"/);

  // The key: never in an argv (each model's log starts with its command line), a file under RL_HOME, or an answer.
  const logs = filesUnder(h.home).filter((f) => f.includes('/evaluations/') && f.endsWith('.log'));
  assert.ok(logs.length >= 4 && logs.every((f) => readFileSync(f, 'utf8').startsWith('$ ')), 'each model process logged its argv');
  for (const file of filesUnder(h.home)) assert.ok(!readFileSync(file, 'utf8').includes(TINKER_KEY), `the key is in ${file}`);
  assert.ok(!filesUnder(h.home).some((f) => f.endsWith('evaluate_config.yaml')), "evaluate's config dump (key included) stays outside RL_HOME");
  for (const text of answers) assert.ok(!text.includes(TINKER_KEY), 'the key is in an answer');
  assert.deepEqual(keyDirs().filter((d) => !keyDirsBefore.includes(d)), [], 'the private key files are removed');
  assert.ok(fake.requests.every((r) => r.authorized), 'every request carried the Tinker key');
});

test('a running run: the latest saved checkpoint is evaluated and the latest example read, and the run completes normally', async (t) => {
  const q: Qualities = { base: 0, trained: 1 };
  let h!: RunServer;
  const fake = await tinkerEndpoint(t, q, () => readFileSync(record(h, runId).logs.trainer, 'utf8'));
  h = await runServer(t, { env: { TINKER_OAI_BASE_URL: fake.baseUrl }, lockedEnv: { total_steps: 25 } });
  h.install.trainerControl({ step_seconds: 0.4 });
  const runId = await startRun(h);
  await waitForRun(h, runId, 'has made two steps', (r) => (r.observed?.steps_completed ?? 0) >= 2);

  const latest = await h.call('rl_get_rollouts', { run_id: runId, filter: 'best', limit: 2 });
  assert.equal(latest.isError, false, JSON.stringify(latest.json));
  assert.equal(latest.json.source.kind, 'run');
  assert.ok(latest.json.returned >= 1, JSON.stringify(latest.json));
  assert.match(latest.json.rollouts[0].prompt, /\[user\]/);
  assert.match(latest.json.message, /latest_example/);

  const answer = await evaluate(h, { run_id: runId }, []);
  const step = Number(/^step_(\d+)$/.exec(answer.checkpoints[0])?.[1]);
  assert.ok(step >= 2, `a trained checkpoint: ${answer.checkpoints}`);
  assert.equal(answer.run_at_start.status, 'running');
  assert.ok(step <= answer.run_at_start.steps_completed + 1, 'the latest saved when the evaluation started');
  assert.equal(answer.verdict.verdict, 'better');

  const done = await waitForRun(h, runId, 'completed', (r) => r.status !== 'running' && r.status !== 'starting', 120);
  assert.equal(done.status, 'completed', done.error);
  assert.equal(done.observed?.steps_completed, 25);
  const ended = await h.call('rl_get_rollouts', { run_id: runId });
  assert.match(ended.json.message, /no live example.*rl_get_rollouts\(\{eval_id\}\)/);
});

test('an inference test: a Tinker base model goes to Tinker with the Tinker key, the other to the endpoint; best and worst rollouts', async (t) => {
  let log = '';
  const fake = await tinkerEndpoint(t, { base: 0.5, trained: 1 }, () => log);
  const endpoint = await startEndpoint({ 'fake/half': { mode: 'half' } });
  const h = await runServer(t, { env: { TINKER_OAI_BASE_URL: fake.baseUrl, OPENROUTER_API_KEY: KEY } });
  log = '';
  let answer = await h.call('rl_test_inference', { models: ['fake/half', BASE], base_url: endpoint.baseUrl, num_steps: 2, group_size: 4, wait_seconds: 120 });
  assert.equal(answer.isError, false, JSON.stringify(answer.json));
  // base_url was given: a Tinker id goes there too, where it is unknown.
  assert.match(answer.json.models_tested[1].error, /404/);
  answer = await h.call('rl_test_inference', { models: [BASE, 'tinker://nope/sampler_weights/step_9'], num_steps: 2, group_size: 4, wait_seconds: 120 });
  assert.equal(answer.isError, false, JSON.stringify(answer.json));
  const [base, missing] = answer.json.models_tested;
  assert.deepEqual([base.error, base.endpoint], [undefined, fake.baseUrl], JSON.stringify(base));
  assert.equal(missing.error_kind, 'model_not_found');
  assert.ok(fake.requests.filter((r) => r.status === 200).every((r) => r.authorized && r.model === BASE));

  const best = await h.call('rl_get_rollouts', { test_id: answer.json.test_id, filter: 'best', limit: 3 });
  const worst = await h.call('rl_get_rollouts', { test_id: answer.json.test_id, filter: 'worst', limit: 3 });
  assert.equal(best.isError, false, JSON.stringify(best.json));
  assert.deepEqual(best.json.rollouts.map((r: { score: number }) => r.score), [1, 1, 1]);
  assert.deepEqual(worst.json.rollouts.map((r: { score: number }) => r.score), [0, 0, 0]);
  assert.ok(best.json.rollouts.every((r: { file: string }) => r.file.startsWith(`rl://inference-tests/${answer.json.test_id}/`)));
  assert.ok(JSON.stringify(best.raw).length < 40_000);
  const both = await h.call('rl_get_rollouts', { test_id: answer.json.test_id, eval_id: 'abcdef01' });
  assert.match(both.json.error, /exactly one of run_id, test_id or eval_id/);
  assert.ok(!existsSync(`${h.home}/evaluations`) || filesUnder(`${h.home}/evaluations`).length === 0);
});

test('an environment without a held-out evaluation (countdown) is evaluated on scored process rollouts, and the answer says why', async (t) => {
  let h!: RunServer;
  const fake = await tinkerEndpoint(t, { base: 0.5, trained: 0.5 }, () => readFileSync(record(h, runId).logs.trainer, 'utf8'));
  h = await runServer(t, { env: { TINKER_OAI_BASE_URL: fake.baseUrl } });
  const started = await h.call('rl_start_training', { environment: 'countdown' });
  assert.equal(started.isError, false, JSON.stringify(started.json));
  const runId = started.json.run_id as string;
  await waitForRun(h, runId, 'completed', (r) => r.status === 'completed');
  const answer = await evaluate(h, { run_id: runId, num_items: 4, group_size: 1 }, []);
  assert.equal(answer.method, 'process');
  assert.match(answer.method_reason, /no held-out evaluation/);
  assert.deepEqual(answer.models.map((m: { label: string }) => m.label), ['base', answer.checkpoints[0]]);
  assert.ok(answer.models.every((m: { items: number; error?: string }) => m.items === 4 && m.error === undefined), JSON.stringify(answer.models));
  assert.ok(fake.requests.some((r) => r.model?.includes('/sampler_weights/') && r.status === 200), 'the checkpoint was sampled on Tinker');
});

test("an environment whose evaluate() reaches evaluate_log only with held-out rows, and has none, falls back to scored process rollouts, and the answer says so", async (t) => {
  let h!: RunServer;
  const fake = await tinkerEndpoint(t, { base: 0, trained: 1 }, () => readFileSync(record(h, runId).logs.trainer, 'utf8'));
  h = await runServer(t, { env: { TINKER_OAI_BASE_URL: fake.baseUrl } });
  // The bundled gsm8k, with its evaluate() returning before its evaluate_log call: the source names
  // evaluate_log, so the evaluate subcommand is tried first, and it writes no metrics.
  const gsm8k = readFileSync(join(h.install.environmentsDir, 'gsm8k_tinker.py'), 'utf8');
  const silent = gsm8k.replace('name = "gsm8k"', 'name = "gsm8k_no_test_split"').replace(/(async def evaluate\(self[^\n]*\n)/, '$1        return  # no held-out rows in this copy\n');
  assert.notEqual(silent, gsm8k);
  writeFileSync(join(h.install.environmentsDir, 'gsm8k_no_test_split.py'), silent);
  const started = await h.call('rl_start_training', { environment: 'gsm8k_no_test_split' });
  assert.equal(started.isError, false, JSON.stringify(started.json));
  const runId = started.json.run_id as string;
  await waitForRun(h, runId, 'completed', (r) => r.status === 'completed');
  const answer = await evaluate(h, { run_id: runId, num_items: 4, group_size: 1 }, []);
  assert.equal(answer.method, 'process', 'fell back from evaluate');
  assert.match(answer.method_reason, /evaluate\(\) wrote no metrics/);
  assert.deepEqual(answer.models.map((m: { label: string; items: number; error?: string }) => [m.label, m.items, m.error]), [['base', 4, undefined], [answer.checkpoints[0], 4, undefined]]);
  assert.equal(answer.verdict.verdict, 'better', answer.message);
  const logs = readdirSync(join(h.home, 'evaluations', answer.eval_id));
  assert.ok(logs.some((f) => f.endsWith('.evaluate.log')) && logs.some((f) => f.endsWith('.process.log')), `both methods ran: ${logs.join(', ')}`);
});
