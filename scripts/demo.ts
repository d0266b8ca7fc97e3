/**
 * `npm run demo`: the server's main job, end to end, on the bundled example environments. It
 * checks its own prerequisites, builds the server when the sources are newer than the bundle, and
 * drives it over stdio as an MCP client would: list, select, configure (including a refused edit
 * of a locked field), check its readiness with rl_check_environment, smoke-test it with rl_test_inference (as the instructions tell
 * an agent to, before paying for training), start a training run, follow it to the end, read its
 * results, estimate its cost, evaluate its checkpoint against the base model and read a rollout.
 * Tinker, Atropos and the model endpoints are the simulated ones the tests use (fake run-api and
 * launch_training.py printing the real log lines, a local OpenAI-style endpoint, a local stand-in
 * for Tinker's OpenAI-compatible endpoint), so it needs no key and costs nothing.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { stringify } from 'yaml';
import { gsm8kSolver } from '../test/fakes/gsm8kAnswers.js';
import { startFakeOpenAI } from '../test/fakes/openaiServer.js';
import { startFakeTinkerOai } from '../test/fakes/tinkerOaiServer.js';
import { makeFakeInstall } from '../test/helpers/fakeInstall.js';
import { makeFakeTinker } from '../test/helpers/fakeTinker.js';
import { DIST_ENTRY, freePort, REPO_ROOT } from '../test/helpers/tmp.js';
import { pythonProblems } from './prerequisites.js';

const TERMINAL = new Set(['completed', 'failed', 'stopped', 'unknown']);

function say(text: string): void {
  process.stdout.write(`${text}\n`);
}

type Call = (name: string, args?: Record<string, unknown>) => Promise<{ isError: boolean; json: any }>;

/** The key of the local endpoint standing in for OpenRouter. */
const ENDPOINT_KEY = 'sk-or-demo-not-a-real-key';
/** Tinker keys start with `tml-` (the SDK refuses others). */
const TINKER_KEY = 'tml-demo-not-a-real-key';

/** rl_test_inference against the local endpoint: a few real rollouts before paying for training. */
async function smokeTest(call: Call, baseUrl: string): Promise<string> {
  let answer = await call('rl_test_inference', { models: ['demo/qwen3-8b'], base_url: baseUrl, num_steps: 2, group_size: 2, wait_seconds: 50 });
  while (!answer.isError && answer.json.status === 'running') answer = await call('rl_test_inference', { test_id: answer.json.test_id, wait_seconds: 50 });
  if (answer.isError) throw new Error(`rl_test_inference refused: ${answer.json.error}`);
  const tested = (answer.json.models_tested ?? []) as Array<{ model: string; accuracy?: number; error?: string }>;
  say(`> rl_test_inference (a local OpenAI-style endpoint at ${baseUrl}): ${answer.json.status}; ${tested.map((m) => `${m.model}: ${m.error ?? `accuracy ${m.accuracy}`}`).join(', ')}`);
  return answer.json.test_id as string;
}

/** rl_check_environment: the verdict offline (a stand-in model, no key), then with the smoke test's models. */
async function checkReadiness(call: Call, testId?: string): Promise<void> {
  const { isError, json } = await call('rl_check_environment', testId !== undefined ? { test_id: testId } : {});
  if (isError) throw new Error(`rl_check_environment refused: ${json.error}`);
  const how = testId === undefined ? `offline in ${json.offline.duration_seconds} s, stand-in model at ${json.offline.stand_in?.url ?? 'none'}` : `with test ${testId}`;
  say(`> rl_check_environment (${how}): ${json.verdict}`);
  for (const r of json.reasons.slice(0, 2)) say(`  ${r.verdict}: ${r.message}`);
  for (const e of json.evidence.filter((x: string) => /^(the reference answer|training signal|prompts)/.test(x))) say(`  seen: ${e}`);
  if (json.unchecked.length > 0) say(`  not checked: ${json.unchecked.join('; ')}`);
}

const dollars = (f?: { usd: number }): string => (f ? `$${f.usd.toFixed(4)}` : 'n/a');

/** rl_estimate_cost after the smoke test: the figures come from the rollout lengths it measured. */
async function estimate(call: Call): Promise<void> {
  const { json } = await call('rl_estimate_cost');
  const t = json.total_usd ?? {};
  say(`> rl_estimate_cost (an estimate, ${json.model} at the shipped prices of ${json.price_source?.as_of ?? '?'}): low ${dollars(t.low)}, expected ${dollars(t.expected)}, high ${dollars(t.high)}`);
}

