/**
 * Every tool's answer at its argument limits stays under about 10k tokens. The estimate is 4
 * characters a token, so the limit is 40,000 characters of answer text. The table names every
 * tool in ALL_TOOLS: a tool added without an entry fails here.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { stringify } from 'yaml';
import { ALL_TOOLS } from '../src/tools/index.js';
import type { RunRecord } from '../src/runtime/runs/seams/record.js';
import { ENTITY, KEY as WANDB_KEY, PROJECT, seedTrainingRun } from './fakes/wandbFixtures.js';
import { FakeWandb } from './fakes/wandbServer.js';
import { APPS_CLIENT_CAPABILITIES, connectInMemory, type InMemoryHarness } from './helpers/client.js';
import { makeFakeInstall } from './helpers/fakeInstall.js';
import { KEY as ENDPOINT_KEY, startEndpoint } from './helpers/inference.js';
import { killLeftovers, newHome, record, runServerEnv, runsTinker, waitForRun } from './helpers/runs.js';
import { runRecord, writeFailedCookbookRun, writeRunDirs } from './helpers/registry.js';
import { tempDir } from './helpers/tmp.js';
import { gsm8kSolver } from './fakes/gsm8kAnswers.js';
import { startFakeTinkerOai } from './fakes/tinkerOaiServer.js';
import { TINKER_KEY } from './helpers/runs.js';
import { MAX_LISTED_CHECKPOINTS } from '../src/runtime/evaluation/checkpoints.js';


const MAX_ANSWER_CHARS = 40_000;
const LONG = 'x'.repeat(60_000);

const wandb = await FakeWandb.start({ apiKey: WANDB_KEY });
after(() => wandb.close());
const models = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`test/model-${i}`, { mode: 'half' as const }]));
const endpoint = await startEndpoint(models);
// Every checkpoint path answers, so each listed checkpoint is evaluated in full.
const tinker = await startFakeTinkerOai({ apiKey: TINKER_KEY, baseModels: { 'Qwen/Qwen3-8B': 0.5 }, checkpoint: () => 0.5, solve: gsm8kSolver() });
after(() => tinker.close());
const install = await makeFakeInstall();
install.trainerControl({ step_seconds: 0.01 });
const home = newHome();
after(() => killLeftovers([install.root, home]));

/** 300 environments with long docstrings, beside the bundled ones. */
function environmentTree(): string {
  const dir = tempDir('rlmcp-envs-');
  for (let i = 0; i < 300; i++) {
    const doc = `Environment ${i}: ${'a long description of the task. '.repeat(60)}`;
    writeFileSync(join(dir, `env_${i}.py`), `from atroposlib.envs.base import BaseEnv\n\n\nclass Env${i}(BaseEnv):\n    """${doc}"""\n\n    name = "generated_env_${i}"\n`);
  }
  return dir;
}

/** A run of `home` with W&B on and `steps` steps logged there, its logs long, its config wide. */
function wandbRun(runId: string, minutes: number, steps: number): RunRecord {
  const run = runRecord(home, { runId, createdMs: Date.parse('2026-02-01T00:00:00Z') + minutes * 60_000, status: 'failed' });
  Object.assign(run, { use_wandb: true, wandb_project: PROJECT, wandb_name: `wide-${runId}` });
  const dir = join(home, 'runs', runId);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'run.json'), JSON.stringify(run));
  const env = Object.fromEntries(Array.from({ length: 60 }, (_, f) => [`field_${f}`, `${runId}-${'v'.repeat(500)}`]));
  writeFileSync(run.config_path, stringify({ env: { ...env, wandb_name: run.wandb_name }, openai: [], tinker: { wandb_project: PROJECT } }));
  const line = (i: number): string => (i % 50 === 0 ? `Step ${i} ${'long '.repeat(20_000)}` : `Step ${i} complete, Reward/mean: 0.5 Loss: 0.1 ${'y'.repeat(120)}`);
  for (const p of ['api', 'trainer', 'env'] as const) writeFileSync(run.logs[p], Array.from({ length: 5000 }, (_, i) => line(i)).join('\n') + '\n');
  seedTrainingRun(wandb, ENTITY, PROJECT, run, steps);
  return run;
}

