/** Training runs, happy path: start-up order and readiness, process groups, completion, weights, the run config. */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { parse } from 'yaml';
import { leftovers, procInfo, record, runServer, startRun, TINKER_KEY, waitForRun, waitUntil } from './helpers/runs.js';

test('a run starts API -> trainer -> env each in its own group, runs, completes, and reports its weights', async (t) => {
  const h = await runServer(t, { lockedEnv: { total_steps: 6 } });
  h.install.trainerControl({ step_seconds: 1 });

  const answer = await h.call('rl_start_training');
  assert.equal(answer.isError, false, JSON.stringify(answer.json));
  const start = answer.json;
  const id = start.run_id as string;
  assert.match(id, /^[0-9a-f]{8}$/);
  assert.equal(start.status, 'starting');
  assert.equal(start.environment, 'gsm8k');
  assert.equal(start.wandb_run_name, `gsm8k-${id}`);
  assert.equal(start.trainer_wandb_run_name, `gsm8k-${id}-trainer-mcp`);
  assert.equal(start.wandb_group, id);
  assert.ok(start.config_path.startsWith(h.home), 'the run config lives under RL_HOME');
  for (const p of ['api', 'trainer', 'env']) {
    assert.equal(start.logs[p], `${h.home}/runs/${id}/${p}.log`);
    assert.equal(start.log_uris[p], `rl://runs/${id}/logs/${p}`);
  }
  assert.equal(start.config.total_steps, 6);
  assert.equal(start.config.rollout_server_url, `http://127.0.0.1:${h.env.RL_API_PORT}`);

  // The run config: every value in the file, names fixed in advance, ports from the settings, no secret.
  const yamlText = readFileSync(start.config_path, 'utf8');
  assert.ok(!yamlText.includes(TINKER_KEY));
  const config = parse(yamlText);
  assert.equal(config.env.rollout_server_url, `http://127.0.0.1:${h.env.RL_API_PORT}`);
  assert.equal(config.env.wandb_name, start.config.wandb_name);
  assert.equal(config.openai.length, 1);
  assert.equal(config.openai[0].base_url, `http://127.0.0.1:${h.env.RL_INFERENCE_PORT}/v1`);
  assert.equal(config.openai[0].server_type, 'sglang');
  assert.deepEqual(
    { group: config.tinker.wandb_group, name: config.tinker.wandb_run_name, suffix: config.tinker.wandb_run_suffix },
    { group: id, name: `gsm8k-${id}`, suffix: 'mcp' },
  );
  assert.equal(config.slurm, false);
  assert.equal(config.testing, false);

  // Statuses seen while polling (no rate limit in this test).
  const seen: string[] = [];
  const final = await waitUntil('the run ends', () => {
    const r = record(h, id);
    if (seen.at(-1) !== r.status) seen.push(r.status);
    return r.status === 'completed' || r.status === 'failed' ? r : undefined;
  }, 120);
  assert.equal(final.status, 'completed', `${final.error}\n${readFileSync(final.logs.trainer, 'utf8')}`);
  assert.deepEqual(seen, ['starting', 'running', 'completed']);

  // Order: each process started after the previous one, each the leader of its own group.
  const { api, trainer, env } = final.processes;
  assert.ok(Date.parse(api.started_at!) <= Date.parse(trainer.started_at!));
  assert.ok(Date.parse(trainer.started_at!) <= Date.parse(env.started_at!));
  assert.ok(Date.parse(final.running_at!) >= Date.parse(env.started_at!));
  const pids = [api.pid!, trainer.pid!, env.pid!];
  assert.equal(new Set(pids).size, 3);
  for (const p of [api, trainer, env]) assert.equal(p.pgid, p.pid, 'each child leads its own process group');
  assert.ok(!pids.includes(procInfo(process.pid)!.pgrp), 'no child shares the server process group');
  assert.equal(trainer.exit_code, 0);

  // The remaining processes are stopped once the run ended.
  const cleaned = await waitForRun(h, id, 'has no process left', (r) => Object.values(r.processes).every((p) => p.state === 'exited'));
  assert.ok(cleaned.ended_at);
  assert.deepEqual(leftovers([h.install.root, h.home]), []);

  const status = await h.call('rl_check_status', { run_id: id });
  assert.equal(status.isError, false, JSON.stringify(status.json));
  assert.equal(status.json.status, 'completed');
  assert.equal(status.json.phase, 'done');
  const updates = [...readFileSync(final.logs.trainer, 'utf8').matchAll(/Sampling client updated: (tinker:\/\/\S+)/g)].map((m) => m[1]!);
  assert.equal(updates.length, 6);
  assert.equal(status.json.weights, updates.at(-1)!, 'weights = the last checkpoint actually saved, not the reported .../final');
  assert.match(status.json.weights, /\/sampler_weights\/step_6$/);
  assert.deepEqual(status.json.progress, { step: 6, total_steps: 6 }, 'steps completed, not the last one begun');
  assert.ok(status.json.running_time_minutes >= 0);
  assert.equal(status.json.error, undefined);
  for (const p of ['api', 'trainer', 'env']) assert.equal(status.json.processes[p].state, 'exited');

  const list = await h.call('rl_list_runs');
  assert.equal(list.json.count, 1);
  const { health, cost, ...listed } = list.json.runs[0];
  assert.match(cost.basis, /^estimate \(high figures/, 'no smoke test: spend is counted at the high bound');
  assert.deepEqual(listed, {
    run_id: id,
    environment: 'gsm8k',
    framework: 'atropos',
    placement: 'local',
    status: 'completed',
    wandb_run_name: `gsm8k-${id}`,
    started_at: final.started_at,
    ended_at: final.ended_at,
  });
  // The watchdog's last look is kept when the run ends: every step the trainer completed.
  assert.deepEqual([health.verdict, health.last_step, health.reasons], ['completed', 6, []]);
  assert.deepEqual([status.json.health.verdict, status.json.health.last_step], ['completed', 6]);
});

test('rl_list_runs lists newest first and reports a damaged run.json as unknown without hiding the others', async (t) => {
  const h = await runServer(t);
  h.install.trainerControl({ step_seconds: 0.01 });
  const first = await startRun(h);
  await waitForRun(h, first, 'ended and cleaned up', (r) => r.status === 'completed' && Object.values(r.processes).every((p) => p.state === 'exited'));
  const second = await startRun(h);
  await waitForRun(h, second, 'ended and cleaned up', (r) => r.status === 'completed' && Object.values(r.processes).every((p) => p.state === 'exited'));

  writeFileSync(`${h.home}/runs/${first}/run.json`, '{"run_id": "trunc');
  const list = await h.call('rl_list_runs');
  assert.equal(list.isError, false);
  assert.equal(list.json.count, 2);
  assert.equal(list.json.runs[0].run_id, second, 'newest first');
  assert.equal(list.json.runs[0].status, 'completed');
  const damaged = list.json.runs.find((r: { run_id: string }) => r.run_id === first);
  assert.equal(damaged.status, 'unknown');
  assert.match(damaged.error, /not valid JSON/);

  const status = await h.call('rl_check_status', { run_id: first });
  assert.equal(status.isError, false);
  assert.equal(status.json.status, 'unknown');
  assert.match(status.json.error, /not valid JSON/);
  const stop = await h.call('rl_stop_training', { run_id: first });
  assert.equal(stop.isError, true);
  assert.match(stop.json.error, /cannot be stopped/);
  // The healthy run is untouched.
  assert.equal((await h.call('rl_check_status', { run_id: second })).json.status, 'completed');
});
