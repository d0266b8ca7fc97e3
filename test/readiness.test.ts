/**
 * rl_check_environment end to end: environments written to fail one check each get the verdict and
 * reason they deserve, offline, with no key set; the bundled Atropos environments, a cookbook recipe
 * and a verifiers environment pass through the checks, naming what cannot be checked; a probe's
 * models join the verdict; RL_REQUIRE_READY=1 holds starts to the last verdict.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { connectInMemory, type InMemoryHarness } from './helpers/client.js';
import { KEY } from './helpers/inference.js';
import { startFakeOpenAI, type ChatMessage } from './fakes/openaiServer.js';
import { makeFakeInstall } from './helpers/fakeInstall.js';
import { runServer, waitForRun } from './helpers/runs.js';
import { FAKE_COOKBOOK_PYTHONPATH, FAKE_PYTHONPATH, FAKES_DIR } from './helpers/tmp.js';

const READINESS_ENVS = join(FAKES_DIR, 'readiness');
/** A verifiers environment module, found on sys.path as `prime env install` leaves one. */
const READINESS_VF_ENVS = join(FAKES_DIR, 'readiness-verifiers');
const SECRETS = ['TINKER_API_KEY', 'OPENROUTER_API_KEY', 'WANDB_API_KEY', 'OPENAI_API_KEY'];

async function check(h: InMemoryHarness, args: Record<string, unknown>): Promise<Record<string, any>> {
  const answer = await h.call('rl_check_environment', args);
  assert.equal(answer.isError, false, JSON.stringify(answer.json));
  return answer.json;
}

