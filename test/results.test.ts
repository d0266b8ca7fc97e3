/**
 * W&B through the tools (issue 4): rl_check_status fills `metrics` from the runs really in the
 * group, rl_get_results carries summary, history, weights and outcome, also after a restart.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { connectInMemory } from './helpers/client.js';
import { record, runServer, startRun, waitForRun } from './helpers/runs.js';
import { ENTITY, ENV_RUN, KEY as WANDB_KEY, PROJECT, TRAINER, seedTrainingRun } from './fakes/wandbFixtures.js';
import { FakeWandb } from './fakes/wandbServer.js';

test('a finished run: W&B metrics in the status, results with summary, history, weights and outcome, also after a restart', async (t) => {
  const wandb = await FakeWandb.start({ apiKey: WANDB_KEY });
  after(() => wandb.close());
  const h = await runServer(t, { lockedEnv: { use_wandb: true }, env: { WANDB_API_KEY: WANDB_KEY, WANDB_BASE_URL: `${wandb.url}/` } });
  const runId = await startRun(h);
  await waitForRun(h, runId, 'completed', (r) => r.status === 'completed');

  const homeless = await h.call('rl_check_status', { run_id: runId });
  assert.match(homeless.json.wandb_error, /project alice\/atropos-tinker not found/);
  wandb.project(ENTITY, PROJECT); // the project exists, the run's group is still empty
  const early = await h.call('rl_check_status', { run_id: runId });
  assert.equal(early.isError, false);
  assert.equal(early.json.status, 'completed');
  assert.equal(early.json.processes.trainer.exit_code, 0);
  assert.match(early.json.wandb_error, new RegExp(`no (W&B )?run.*group.*${runId}`, 'i'));
  assert.equal(early.json.metrics, undefined);

  const run = record(h, runId);
  seedTrainingRun(wandb, ENTITY, PROJECT, run);
  const status = await h.call('rl_check_status', { run_id: runId });
  assert.equal(status.isError, false);
  assert.deepEqual(status.json.metrics, { step: 30, reward_mean: 1, loss: 1 / 30, percent_correct: 0.5, eval_percent_correct: 0.8, state: 'running' });
  // WANDB_BASE_URL had a trailing slash and a custom host: the app URL is the same host.
  assert.equal(status.json.wandb_url, `${wandb.url}/${ENTITY}/${PROJECT}/runs/${TRAINER}`);
  assert.ok(wandb.requests.every((r) => r.headers.authorization === `Basic ${Buffer.from(`api:${WANDB_KEY}`).toString('base64')}`));

  const results = await h.call('rl_get_results', { run_id: runId, samples: 5 });
  assert.equal(results.isError, false, JSON.stringify(results.json));
  assert.equal(results.json.outcome.status, 'completed');
  assert.match(results.json.outcome.reason, /Training complete \(3\/3 steps trained\)/);
  assert.match(results.json.weights.latest, /^tinker:\/\/\S+\/sampler_weights\/step_3$/);
  assert.equal(results.json.weights.checkpoint_count, 4);
  assert.match(results.json.weights.final_reported, /sampler_weights\/final$/);
  assert.equal(results.json.final_metrics['reward/mean'], 1);
  assert.equal(results.json.history.length, 5);
  const last = results.json.history.at(-1);
  assert.equal(last._step, 30);
  assert.equal(last['reward/mean'], 1);
  assert.equal(last[`${run.wandb_name}_0_train/percent_correct`], 0.5);
  assert.ok(typeof results.json.sparklines.reward_mean === 'string' && results.json.sparklines.reward_mean.length > 1);
  assert.ok(wandb.requests.some((r) => r.op === 'RunSampledHistory' && (r.variables as { name?: string }).name === ENV_RUN));

  // A new server on the same RL_HOME reads the same run.
  await h.close();
  const again = await connectInMemory(h.env);
  const reread = await again.call('rl_get_results', { run_id: runId });
  assert.equal(reread.isError, false);
  assert.equal(reread.json.weights.latest, results.json.weights.latest);
  assert.equal(reread.json.wandb_url, status.json.wandb_url);
});

test('a failed run: the outcome names the trainer error; W&B off is said, not hidden', async (t) => {
  const h = await runServer(t);
  h.install.trainerControl({ error_in_step: 1 });
  const runId = await startRun(h);
  await waitForRun(h, runId, 'failed', (r) => r.status === 'failed');
  const results = await h.call('rl_get_results', { run_id: runId });
  assert.equal(results.isError, false);
  assert.equal(results.json.outcome.status, 'failed');
  assert.match(results.json.outcome.reason, /Error in step 1/);
  assert.match(results.json.wandb_error, /use_wandb is false/);
  assert.equal(results.json.weights.latest?.endsWith('step_1'), true);

  const unknown = await h.call('rl_get_results', { run_id: 'abcdef12' });
  assert.equal(unknown.isError, true);
  assert.match(unknown.json.error, /Run 'abcdef12' not found/);
  const bad = await h.call('rl_get_results', { run_id: runId, samples: 501 });
  assert.equal(bad.isError, true);
});