/** rl_evaluate on the finished run, then the worst rollout of the trained checkpoint. */
async function evaluateRun(call: Call, runId: string): Promise<void> {
  let answer = await call('rl_evaluate', { run_id: runId, method: 'process', num_items: 30, group_size: 2, wait_seconds: 120 });
  while (!answer.isError && answer.json.status === 'running') answer = await call('rl_evaluate', { eval_id: answer.json.eval_id, wait_seconds: 120 });
  if (answer.isError) throw new Error(`rl_evaluate refused: ${answer.json.error}`);
  const scores = (answer.json.models as Array<{ label: string; score: number | null; ci?: [number, number] | null }>).map((m) => `${m.label} ${m.score}${m.ci ? ` [${m.ci.map((x) => x.toFixed(2)).join(', ')}]` : ''}`);
  say(`> rl_evaluate (${answer.json.method}): ${scores.join(' vs ')}; verdict: ${answer.json.verdict?.verdict}`);
  const rollouts = await call('rl_get_rollouts', { eval_id: answer.json.eval_id, filter: 'worst', limit: 1 });
  const worst = rollouts.json.rollouts?.[0];
  if (worst) say(`> rl_get_rollouts worst: ${worst.model} scored ${worst.score}: ${JSON.stringify(String(worst.completion).slice(0, 100))}`);
}

/** Follows a run with rl_check_status until it ends, printing each change; its last status. */
async function follow(call: Call, runId: string): Promise<any> {
  let last = '';
  for (;;) {
    const status = (await call('rl_check_status', { run_id: runId })).json;
    const progress = status.progress ? ` ${status.progress.step}/${status.progress.total_steps} steps done` : '';
    const health = status.health ? `, health ${status.health.verdict}` : '';
    const line = `  status ${status.status} (${status.phase})${health}${progress}${status.weights ? `, weights ${status.weights}` : ''}`;
    if (line !== last) say(line);
    last = line;
    if (TERMINAL.has(status.status)) return status;
    await sleep(250);
  }
}

/**
 * The same tools on tinker-cookbook (the fakes stand for v0.5.5). Its verifiers gsm8k environment
 * (picked as cookbook:gsm8k: the name clashes with the Atropos one) cannot train there: verifiers_rl's
 * rollout function does not take what the cookbook's rollouts pass, so the doctor and the start say
 * so before anything is paid for. The math_rl recipe trains through the fake Tinker SDK with its own
 * defaults (the operator's config locks only the steps), read from its metrics.jsonl, and is compared
 * with the Atropos run.
 */
async function cookbookRun(call: Call, atroposRunId: string): Promise<string> {
  const listing = await call('rl_list_environments', { framework: 'cookbook' });
  const described = listing.json.environments.map((e: { name: string; recipe: string; cannot_train?: string; lacks?: { modules: string[] } }) =>
    `${e.name} (recipe ${e.recipe}${e.cannot_train ? ': cannot train here' : e.lacks ? `: lacks ${e.lacks.modules.join(', ')}` : ''})`,
  );
  say(`
> rl_list_environments {framework: cookbook}: ${described.join(', ')}`);
  const verifiers = await call('rl_select_environment', { name: 'cookbook:gsm8k' });
  say(`> rl_select_environment cookbook:gsm8k: ${verifiers.json.message}`);
  const doctor = await call('rl_doctor');
  const check = doctor.json.checks.find((c: { check: string }) => c.check === 'cookbook recipe');
  say(`> rl_doctor, check "cookbook recipe": ${check?.ok ? 'ok' : 'FAIL'}: ${check?.detail}`);
  if (check?.fix) say(`  fix: ${check.fix}`);
  const refused = await call('rl_start_training');
  if (!refused.isError || !/verifiers_rl recipe cannot train/.test(refused.json.error)) throw new Error(`rl_start_training did not refuse verifiers_rl at tinker-cookbook 0.5.5 for its cause: ${JSON.stringify(refused.json)}`);
  say(`> rl_start_training refused (the same check, before anything is paid for)`);

  const selected = await call('rl_select_environment', { name: 'math_rl' });
  say(`> rl_select_environment math_rl: ${selected.json.message}`);
  for (const [field, value] of [['group_size', 2], ['groups_per_batch', 2], ['save_every', 1]] as const) {
    const edit = await call('rl_edit_config', { field, value });
    if (edit.isError) throw new Error(`rl_edit_config ${field} refused: ${edit.json.error}`);
  }
  say('> rl_edit_config group_size 2, groups_per_batch 2, save_every 1 (model, learning rate: the recipe\'s own defaults)');
  const started = await call('rl_start_training');
  if (started.isError) throw new Error(`rl_start_training refused: ${started.json.error}`);
  const runId = started.json.run_id as string;
  say(`> rl_start_training: run ${runId} (${started.json.framework}) ${started.json.status}: one process, python -m tinker_cookbook.recipes.math_rl.train ... (model ${started.json.config.model_name}, ${started.json.cost_estimate.shape.total_steps} steps: ${started.json.cost_estimate.assumptions[0]})`);
  const status = await follow(call, runId);
  const results = await call('rl_get_results', { run_id: runId });
  say(`> rl_get_results: ${results.json.outcome.reason}`);
  say(`  reward per step (${results.json.metrics_source}): ${results.json.sparklines?.reward_mean ?? 'n/a'}`);
  const checked = await call('rl_check_status', { run_id: runId });
  if (checked.json.metrics?.not_logged?.loss) say(`  loss: ${checked.json.metrics.not_logged.loss}`);
  const compared = await call('rl_compare_runs', { run_ids: [atroposRunId, runId] });
  say(`> rl_compare_runs (an Atropos and a cookbook run): ${compared.json.runs.map((r: { run_id: string; status: string; steps: number }) => `${r.run_id} ${r.status}, ${r.steps} steps`).join('; ')}; ${compared.json.differing_fields} config fields differ`);
  return status.status;
}

