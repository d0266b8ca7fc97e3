/**
 * rl_compare_runs through the MCP client: a sweep of three gsm8k runs over group_size, each with
 * its own W&B history (one with none), compared by config, by final reward and by loss; ties, a
 * metric no run logged, a damaged record, unknown ids, and the answer's size for ten runs whose
 * configs differ everywhere.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse, stringify } from 'yaml';
import type { RunRecord } from '../src/runtime/runs/seams/record.js';
import { ENTITY, KEY as WANDB_KEY } from './fakes/wandbFixtures.js';
import { type FakeRun, FakeWandb } from './fakes/wandbServer.js';
import { type RunServer, runServer, waitForRun } from './helpers/runs.js';

interface Seeded {
  rewards: number[];
  losses: number[];
}

/** The run's trainer in W&B (group = run_id), logging reward and loss per step. */
function seedTrainer(fake: FakeWandb, run: RunRecord, { rewards, losses }: Seeded): FakeRun {
  return fake.addRun(ENTITY, run.wandb_project, {
    name: `t${run.run_id}`,
    displayName: `${run.trainer_wandb_run_name}`,
    tags: ['trainer'],
    group: run.run_id,
    history: rewards.map((reward, i) => ({ _step: i + 1, 'reward/mean': reward, 'train/loss': losses[i]! })),
  });
}

/** The run's environment in W&B, logging its accuracy with the `<wandb_name>_0_` prefix. */
function seedEnv(fake: FakeWandb, run: RunRecord, accuracy: number[]): void {
  const prefix = `${run.wandb_name}_0_`;
  fake.addRun(ENTITY, run.wandb_project, {
    name: `e${run.run_id}`,
    displayName: `${run.wandb_name}-2026-01-01-abcdef`,
    group: run.run_id,
    history: accuracy.map((a, i) => ({ _step: i + 1, [`${prefix}train/percent_correct`]: a, [`${prefix}eval/percent_correct`]: a / 2 })),
  });
}

/** One run of the sweep, started stateless: one call names its config, the selection is untouched. */
async function sweepRun(h: RunServer, groupSize: number): Promise<RunRecord> {
  const started = await h.call('rl_start_training', { config: { group_size: groupSize, wandb_name: `sweep-gs${groupSize}` } });
  assert.equal(started.isError, false, JSON.stringify(started.json));
  return waitForRun(h, started.json.run_id as string, 'completed', (r) => r.status === 'completed');
}

/** A copy of `run` under another id, started `minutes` later, with its own config.yaml. */
function copyRun(h: RunServer, run: RunRecord, runId: string, minutes: number, config: object): RunRecord {
  const dir = join(h.home, 'runs', runId);
  mkdirSync(dir);
  const started = new Date(Date.parse(run.started_at) + minutes * 60_000).toISOString();
  const copy: RunRecord = { ...run, run_id: runId, wandb_group: runId, created_at: started, started_at: started, config_path: join(dir, 'config.yaml') };
  writeFileSync(join(dir, 'run.json'), JSON.stringify(copy));
  writeFileSync(copy.config_path, stringify(config));
  return copy;
}