/**
 * A long run on the fake Tinker service: `count` more sampler checkpoints in the training run of
 * run `runId`, saved as the service saves them.
 */
const fakeTinker = runsTinker();
async function manyCheckpoints(runId: string, count: number): Promise<void> {
  const path = /^Initial sampling client created: (\S+)$/m.exec(readFileSync(record(h, runId).logs.trainer, 'utf8'))![1]!;
  const code = 'import json, sys\nfrom tinker import _server\nspec = json.load(sys.stdin)\nfor n in range(spec["first"], spec["first"] + spec["count"]):\n    _server.save_checkpoint(spec["run"], "sampler_weights", f"step_{n}", None)\n';
  const result = await fakeTinker.python(code, { input: JSON.stringify({ run: /^tinker:\/\/([^/]+)\//.exec(path)![1], first: 1000, count }) });
  assert.equal(result.code, 0, result.stderr);
}

writeRunDirs(home, 250);
const wide = Array.from({ length: 10 }, (_, i) => wandbRun(`cccc000${i}`, i, i === 0 ? 2000 : 300));
const env = await runServerEnv(install, home, {
  tinker: fakeTinker,
  // Enough saved steps for rl_evaluate's largest set of checkpoints.
  lockedEnv: { total_steps: MAX_LISTED_CHECKPOINTS + 2 },
  env: {
    RL_ENVIRONMENTS_DIRS: environmentTree(),
    WANDB_API_KEY: WANDB_KEY,
    WANDB_BASE_URL: wandb.url,
    WANDB_ENTITY: ENTITY,
    OPENROUTER_API_KEY: ENDPOINT_KEY,
    TINKER_OAI_BASE_URL: tinker.baseUrl,
  },
});
// A client that renders MCP Apps: it is also shown the app-only tools, with the same answers to the rest.
const h: InMemoryHarness = await connectInMemory(env, undefined, APPS_CLIENT_CAPABILITIES);

/** A configurable field of the selection that takes a string: the longest value an answer can echo. */
async function stringField(): Promise<string> {
  const config = await h.call('rl_get_current_config');
  const field = (config.json.configurable_fields as { name: string; type: string }[]).find((f) => /str/.test(f.type) && f.name !== 'wandb_project');
  assert.ok(field, JSON.stringify(config.json).slice(0, 500));
  return field.name;
}

let startedRun: string | undefined;
let testId: string | undefined;
let evalId: string | undefined;

/** Each tool at its limits, in ALL_TOOLS order; each entry may rely on the ones before it. */
const AT_LIMITS: Record<string, () => Promise<Record<string, unknown>>> = {
  rl_list_environments: async () => ({ limit: 100 }),
  rl_select_environment: async () => ({ name: 'gsm8k' }),
  rl_get_current_config: async () => {
    await h.call('rl_edit_config', { field: await stringField(), value: LONG });
    return {};
  },
  rl_edit_config: async () => ({ field: await stringField(), value: LONG }),
  rl_estimate_cost: async () => ({ environment: 'gsm8k', config: { [await stringField()]: LONG, group_size: 16 } }),
  rl_check_environment: async () => ({ environment: 'gsm8k', config: { [await stringField()]: LONG, group_size: 16 }, items: 20 }),
  rl_start_training: async () => ({ environment: 'gsm8k', config: { [await stringField()]: LONG, group_size: 16 } }),
  rl_check_status: async () => ({ run_id: wide[0]!.run_id }),
  rl_wait_for_run: async () => ({ run_id: startedRun!, until: 'ended', timeout_seconds: 50 }),
  rl_stop_training: async () => ({ run_id: startedRun! }),
  // A cookbook run that failed after a checkpoint: started again, its recipe a process that ends at once.
  rl_resume_training: async () => ({ run_id: writeFailedCookbookRun(home, 'cb000001', [install.python, '-c', 'pass']).run_id }),
  rl_get_results: async () => ({ run_id: wide[0]!.run_id, samples: 500 }),
  rl_checkpoints: async () => {
    await manyCheckpoints(startedRun!, 1500);
    const list = await h.call('rl_checkpoints', { run_id: startedRun!, action: 'list', limit: 100 });
    assert.equal(list.json.shown, 100, JSON.stringify(list.json).slice(0, 600));
    assert.ok(JSON.stringify(list.json).length < MAX_ANSWER_CHARS);
    // Every other step kept: the rest do not form ranges, the longest description there is.
    return { run_id: startedRun!, action: 'delete', dry_run: true, keep: { steps: Array.from({ length: 500 }, (_, i) => 1000 + 2 * i) } };
  },
  rl_list_runs: async () => ({ limit: 200 }),
  rl_compare_runs: async () => ({ run_ids: wide.map((r) => r.run_id), metric: 'percent_correct' }),
  rl_read_log: async () => ({ run_id: wide[0]!.run_id, process: 'trainer', lines: 500 }),
  rl_test_inference: async () => ({ models: Object.keys(models), num_steps: 50, group_size: 64, base_url: endpoint.baseUrl, wait_seconds: 280, timeout_seconds: 600 }),
  rl_evaluate: async () => ({ run_id: startedRun!, checkpoints: 'all', method: 'process', num_items: 200, group_size: 2, wait_seconds: 280 }),
  rl_get_rollouts: async () => ({ test_id: testId!, limit: 10, filter: 'worst' }),
  rl_doctor: async () => ({}),
  rl_dashboard_snapshot: async () => ({ run_ids: wide.slice(0, 4).map((r) => r.run_id) }),
};

test('the table names every tool', () => {
  assert.deepEqual(Object.keys(AT_LIMITS), ALL_TOOLS.map((t) => t.name));
});

test('every answer at its limits is under 40,000 characters (about 10k tokens at 4 characters a token)', async () => {
  const sizes: Record<string, number> = {};
  for (const tool of ALL_TOOLS) {
    const args = await AT_LIMITS[tool.name]!();
    // rl_test_inference and rl_evaluate answer within their wait_seconds (280 here), past the SDK's 60 s default for a request.
    const answer = await h.call(tool.name, args, { timeout: 300_000 });
    assert.equal(answer.isError, false, `${tool.name}: ${JSON.stringify(answer.json).slice(0, 600)}`);
    if (tool.name === 'rl_start_training') {
      startedRun = answer.json.run_id;
      await waitForRun(h, startedRun!, 'ended', (r) => ['completed', 'failed', 'stopped'].includes(r.status));
    }
    if (tool.name === 'rl_test_inference') testId = answer.json.test_id;
    if (tool.name === 'rl_evaluate') evalId = answer.json.eval_id;
    const text = answer.raw.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
    sizes[tool.name] = text.length;
    assert.ok(text.length < MAX_ANSWER_CHARS, `${tool.name} answered ${text.length} characters`);
  }
  console.log(JSON.stringify(sizes));
  // The limits were reached: the answers were cut, not small for want of data.
  const results = await h.call('rl_get_results', { run_id: wide[0]!.run_id, samples: 500 });
  assert.ok(results.json.history.length < 500 && results.json.history.length >= 20, `history of ${results.json.history.length} rows`);
  assert.match(results.json.history_note, /of 500 sampled rows/);
  const all = JSON.parse((await import('node:fs')).readFileSync(results.json.history_file, 'utf8'));
  assert.equal(all.history.length, 500);
  assert.equal(results.json.history_summary['reward/mean'].max, 1);
  const tested = await h.call('rl_test_inference', { test_id: testId! });
  assert.equal(tested.json.models_tested.length, 8);
  assert.equal(tested.json.models_tested[0].steps.length, 50);
  const evaluated = await h.call('rl_evaluate', { eval_id: evalId! });
  assert.equal(evaluated.json.status, 'completed', JSON.stringify(evaluated.json).slice(0, 600));
  assert.equal(evaluated.json.models.length, MAX_LISTED_CHECKPOINTS + 1);
  const envs = await h.call('rl_list_environments', { limit: 100 });
  assert.ok(envs.json.next_offset > 0 && envs.json.total > 300, JSON.stringify({ count: envs.json.count, total: envs.json.total }));
});
