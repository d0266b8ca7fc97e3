/**
 * Health told from what a run does, not from whether its processes live: an environment that
 * produces nothing leaves the (upstream-faithful) trainer waiting for a batch for ever; the run
 * shows waiting_for_data, then stalled with the environment's own error as evidence, through the
 * rate limit too; with RL_STALL_ACTION=stop it ends failed with nothing left running.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { leftovers, record, runServer, startRun, waitForRun } from './helpers/runs.js';
import { makeFakeInstall } from './helpers/fakeInstall.js';
import { freePort } from './helpers/tmp.js';

const allExited = (r: { processes: Record<string, { state: string }> }): boolean => Object.values(r.processes).every((p) => p.state !== 'running');

/**
 * The bundled gsm8k environment, judged by a remote grader that is down (nothing listens on its
 * port): every rollout fails with a connection error, which atroposlib logs and survives, so no
 * group ever reaches the API.
 */
async function graderDownEnvironment(dir: string): Promise<void> {
  const port = await freePort();
  writeFileSync(
    join(dir, 'graded_gsm8k.py'),
    `"""gsm8k, its answers checked by a grading service."""
import urllib.request

from gsm8k_tinker import GSM8kEnv


class GradedGsm8kEnv(GSM8kEnv):
    name = "graded_gsm8k"

    async def collect_trajectories(self, item):
        urllib.request.urlopen("http://127.0.0.1:${port}/grade", timeout=2)
        return await super().collect_trajectories(item)


if __name__ == "__main__":
    GradedGsm8kEnv.cli()
`,
  );
}

async function graderDownServer(t: TestContext, env: Record<string, string>) {
  const install = await makeFakeInstall();
  await graderDownEnvironment(install.environmentsDir);
  const h = await runServer(t, { install, select: false, lockedEnv: { total_steps: 50 }, env: { RL_STALL_SECONDS: '2', ...env } });
  const selected = await h.call('rl_select_environment', { name: 'graded_gsm8k' });
  assert.equal(selected.isError, false, JSON.stringify(selected.json));
  assert.deepEqual(selected.json.tinker_problems, [], 'it samples through managed_server');
  return h;
}

test('an environment that produces nothing: waiting_for_data, then stalled with its connection error as evidence, rate limit or not', async (t) => {
  const h = await graderDownServer(t, { RL_STATUS_MIN_INTERVAL_SECONDS: '3600' });
  const id = await startRun(h);
  await waitForRun(h, id, 'is running', (r) => r.status === 'running');

  const first = await h.call('rl_check_status', { run_id: id });
  assert.equal(first.json.rate_limited, undefined);
  assert.equal(first.json.status, 'running');
  assert.ok(['waiting_for_data', 'stalled'].includes(first.json.health.verdict), JSON.stringify(first.json.health));
  assert.equal(first.json.phase, 'waiting_for_data');

  // Inside the rate-limit window: the cheap answer still carries health, and the stall shows.
  let stalled: Record<string, any> | undefined;
  for (const deadline = Date.now() + 60_000; stalled === undefined && Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
    const answer = await h.call('rl_check_status', { run_id: id });
    assert.equal(answer.json.rate_limited, true);
    const evidence = answer.json.health.reasons.some((r: { code: string }) => r.code === 'env_connection_errors');
    if (answer.json.health.verdict === 'stalled' && evidence) stalled = answer.json;
  }
  assert.ok(stalled, 'the rate-limited status said stalled, with the evidence, within 60 s');
  const codes = stalled.health.reasons.map((r: { code: string }) => r.code);
  assert.equal(codes[0], 'stalled');
  assert.match(stalled.health.reasons[0].message, /^Stalled: no data has reached the Atropos API for \d+ s, more than 4 s \(before the first step the limit is 2 x RL_STALL_SECONDS=2\)/);
  const connection = stalled.health.reasons.find((r: { code: string }) => r.code === 'env_connection_errors');
  assert.ok(connection, JSON.stringify(stalled.health));
  assert.match(connection.evidence.line, /Connection refused/);
  assert.ok(connection.evidence.count >= 1);
  assert.equal(stalled.status, 'running', 'warn (the default) reports the stall and leaves the run alone');
  assert.deepEqual(stalled.progress, { step: 0, total_steps: 50 }, 'the rate-limited answer has progress too: no step completed');

  const listed = (await h.call('rl_list_runs')).json.runs.find((r: { run_id: string }) => r.run_id === id);
  assert.equal(listed.health.verdict, 'stalled');
  await h.call('rl_stop_training', { run_id: id });
});

test('with RL_STALL_ACTION=stop a stalled run ends failed, says why, and leaves no process', async (t) => {
  const h = await graderDownServer(t, { RL_STALL_ACTION: 'stop' });
  const id = await startRun(h);
  const failed = await waitForRun(h, id, 'failed and cleaned up', (r) => r.status === 'failed' && allExited(r), 90);
  assert.match(failed.error!, /^Stalled: no data has reached the Atropos API for \d+ s.* Last sign from the env: .*Connection refused/);
  const status = await h.call('rl_check_status', { run_id: id });
  assert.equal(status.json.health.verdict, 'failed');
  assert.deepEqual(leftovers([h.install.root, h.home]), []);
  assert.equal(record(h, id).phase, 'done');
});

test('a run whose every group scores alike trains nothing: its health says no learning signal, with the trainer\'s own line', async (t) => {
  const h = await runServer(t, { lockedEnv: { total_steps: 50 } });
  // The fake trainer samples the same text for every completion: every group's scores are equal.
  h.install.trainerControl({ step_seconds: 0.5 });
  const id = await startRun(h);
  await waitForRun(h, id, 'observed a completed step', (r) => (r.observed?.steps_completed ?? 0) >= 1);
  let reason: Record<string, any> | undefined;
  let health: Record<string, any> | undefined;
  for (const deadline = Date.now() + 60_000; reason === undefined && Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
    health = (await h.call('rl_check_status', { run_id: id })).json.health;
    reason = health!.reasons.find((r: { code: string }) => r.code === 'no_learning_signal');
  }
  assert.ok(reason, `the health said no learning signal within 60 s: ${JSON.stringify(health)}`);
  assert.equal(health!.verdict, 'degraded');
  assert.match(reason.evidence.line, /^Skipped \d+ groups with zero advantages$/);
  assert.match(reason.message, /trained nothing: every group of their batches scored alike/);
  await h.call('rl_stop_training', { run_id: id });
});