test('a group_size sweep: only group_size differs, the best final reward wins, ties and missing W&B data as documented', async (t) => {
  const wandb = await FakeWandb.start({ apiKey: WANDB_KEY });
  t.after(() => wandb.close());
  const h = await runServer(t, { lockedEnv: { use_wandb: true }, env: { WANDB_API_KEY: WANDB_KEY, WANDB_BASE_URL: wandb.url } });
  h.install.trainerControl({ step_seconds: 0.01 });
  const a = await sweepRun(h, 4);
  const b = await sweepRun(h, 8);
  const c = await sweepRun(h, 16);
  // a peaks higher than b but ends lower: the final value decides, the peak is its `best`.
  seedTrainer(wandb, a, { rewards: [0.2, 0.95, 0.6], losses: [3, 1, 2] });
  const bTrainer = seedTrainer(wandb, b, { rewards: [0.1, 0.5, 0.9], losses: [3, 2.5, 2.5] });
  // c is never seen by W&B: its project exists, its group is empty.

  const answer = await h.call('rl_compare_runs', { run_ids: [a.run_id, b.run_id, c.run_id] });
  assert.equal(answer.isError, false, JSON.stringify(answer.json));
  const { json } = answer;
  assert.deepEqual(json.differing_config, { group_size: { [a.run_id]: 4, [b.run_id]: 8, [c.run_id]: 16 } });
  assert.equal(json.differing_fields, 1);
  assert.ok(json.same_config_fields > 10, `same_config_fields: ${json.same_config_fields}`);
  // Each run named itself in W&B: the names are answered apart, not as differing config.
  for (const [run, gs] of [[a, 4], [b, 8], [c, 16]] as const) assert.deepEqual(json.run_names[run.run_id], { wandb_name: `sweep-gs${gs}`, wandb_run_name: run.wandb_run_name });

  assert.equal(json.metric, 'reward_mean');
  assert.equal(json.best.run_id, b.run_id);
  assert.equal(json.best.value, 0.9);
  assert.equal(json.best.direction, 'higher');
  assert.deepEqual(json.best.left_out, [c.run_id]);
  assert.equal(json.best.tied_with, undefined);
  assert.match(json.best.rule, /tie goes to the run started first/);
  assert.match(json.best.rule, /left out/);

  const [ra, rb, rc] = json.runs;
  assert.deepEqual(json.runs.map((r: { run_id: string }) => r.run_id), [a.run_id, b.run_id, c.run_id]);
  assert.equal(ra.status, 'completed');
  assert.equal(ra.environment, 'gsm8k');
  assert.equal(ra.health.verdict, 'completed');
  assert.equal(ra.steps, 3);
  assert.deepEqual({ final: ra.metrics.reward_mean.final, best: ra.metrics.reward_mean.best }, { final: 0.6, best: 0.95 });
  assert.deepEqual({ final: ra.metrics.loss.final, best: ra.metrics.loss.best }, { final: 2, best: 1 });
  assert.equal(typeof ra.metrics.reward_mean.sparkline, 'string');
  assert.equal(ra.metrics.reward_mean.sparkline.length, 3);
  assert.equal(ra.metrics.percent_correct, undefined, 'a metric W&B never saw is left out');
  assert.equal(ra.wandb_error, undefined);
  assert.match(ra.wandb_url, new RegExp(`/runs/t${a.run_id}$`));
  assert.equal(rb.metrics.reward_mean.final, 0.9);
  assert.equal(rc.metrics, undefined);
  assert.match(rc.wandb_error, new RegExp(`group '${c.run_id}'`));
  assert.equal(rc.status, 'completed');

  // By loss, lower is better: b ends at 2.5, a at 2.
  const byLoss = await h.call('rl_compare_runs', { run_ids: [b.run_id, a.run_id], metric: 'loss' });
  assert.deepEqual([byLoss.json.best.run_id, byLoss.json.best.value, byLoss.json.best.direction], [a.run_id, 2, 'lower']);

  // Equal final rewards: the run started first wins, whatever the order asked in.
  bTrainer.history = [0.1, 0.5, 0.6].map((reward, i) => ({ _step: i + 1, 'reward/mean': reward, 'train/loss': 1 }));
  const tie = await h.call('rl_compare_runs', { run_ids: [c.run_id, b.run_id, a.run_id] });
  assert.equal(tie.json.best.run_id, a.run_id);
  assert.deepEqual(tie.json.best.tied_with, [b.run_id]);
  assert.equal(tie.json.best.value, 0.6);

  // No run logged the metric: no best, and why.
  const none = await h.call('rl_compare_runs', { run_ids: [a.run_id, c.run_id], metric: 'eval_percent_correct' });
  assert.equal(none.isError, false);
  assert.equal(none.json.best, null);
  assert.match(none.json.best_unavailable, /No run has a finite final eval_percent_correct/);
});