/** A run that did not complete: its error and the end of each log, as an agent would read them. */
async function explainFailure(client: Client, status: { run_id: string; error?: string }): Promise<void> {
  say(`  error: ${status.error ?? '(none recorded)'}`);
  for (const process of ['trainer', 'env', 'api']) {
    const read = await client.readResource({ uri: `rl://runs/${status.run_id}/logs/${process}` }).catch(() => undefined);
    const text = read?.contents[0] && 'text' in read.contents[0] ? read.contents[0].text : '';
    const tail = text.trimEnd().split('\n').slice(-10);
    if (tail.join('') !== '') say(`  ${process}.log, last lines:\n${tail.map((l) => `    ${l}`).join('\n')}`);
  }
}

function newestMtime(dir: string): number {
  return Math.max(...readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((name) => statSync(join(dir, name)).mtimeMs));
}

/** Builds dist/index.js when it is missing or older than a source file, saying so: the build prints nothing while it works. */
function buildIfStale(): void {
  let built = 0;
  try {
    built = statSync(DIST_ENTRY).mtimeMs;
  } catch {
    // Not built yet.
  }
  if (built > newestMtime(join(REPO_ROOT, 'src'))) return;
  say('Building the server (type check, then one bundle in dist/index.js; 10-30 s)...');
  const started = Date.now();
  const result = spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'scripts', 'build.ts')], { cwd: REPO_ROOT, stdio: 'inherit' });
  if (result.status !== 0) throw new Error('the build failed (its errors are above)');
  say(`Built in ${((Date.now() - started) / 1000).toFixed(1)} s.\n`);
}

