/**
 * tasks/cancel across servers sharing RL_HOME: a second server cancels an evaluation task the
 * first started; the task reads `cancelled` only once the evaluation's processes are gone (a /proc
 * scan at each look), and a cancel that nothing carries out (the server running the evaluation was
 * killed) is refused with what happened, never reported as cancelled.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { gsm8kSolver } from './fakes/gsm8kAnswers.js';
import { startFakeTinkerOai } from './fakes/tinkerOaiServer.js';
import { callTool } from './helpers/client.js';
import { makeFakeInstall } from './helpers/fakeInstall.js';
import { killLeftovers, leftovers, newHome, runServerEnv, TINKER_KEY, waitUntil } from './helpers/runs.js';
import { connectTaskClient, type TaskClient } from './helpers/taskClient.js';

const BASE = 'Qwen/Qwen3-8B';

const evaluations = (home: string): string[] => (existsSync(join(home, 'evaluations')) ? readdirSync(join(home, 'evaluations')) : []);

async function taskStatus(tc: TaskClient, taskId: string): Promise<string> {
  const answer = await tc.raw.request({ method: 'tasks/get', params: { taskId, _meta: tc.envelope(true) } });
  assert.equal(answer.error, undefined, JSON.stringify(answer.error));
  return (answer.result as { status: string }).status;
}

test('a second server cancels an evaluation task the first started: cancelled only once its processes are gone; a cancel nobody carries out is not reported cancelled', async (t) => {
  const fake = await startFakeTinkerOai({ apiKey: TINKER_KEY, baseModels: { [BASE]: 0 }, checkpoint: (path) => (path.endsWith('/step_0') ? 0 : 1), solve: gsm8kSolver(), stalled: () => true });
  const install = await makeFakeInstall();
  const home = newHome();
  const env = await runServerEnv(install, home, { env: { TINKER_OAI_BASE_URL: fake.baseUrl } });
  const paths = [install.root, home];
  t.after(async () => {
    await fake.close();
    await killLeftovers(paths);
  });
  const first = await connectTaskClient(env);
  assert.equal((await callTool(first.client, 'rl_select_environment', { name: 'gsm8k' })).isError, false);
  const started = await callTool(first.client, 'rl_start_training');
  assert.equal(started.isError, false, JSON.stringify(started.json));
  const runId = started.json.run_id as string;
  const { outcome } = await (await first.session.callTool('rl_wait_for_run', { run_id: runId, until: 'ended' } as never)).settle();
  assert.equal(outcome.status, 'completed', 'the run ended: its checkpoints are evaluated');

  /** An evaluation started as a task on `tc`, once its model process asks the (stalled) endpoint. */
  const stuckEvaluation = async (tc: TaskClient): Promise<{ taskId: string; evalId: string }> => {
    const asked = fake.requests.length;
    const before = evaluations(home);
    const execution = await tc.session.callTool('rl_evaluate', { run_id: runId } as never);
    assert.equal(execution.kind, 'task');
    await waitUntil('the evaluation asks the endpoint', () => fake.requests.slice(asked).some((r) => r.status === 0));
    assert.ok(leftovers(paths).length > 0, "the evaluation's process is running");
    const taskId = execution.handle!.taskId;
    const evalId = evaluations(home).find((id) => !before.includes(id))!;
    return { taskId, evalId };
  };

  // The first server runs the evaluation; the second, on the same RL_HOME, cancels its task.
  const { taskId } = await stuckEvaluation(first);
  const second = await connectTaskClient(env);
  assert.equal(await taskStatus(second, taskId), 'working', 'the second server reads the task');
  let cancelAnswered = false;
  const cancelling = second.raw.request({ method: 'tasks/cancel', params: { taskId, _meta: second.envelope(true) } }).then((answer) => {
    cancelAnswered = true;
    return answer;
  });
  // Every look while the cancel is on its way: `cancelled` only with no process of the evaluation left.
  const seen: string[] = [];
  while (!cancelAnswered) {
    const status = await taskStatus(second, taskId);
    const left = leftovers(paths);
    seen.push(status);
    if (status === 'cancelled') assert.deepEqual(left, [], 'the task read cancelled while processes of the evaluation were alive');
    await new Promise((r) => setTimeout(r, 100));
  }
  const cancelled = await cancelling;
  assert.equal(cancelled.error, undefined, `the cancel was refused: ${JSON.stringify(cancelled.error)}`);
  assert.deepEqual(leftovers(paths), [], 'no process of the evaluation is left once the cancel is answered');
  assert.equal(await taskStatus(second, taskId), 'cancelled');
  assert.equal(await taskStatus(first, taskId), 'cancelled', 'the server that ran it says the same');
  assert.ok(seen.includes('working'), `looked at while working: ${seen.join(', ')}`);
  // A task already cancelled (a terminal status) is not cancelled again: invalid params, as the extension says.
  const again = await first.raw.request({ method: 'tasks/cancel', params: { taskId, _meta: first.envelope(true) } });
  assert.equal(again.error?.code, -32602, JSON.stringify(again));
  assert.match(again.error!.message, /already been cancelled/);

  // Another evaluation on the first server, which is then killed: nothing can carry out a cancel.
  const orphan = await stuckEvaluation(first);
  const owner = JSON.parse(readFileSync(join(home, 'evaluations', orphan.evalId, 'owner.json'), 'utf8')) as { pid: number };
  process.kill(owner.pid, 'SIGKILL');
  await waitUntil('the first server is gone', () => {
    try {
      process.kill(owner.pid, 0);
      return false;
    } catch {
      return true;
    }
  });
  const refused = await second.raw.request({ method: 'tasks/cancel', params: { taskId: orphan.taskId, _meta: second.envelope(true) } });
  assert.ok(refused.error !== undefined, `a cancel nobody carried out was acknowledged: ${JSON.stringify(refused)}`);
  assert.match(refused.error.message, /not cancelled.*\(pid \d+\) has exited/s);
  assert.notEqual(await taskStatus(second, orphan.taskId), 'cancelled', 'the task is not reported cancelled');
  await second.close();
});