test('unknown, repeated and damaged runs; ten runs differing everywhere stay bounded; a hanging W&B costs one budget', async (t) => {
  const wandb = await FakeWandb.start({ apiKey: WANDB_KEY });
  t.after(() => wandb.close());
  // A budget of 4 s: the ten histories below are served within it on a host the whole suite loads
  // (at 2 s, six of ten lookups timed out in one run of the suite on 2 cores).
  const env = { WANDB_API_KEY: WANDB_KEY, WANDB_BASE_URL: wandb.url, RL_WANDB_TIMEOUT_SECONDS: '4' };
  const h = await runServer(t, { lockedEnv: { use_wandb: true }, env });
  h.install.trainerControl({ step_seconds: 0.01 });
  const first = await sweepRun(h, 4);

  const unknown = await h.call('rl_compare_runs', { run_ids: [first.run_id, 'abcdef12', '0badc0de'] });
  assert.equal(unknown.isError, true);
  assert.match(unknown.json.error, /Runs 'abcdef12', '0badc0de' not found/);
  assert.deepEqual(unknown.json.unknown_run_ids, ['abcdef12', '0badc0de']);
  assert.deepEqual(unknown.json.available, [first.run_id]);
  const repeated = await h.call('rl_compare_runs', { run_ids: [first.run_id, first.run_id] });
  assert.equal(repeated.isError, true);
  assert.match(repeated.json.error, /distinct/);
  assert.equal((await h.call('rl_compare_runs', { run_ids: [first.run_id] })).isError, true);

  mkdirSync(join(h.home, 'runs', 'deadbeef'));
  writeFileSync(join(h.home, 'runs', 'deadbeef', 'run.json'), '{"run_id": "deadbeef", ');
  const damaged = await h.call('rl_compare_runs', { run_ids: [first.run_id, 'deadbeef'] });
  assert.equal(damaged.isError, false, JSON.stringify(damaged.json));
  const broken = damaged.json.runs[1];
  assert.deepEqual([broken.run_id, broken.status, broken.steps], ['deadbeef', 'unknown', null]);
  assert.match(broken.error, /not valid JSON/);
  assert.match(broken.config_error, /config\.yaml is missing/);
  assert.deepEqual(damaged.json.differing_config, {});
  assert.equal(damaged.json.best, null);

  const config = parse(readFileSync(first.config_path, 'utf8'));
  // A run started beside the first: the server gave it other ports, URLs, directories and names.
  // Those are the run's own, shown per run, never a difference of config.
  const beside = copyRun(h, first, 'a5519ed0', 1, {
    ...config,
    env: { ...config.env, rollout_server_url: 'http://127.0.0.1:23456', wandb_name: 'gsm8k-a5519ed0' },
    openai: config.openai.map((e: object) => ({ ...e, base_url: 'http://127.0.0.1:23457/v1' })),
    tinker: { ...config.tinker, checkpoint_dir: join(h.home, 'runs', 'a5519ed0', 'checkpoints'), wandb_group: 'a5519ed0', wandb_run_name: 'gsm8k-a5519ed0' },
  });
  const sideBySide = await h.call('rl_compare_runs', { run_ids: [first.run_id, beside.run_id] });
  assert.equal(sideBySide.isError, false, JSON.stringify(sideBySide.json));
  assert.deepEqual([sideBySide.json.differing_config, sideBySide.json.differing_fields], [{}, 0]);
  const [own, besides] = sideBySide.json.runs;
  assert.deepEqual(own.assigned, {
    rollout_server_url: config.env.rollout_server_url,
    base_urls: config.openai.map((e: { base_url: string }) => e.base_url),
    checkpoint_dir: config.tinker.checkpoint_dir,
  });
  assert.deepEqual(besides.assigned, { rollout_server_url: 'http://127.0.0.1:23456', base_urls: config.openai.map(() => 'http://127.0.0.1:23457/v1'), checkpoint_dir: join(h.home, 'runs', 'a5519ed0', 'checkpoints') });
  rmSync(join(h.home, 'runs', 'a5519ed0'), { recursive: true });

  // Nine more runs whose every env field differs, each value long, each with W&B history.
  const runs = [first];
  for (let i = 1; i < 10; i++) {
    const env = Object.fromEntries(Array.from({ length: 60 }, (_, f) => [`field_${f}`, `${i}-${'x'.repeat(500)}`]));
    runs.push(copyRun(h, first, `0000000${i}`, i, { ...config, env: { ...env, wandb_name: `sweep-${i}` } }));
  }
  for (const [i, run] of runs.entries()) {
    seedTrainer(wandb, run, { rewards: Array.from({ length: 200 }, (_, s) => (s * i) / 1000), losses: Array.from({ length: 200 }, (_, s) => 1 / (s + 1)) });
    seedEnv(wandb, run, Array.from({ length: 200 }, (_, s) => s / 200));
  }
  const big = await h.call('rl_compare_runs', { run_ids: runs.map((r) => r.run_id), metric: 'percent_correct' });
  assert.equal(big.isError, false, JSON.stringify(big.json));
  const size = JSON.stringify(big.json).length;
  assert.ok(size < 32_000, `answer for 10 runs is ${size} characters`);
  assert.equal(Object.keys(big.json.differing_config).length, 20);
  assert.ok(big.json.differing_fields > 60);
  assert.equal(big.json.differing_config_omitted.length, 40);
  for (const values of Object.values<Record<string, unknown>>(big.json.differing_config)) {
    for (const value of Object.values(values)) assert.ok(JSON.stringify(value).length <= 82, `value ${JSON.stringify(value)}`);
  }
  for (const run of big.json.runs) assert.equal(run.metrics.reward_mean.sparkline.length, 40);
  // Every run ends at percent_correct 199/200: the first started wins the tie.
  assert.equal(big.json.best.run_id, first.run_id);
  assert.equal(big.json.best.tied_with.length, 9);

  // The ten lookups run at once, each within the 4 s budget: a W&B that never answers costs one
  // budget (ten in a row would be 40 s), not ten, and every run still gets its answer.
  wandb.inject({ op: 'Runs', times: Infinity, fault: { kind: 'hang' } });
  const began = Date.now();
  const hung = await h.call('rl_compare_runs', { run_ids: runs.map((r) => r.run_id) });
  const elapsed = Date.now() - began;
  assert.equal(hung.isError, false, JSON.stringify(hung.json));
  assert.ok(elapsed < 10_000, `answered after ${elapsed} ms`);
  for (const run of hung.json.runs) assert.match(run.wandb_error, /did not answer in time/);
  assert.equal(hung.json.best, null);
  assert.equal(Object.keys(hung.json.differing_config).length, 20, 'the configs are compared all the same');
});
