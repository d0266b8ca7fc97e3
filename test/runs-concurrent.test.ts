/**
 * Several runs on one host: each on its own ports, in its own trainer directory, with its own
 * checkpoint_dir; the limit names the active runs; stopping one leaves the others; a new server
 * adopts them all.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { callTool, connectStdio } from './helpers/client.js';
import { record, runServer, startRun, waitForRun, waitUntil } from './helpers/runs.js';

const RUNS = 4;

test('four runs at once: own ports, own files; a fifth refused naming them; one stopped, the rest go on; a new server adopts them', async (t) => {
  const first = await runServer(t, { lockedEnv: { total_steps: 500 }, env: { RL_MAX_CONCURRENT_RUNS: String(RUNS) } });
  first.install.trainerControl({ step_seconds: 0.5 });
  const ids: string[] = [];
  for (let i = 0; i < RUNS; i++) ids.push(await startRun(first));
  const running = await Promise.all(ids.map((id) => waitForRun(first, id, 'is running', (r) => r.status === 'running', 90)));

  // Ports: the first run takes the configured ones, every run its own pair.
  assert.deepEqual(running[0]!.ports, { api: Number(first.env.RL_API_PORT), inference: Number(first.env.RL_INFERENCE_PORT) });
  const ports = running.flatMap((r) => [r.ports.api, r.ports.inference]);
  assert.equal(new Set(ports).size, RUNS * 2, `every port differs: ${ports.join(', ')}`);
  for (const r of running) {
    const config = parse(readFileSync(r.config_path, 'utf8')) as { env: Record<string, unknown>; openai: { base_url: string }[]; tinker: { checkpoint_dir: string } };
    assert.equal(config.env.rollout_server_url, `http://127.0.0.1:${r.ports.api}`);
    assert.equal(config.openai[0]!.base_url, `http://127.0.0.1:${r.ports.inference}/v1`);
    assert.equal(config.tinker.checkpoint_dir, join(first.home, 'runs', r.run_id, 'checkpoints'));
    assert.ok(r.processes.api.command.includes(String(r.ports.api)));
    assert.equal(r.processes.trainer.cwd, join(first.home, 'runs', r.run_id, 'trainer'));
    // The trainer hard-codes 8001 as upstream does; the wrapper moved its server to the run's port.
    const log = readFileSync(r.logs.trainer, 'utf8');
    assert.match(log, /Starting FastAPI inference server on port 8001\.\.\./);
    assert.ok(log.includes(`run_trainer: inference server on 127.0.0.1:${r.ports.inference}`), log);
  }
  // Each trainer writes temp.json in its own directory, never the checkout's.
  await waitUntil('every trainer wrote its temp.json', () => running.every((r) => existsSync(join(r.processes.trainer.cwd!, 'temp.json'))), 60);
  assert.equal(existsSync(join(first.install.root, 'temp.json')), false, 'no temp.json in the shared checkout');

  const fifth = await first.call('rl_start_training');
  assert.equal(fifth.isError, true);
  assert.match(fifth.json.error, /^4 runs are active on this host, the most RL_MAX_CONCURRENT_RUNS \(4\) allows: /);
  for (const id of ids) assert.ok(fifth.json.error.includes(`${id} (gsm8k, running)`), `${id} is named`);
  assert.deepEqual([...fifth.json.active_runs].sort(), [...ids].sort());

  const stop = await first.call('rl_stop_training', { run_id: ids[1] });
  assert.equal(stop.json.status, 'stopped', JSON.stringify(stop.json));
  for (const id of [ids[0]!, ids[2]!, ids[3]!]) assert.equal(record(first, id).status, 'running', `run ${id} goes on`);

  // The server goes; the three that run on stay with their keepers, which a new server over the same RL_HOME leaves alone.
  const keepers = [ids[0]!, ids[2]!, ids[3]!].map((id) => first.runtime.runs.keeperOf(id));
  assert.equal(new Set(keepers).size, 3, 'one keeper per run');
  await first.close();
  const second = await runServer(t, { install: first.install, home: first.home, select: false, env: { RL_MAX_CONCURRENT_RUNS: String(RUNS) } });
  for (const [i, id] of [ids[0]!, ids[2]!, ids[3]!].entries()) {
    assert.equal(second.runtime.runs.keeperOf(id), keepers[i], `${id} is kept by its own keeper still`);
    assert.equal(record(second, id).status, 'running');
  }
  assert.equal(second.runtime.runs.keeperOf(ids[1]!), undefined, 'the stopped run stays stopped, nothing keeps it');
});

test('two servers start runs at once: the one whose checks ran first sees the other run under the start lock and takes free ports, not a refusal', async (t) => {
  const a = await runServer(t, { lockedEnv: { total_steps: 500 } });
  a.install.trainerControl({ step_seconds: 0.5 });
  // An environment slow to import: its start's checks take seconds, so the other server's run is
  // created and binds the configured ports between those checks and the lock.
  const source = readFileSync(join(a.install.environmentsDir, 'gsm8k_tinker.py'), 'utf8');
  writeFileSync(join(a.install.environmentsDir, 'gsm8k_slow.py'), source.replace(/^import time$/m, 'import time\ntime.sleep(4)').replace('name = "gsm8k"', 'name = "gsm8k_slow"'));
  const b = await connectStdio(a.env);
  const slow = callTool(b.client, 'rl_start_training', { environment: 'gsm8k_slow' }, { timeout: 120_000 });
  // Past the slow start's first import (its config), inside its second (its checks).
  await new Promise((resolve) => setTimeout(resolve, 5_500));
  const fast = await startRun(a);
  const answer = await slow;
  assert.equal(answer.isError, false, `the slow start is not refused: ${JSON.stringify(answer.json)}`);
  const [first, second] = await Promise.all([fast, answer.json.run_id as string].map((id) => waitForRun(a, id, 'is running', (r) => r.status === 'running', 90)));
  assert.deepEqual(first!.ports, { api: Number(a.env.RL_API_PORT), inference: Number(a.env.RL_INFERENCE_PORT) }, 'the run created first took the configured ports');
  assert.notDeepEqual(second!.ports, first!.ports, 'the other one drew its own');
  await b.close();
});