test('environments written to fail each check get their verdict and reason offline, with no key set and only the stand-in model listening', async () => {
  const h = await connectInMemory({ RL_ENVIRONMENTS_DIRS: READINESS_ENVS });
  for (const name of SECRETS) assert.equal(h.runtime.settings.processEnv[name], undefined, `${name} is not set for this test`);
  const expected: Record<string, [string, string | undefined, RegExp | undefined]> = {
    good_sums: ['go', undefined, undefined],
    crash_on_empty: ['no_go', 'crash_empty', /rewards crashed on an empty completion on 5 of 5 items: IndexError: string index out of range at crash_on_empty.py:\d+/],
    zero_reference: ['no_go', 'reference_not_top', /the reference answer scored 0 on 5 of 5 items/],
    random_scores: ['no_go', 'not_deterministic', /the same completion scored differently/],
    always_alike: ['no_go', 'always_alike', /every completion scored 1/],
    // Judged at the run's max_token_length: the operator's locked value, not the environment's own 512.
    long_prompts: ['no_go', 'prompts_too_long', new RegExp(`prompts longer than max_token_length: 5 of 5 prompts reach ${h.runtime.settings.locked.env.max_token_length} tokens`)],
    nan_scores: ['no_go', 'invalid_empty', /not numbers for an empty completion: NaN/],
  };
  for (const [name, [verdict, code, message]] of Object.entries(expected)) {
    const answer = await check(h, { environment: name });
    assert.equal(answer.verdict, verdict, `${name}: ${JSON.stringify(answer.reasons)}`);
    if (code !== undefined) assert.equal(answer.reasons[0].code, code, `${name}: ${JSON.stringify(answer.reasons)}`);
    if (message !== undefined) assert.match(answer.reasons[0].message, message);
    // The model was the helper's own, on loopback, and it was asked.
    assert.match(answer.offline.stand_in.url, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    assert.ok(answer.offline.stand_in.requests > 0, name);
    assert.equal(answer.offline.items_count, 6, `${name}: items counted from setup()`);
  }
  // Each verdict kept in RL_HOME with the environment and the config it judged.
  const kept = readdirSync(join(h.runtime.settings.home, 'readiness')).filter((f) => f.endsWith('.json'));
  assert.equal(kept.length, Object.keys(expected).length);
  const stored = JSON.parse(readFileSync(join(h.runtime.settings.home, 'readiness', kept.find((f) => f.includes('always_alike'))!), 'utf8'));
  const [only] = Object.values(stored.verdicts) as Record<string, any>[];
  assert.deepEqual([stored.environment, only!.verdict, only!.config.group_size, only!.config.max_token_length], ['always_alike', 'no_go', 8, h.runtime.settings.locked.env.max_token_length]);
  const good = await check(h, { environment: 'good_sums' });
  assert.deepEqual(good.reasons, []);
  assert.ok(good.evidence.some((e: string) => /the reference answer scored the top \(1\) on 5 of 5 items/.test(e)), JSON.stringify(good.evidence));
  assert.ok(good.evidence.some((e: string) => /garbage completion scored the bottom \(0\)/.test(e)), JSON.stringify(good.evidence));
});

test('the bundled Atropos environments, a cookbook recipe and a verifiers environment pass through the offline checks, naming what cannot be checked', async () => {
  // The cookbook and its verifiers gsm8k as pip installs them, in the venv's site-packages.
  const install = await makeFakeInstall({ cookbook: true });
  const h = await connectInMemory({ RL_PYTHON: install.python });
  for (const name of SECRETS) assert.equal(h.runtime.settings.processEnv[name], undefined, `${name} is not set for this test`);
  const answers: Record<string, Record<string, any>> = {};
  for (const name of ['atropos:gsm8k', 'word_sort', 'countdown', 'math_rl', 'cookbook:gsm8k']) answers[name] = await check(h, { environment: name });
  for (const [name, a] of Object.entries(answers)) {
    // The only model asked is the helper's stand-in on loopback (a cookbook recipe takes tokens: it asks none).
    if (a.framework === 'atropos' || name === 'cookbook:gsm8k') assert.match(a.offline.stand_in.url, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    assert.ok(a.offline.prompt_tokens.count > 0 && a.offline.prompt_tokens.max > 0, `${name}: prompts rendered and measured: ${JSON.stringify(a.offline)}`);
    assert.ok(typeof a.offline.sample === 'string' && a.offline.sample.length > 0, `${name}: a sample drawn`);
    assert.ok(a.reasons.every((r: { code: string }) => !r.code.endsWith('_failed')), `${name}: imports, config, data: ${JSON.stringify(a.reasons)}`);
  }
  assert.equal(answers['atropos:gsm8k']!.framework, 'atropos');
  assert.equal(answers['atropos:gsm8k']!.verdict, 'go', JSON.stringify(answers['atropos:gsm8k']!.reasons));
  assert.equal(answers['atropos:gsm8k']!.offline.items_count, 16);
  // countdown's items carry the goal (`target`) and the answer (`solution`): each is tried, the answer scores the top.
  assert.equal(answers.countdown!.verdict, 'go', JSON.stringify(answers.countdown!.reasons));
  // word_sort's items have no answer a grader reads: said, and the verdict stays check.
  assert.equal(answers.word_sort!.verdict, 'check');
  assert.ok(answers.word_sort!.unchecked.some((u: string) => u.startsWith('reference answer')), JSON.stringify(answers.word_sort!.unchecked));
  assert.ok(answers.word_sort!.unchecked.some((u: string) => u.startsWith('item count')), JSON.stringify(answers.word_sort!.unchecked));
  // The cookbook recipe: its own cli_main and dataset builder, its env's step(); what a token environment cannot show is named.
  assert.equal(answers.math_rl!.framework, 'cookbook');
  assert.match(answers.math_rl!.offline.items_note, /batches of \d+ groups/);
  // Its envs give their reference answer (ProblemEnv.get_reference_answer, as upstream's arithmetic env does), so that is checked, not named.
  for (const what of ['max_token_length', 'stand-in model']) assert.ok(answers.math_rl!.unchecked.some((u: string) => u.startsWith(what)), `math_rl names ${what}: ${JSON.stringify(answers.math_rl!.unchecked)}`);
  assert.ok(!answers.math_rl!.unchecked.some((u: string) => u.startsWith('reference answer')), JSON.stringify(answers.math_rl!.unchecked));
  // The verifiers environment: its dataset's `answer` scored through its rubric.
  const vf = answers['cookbook:gsm8k']!;
  assert.equal(vf.verdict, 'go', JSON.stringify(vf.reasons));
  assert.ok(vf.evidence.some((e: string) => /reference answer scored the top/.test(e)));
  assert.ok(vf.unchecked.some((u: string) => u.startsWith('max_token_length')), JSON.stringify(vf.unchecked));
});

test('a verifiers reward that crashes is a crash, not the zero its rubric turns it into', async () => {
  const h = await connectInMemory({ PYTHONPATH: `${FAKE_PYTHONPATH}:${FAKE_COOKBOOK_PYTHONPATH}:${READINESS_VF_ENVS}` });
  const answer = await check(h, { environment: 'crashy-sums' });
  assert.equal(answer.framework, 'cookbook');
  assert.equal(answer.verdict, 'no_go', JSON.stringify(answer.reasons));
  assert.equal(answer.reasons[0].code, 'crash_empty');
  assert.match(answer.reasons[0].message, /rewards crashed on an empty completion on 3 of 3 items: .*Error calling reward function first_char_reward: string index out of range/);
});

/** The sums of test/fakes/readiness/_sums.py, solved: what the fake endpoint answers right (or 7 off). */
function sumsSolver(messages: ChatMessage[]): string | undefined {
  const m = /What is (\d+) \+ (\d+)\?/.exec([...messages].reverse().find((x) => x.role === 'user')?.content ?? '');
  return m ? String(Number(m[1]) + Number(m[2])) : undefined;
}

test('with rl_test_inference as the probe: the good environment is go with its signal share and dollars per step, the always-alike one no_go, NaN rewards counted apart', async () => {
  const endpoint = await startFakeOpenAI({ apiKey: KEY, models: { 'test/half': { mode: 'half' }, 'test/half-empty': { mode: 'half-empty' } }, solve: sumsSolver });
  const h = await connectInMemory({ RL_ENVIRONMENTS_DIRS: READINESS_ENVS, OPENROUTER_API_KEY: KEY });
  try {
    const probe = async (environment: string, model: string): Promise<string> => {
      let answer = await h.call('rl_test_inference', { environment, models: [model], base_url: endpoint.baseUrl, num_steps: 2, group_size: 4, wait_seconds: 50 });
      while (!answer.isError && answer.json.status === 'running') answer = await h.call('rl_test_inference', { test_id: answer.json.test_id, wait_seconds: 50 });
      assert.equal(answer.isError, false, JSON.stringify(answer.json));
      assert.equal(answer.json.models_tested[0].error, undefined, JSON.stringify(answer.json.models_tested[0]));
      return answer.json.test_id as string;
    };
    const good = await check(h, { environment: 'good_sums', test_id: await probe('good_sums', 'test/half') });
    assert.equal(good.verdict, 'go', JSON.stringify(good.reasons));
    const stats = good.probe.models[0];
    assert.deepEqual([stats.groups, stats.mixed_share, stats.all_right_share, stats.all_wrong_share, stats.invalid_rewards], [2, 1, 0, 0, 0]);
    assert.ok(stats.cost.per_step_usd > 0, JSON.stringify(stats));
    assert.ok(good.evidence.some((e: string) => new RegExp(`training signal: 100% of 2 groups mixed for test/half; \\$[\\d.]+ per rollout, \\$${stats.cost.per_step_usd} per step`).test(e)), JSON.stringify(good.evidence));

    const alike = await check(h, { environment: 'always_alike', test_id: await probe('always_alike', 'test/half') });
    assert.equal(alike.verdict, 'no_go');
    assert.ok(alike.reasons.some((r: { message: string }) => /^no training signal: 0 of 2 groups mixed for test\/half \(100% all right, 0% all wrong\)/.test(r.message)), JSON.stringify(alike.reasons));

    // Empty replies score NaN: written bare by Python's json, counted as invalid rewards, not zeros and not lost groups.
    const nan = await check(h, { environment: 'nan_scores', test_id: await probe('nan_scores', 'test/half-empty') });
    assert.deepEqual([nan.probe.models[0].groups, nan.probe.models[0].invalid_rewards, nan.probe.models[0].rewards], [2, 4, 8]);
    assert.ok(nan.reasons.some((r: { code: string }) => r.code === 'probe_invalid_rewards'), JSON.stringify(nan.reasons));
  } finally {
    await endpoint.close();
  }
});

test('a probe joins the verdict: its signal share and dollars per step make go, groups always alike make no_go; the verdict shows in the config and the estimate uses the rendered prompts', async () => {
  const h = await connectInMemory({ RL_ENVIRONMENTS_DIRS: READINESS_ENVS });
  const select = await h.call('rl_select_environment', { name: 'word_sort' });
  assert.equal(select.isError, false, JSON.stringify(select.json));
  const before = (await h.call('rl_get_current_config')).json;
  assert.equal(before.readiness.verdict, null);
  assert.match(before.cost_estimate.total_usd.high.basis, /every prompt and completion at max_token_length/);

  const offline = await check(h, {});
  assert.equal(offline.verdict, 'check');
  const after = (await h.call('rl_get_current_config')).json;
  assert.equal(after.readiness.verdict, 'check');
  assert.match(after.readiness.reasons[0], /^check: the reward's top was not shown offline/);
  assert.match(after.cost_estimate.total_usd.high.basis, /longest prompt \d+ tokens of 5 rendered by the offline check/);

  // An inference test's result as rl_test_inference leaves it: two models' groups.
  const home = h.runtime.settings.home;
  const writeTest = (id: string, groups: Record<string, unknown[][]>): void => {
    const dir = join(home, 'inference_tests', id);
    mkdirSync(dir, { recursive: true });
    const models = Object.entries(groups).map(([model, gs], i) => {
      const output = join(dir, `${i + 1}.jsonl`);
      writeFileSync(output, gs.map((scores) => JSON.stringify({ scores })).join('\n') + '\n');
      return { model, output_file: output, rollout_tokens: { source: 'endpoint usage', rollouts: 8, prompt_tokens: { mean: 100, max: 120 }, completion_tokens: { mean: 50, p25: 40, max: 80 } } };
    });
    writeFileSync(join(dir, 'result.json'), JSON.stringify({ test_id: id, status: 'completed', environment: 'word_sort', models_tested: models }));
  };
  writeTest('0000aaaa', { 'Qwen/Qwen3-8B': [[1, 0, 1, 0], [1, 1, 1, 1], [0, 0.5, 1, 0], [0, 0, 0, 0]], 'z-ai/glm-4.7-flash': [[1, null, 'NaN', 0]] });
  const probed = await check(h, { test_id: '0000aaaa' });
  assert.equal(probed.verdict, 'check', JSON.stringify(probed.reasons));
  assert.deepEqual(probed.reasons.map((r: { code: string }) => r.code), ['probe_invalid_rewards']);
  const qwen = probed.probe.models.find((m: { model: string }) => m.model === 'Qwen/Qwen3-8B');
  assert.equal(qwen.mixed_share, 0.5);
  assert.equal(qwen.all_right_share, 0.25);
  assert.equal(qwen.all_wrong_share, 0.25);
  assert.deepEqual(qwen.reward_range, [0, 1]);
  assert.ok(qwen.cost.per_step_usd > 0 && qwen.cost.run_usd > qwen.cost.per_step_usd, JSON.stringify(qwen.cost));
  assert.equal(probed.probe.models[1].invalid_rewards, 2);
  assert.ok(probed.evidence.some((e: string) => /training signal: 50% of 4 groups mixed for Qwen\/Qwen3-8B; \$[\d.]+ per rollout, \$[\d.]+ per step/.test(e)), JSON.stringify(probed.evidence));

  writeTest('0000bbbb', { 'Qwen/Qwen3-8B': [[1, 0, 1, 0], [1, 1, 0, 1]] });
  const go = await check(h, { test_id: '0000bbbb' });
  assert.equal(go.verdict, 'go', JSON.stringify(go.reasons));

  writeTest('0000cccc', { 'Qwen/Qwen3-8B': [[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]] });
  const alike = await check(h, { test_id: '0000cccc' });
  assert.equal(alike.verdict, 'no_go');
  assert.match(alike.reasons[0].message, /no training signal: 0 of 3 groups mixed for Qwen\/Qwen3-8B/);

  const wrongEnv = await h.call('rl_check_environment', { environment: 'good_sums', test_id: '0000cccc' });
  assert.equal(wrongEnv.isError, true);
  assert.match(wrongEnv.json.error, /tested word_sort, not good_sums/);
});

test('RL_REQUIRE_READY=1: a start with no verdict or a no_go one is refused with its reasons; a go one starts', async (t) => {
  const h = await runServer(t, { env: { RL_REQUIRE_READY: '1', RL_ENVIRONMENTS_DIRS: READINESS_ENVS } });
  const unchecked = await h.call('rl_start_training');
  assert.equal(unchecked.isError, true);
  assert.match(unchecked.json.error, /RL_REQUIRE_READY=1 and gsm8k has no readiness verdict for this config. Run rl_check_environment first/);

  assert.equal((await check(h, { environment: 'always_alike' })).verdict, 'no_go');
  const refused = await h.call('rl_start_training', { environment: 'always_alike' });
  assert.equal(refused.isError, true);
  assert.match(refused.json.error, /always_alike's last readiness verdict for this config \(.*\) is no_go: every completion scored 1/);
  assert.equal(refused.json.readiness.verdict, 'no_go');

  // A verdict holds for its config only: another group_size was never checked.
  assert.equal((await check(h, {})).verdict, 'go');
  const otherConfig = await h.call('rl_start_training', { config: { group_size: 4 } });
  assert.equal(otherConfig.isError, true);
  assert.match(otherConfig.json.error, /no readiness verdict for this config/);

  const started = await h.call('rl_start_training');
  assert.equal(started.isError, false, JSON.stringify(started.json));
  assert.equal(started.json.readiness.verdict, 'go');
  const id = started.json.run_id as string;
  await waitForRun(h, id, 'ended', (r) => r.status !== 'starting' && r.status !== 'running');
});