async function main(): Promise<void> {
  const missing = pythonProblems();
  if (missing.length > 0) {
    say(`The demo cannot run yet:\n${missing.map((m) => `  - ${m}`).join('\n')}`);
    process.exitCode = 1;
    return;
  }
  buildIfStale();
  const work = mkdtempSync(join(tmpdir(), 'rl-training-mcp-demo-'));
  const client = new Client({ name: 'rl-training-mcp-demo', version: '1.0.0' });
  const endpoint = await startFakeOpenAI({ apiKey: ENDPOINT_KEY, models: { 'demo/qwen3-8b': { mode: 'half' } }, solve: gsm8kSolver() });
  // Tinker's OpenAI-compatible endpoint: the base model answers 3 in 10 right, every saved checkpoint 9 in 10.
  const tinker = await startFakeTinkerOai({
    apiKey: TINKER_KEY,
    baseModels: { 'Qwen/Qwen3-8B': 0.3 },
    // tinker-atropos names its checkpoints step_N, the cookbook 000N and final.
    checkpoint: (path) => (/\/sampler_weights\/(?:step_\d+|\d{6}|final)$/.test(path) ? 0.9 : undefined),
    solve: gsm8kSolver(),
  });
  try {
    // The fake Tinker service the cookbook recipe trains through (its SDK's state: keys, live models).
    mkdirSync(join(work, 'tinker-service'));
    const service = makeFakeTinker(join(work, 'tinker-service'));
    service.addKey(TINKER_KEY);
    // The Atropos run's locked model, and math_rl's own default.
    service.setModels(['Qwen/Qwen3-8B', 'Qwen/Qwen3.5-9B']);
    const install = await makeFakeInstall({ dir: work, cookbook: true, tinkerState: service.dir });
    install.trainerControl({ step_seconds: 0.4 });
    install.cookbookControl({ step_seconds: 1 });
    const settingsFile = join(work, 'rl.yaml');
    // A short run without W&B: the operator's locked values, as RL_MCP_CONFIG sets them.
    writeFileSync(settingsFile, stringify({ locked: { env: { total_steps: 5, use_wandb: false } } }));

    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? work,
      TINKER_ATROPOS_ROOT: install.root,
      RL_HOME: join(work, 'rl_training'),
      RL_MCP_CONFIG: settingsFile,
      RL_API_PORT: String(await freePort()),
      RL_INFERENCE_PORT: String(await freePort()),
      RL_STATUS_MIN_INTERVAL_SECONDS: '0',
      TINKER_API_KEY: TINKER_KEY,
      TINKER_OAI_BASE_URL: tinker.baseUrl,
      OPENROUTER_API_KEY: ENDPOINT_KEY,
      LOG_LEVEL: 'warn',
    };
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [DIST_ENTRY], env, stderr: 'ignore' }));
    const call = async (name: string, args: Record<string, unknown> = {}): Promise<{ isError: boolean; json: any }> => {
      const result = await client.callTool({ name, arguments: args });
      const text = result.content.find((c) => c.type === 'text');
      return { isError: result.isError === true, json: JSON.parse(text && text.type === 'text' ? text.text : '{}') };
    };

    say(`rl-training-mcp demo: a simulated tinker-atropos install in ${install.root}\n`);
    const listing = await call('rl_list_environments');
    say(`> rl_list_environments: ${listing.json.count} environments: ${listing.json.environments.map((e: { name: string }) => e.name).join(', ')}`);

    // The install also has tinker-cookbook, whose verifiers gsm8k environment shares the name: the framework picks one.
    const selected = await call('rl_select_environment', { name: 'atropos:gsm8k' });
    say(`> rl_select_environment atropos:gsm8k: ${selected.json.message}`);

    const config = await call('rl_get_current_config');
    const show = (f: { name: string; current_value: unknown }) => `${f.name}=${JSON.stringify(f.current_value)}`;
    say(`> rl_get_current_config: ${config.json.configurable_fields.filter((f: { name: string }) => ['group_size', 'batch_size', 'wandb_name'].includes(f.name)).map(show).join(', ')}; locked: ${config.json.locked_fields.map(show).slice(0, 3).join(', ')}, ...`);

    const edit = await call('rl_edit_config', { field: 'group_size', value: 8 });
    say(`> rl_edit_config group_size 8: ${edit.json.message}`);
    const refused = await call('rl_edit_config', { field: 'lora_rank', value: 64 });
    say(`> rl_edit_config lora_rank 64: refused: ${refused.json.error} (locked_value ${refused.json.locked_value})`);
    const typo = await call('rl_edit_config', { field: 'group_size', value: 'sixteen' });
    say(`> rl_edit_config group_size "sixteen": refused: ${typo.json.error} (expected ${typo.json.expected})`);

    await checkReadiness(call);
    await checkReadiness(call, await smokeTest(call, endpoint.baseUrl));
    await estimate(call);

    const started = await call('rl_start_training');
    if (started.isError) throw new Error(`rl_start_training refused: ${started.json.error}`);
    const runId = started.json.run_id as string;
    say(`> rl_start_training: run ${runId} ${started.json.status}; config ${started.json.config_path}; readiness ${started.json.readiness.verdict}`);

    const status = await follow(call, runId);

    const results = await call('rl_get_results', { run_id: runId });
    say(`> rl_get_results: ${results.json.outcome.status}: ${results.json.outcome.reason}`);
    say(`  weights: latest ${results.json.weights.latest} (${results.json.weights.checkpoint_count} checkpoints)`);
    if (results.json.cost?.spent_usd !== undefined) say(`  cost: $${results.json.cost.spent_usd.toFixed(4)} spent (an estimate: ${results.json.cost.basis})`);
    if (results.json.wandb_error) say(`  W&B: ${results.json.wandb_error}`);
    if (status.status === 'completed') await evaluateRun(call, runId);
    const cookbookStatus = await cookbookRun(call, runId);
    const runs = await call('rl_list_runs');
    say(`> rl_list_runs: ${runs.json.runs.map((r: { run_id: string; framework: string; status: string }) => `${r.run_id} (${r.framework}) ${r.status}`).join(', ')}`);
    say(`\nWith a real tinker-atropos checkout or tinker-cookbook install and keys, the same calls train for real: see README "Connecting a client".`);
    if (status.status !== 'completed') {
      await explainFailure(client, status);
      process.exitCode = 1;
    }
    if (cookbookStatus !== 'completed') process.exitCode = 1;
  } finally {
    await client.close();
    await endpoint.close();
    await tinker.close();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
