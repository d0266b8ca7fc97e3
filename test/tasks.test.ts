/**
 * The tasks extension (`io.modelcontextprotocol/tasks`) through a task-capable client (the SDK
 * Client on 2026-07-28 driven by @modelcontextprotocol/ext-tasks) against the built server: a wait
 * and an evaluation run as tasks to completion, another evaluation is cancelled mid-way and leaves
 * no process, a task outlives its server, and the extension's rules hold on the wire (no task for a
 * request that does not declare the extension, -32021 for tasks/* without it, -32602 for a task id
 * the server never issued).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { gsm8kSolver } from './fakes/gsm8kAnswers.js';
import { startFakeTinkerOai } from './fakes/tinkerOaiServer.js';
import { callTool } from './helpers/client.js';
import { makeFakeInstall } from './helpers/fakeInstall.js';
import { killLeftovers, leftovers, newHome, runServerEnv, TINKER_KEY, waitUntil } from './helpers/runs.js';
import { connectTaskClient, type TaskClient } from './helpers/taskClient.js';

const BASE = 'Qwen/Qwen3-8B';
type Answer = { structuredContent?: Record<string, any>; isError?: boolean };

/** Runs one tool call through the task session: how it went (a task or an immediate answer), the states polled, the outcome. */
async function asTask(tc: TaskClient, name: string, args: Record<string, unknown>) {
  const execution = await tc.session.callTool(name, args as never);
  const states: string[] = [];
  const { outcome } = await execution.settle({ onEvent: (e) => void (e.type === 'task' && states.push(e.task.status)) });
  return { kind: execution.kind, taskId: execution.handle?.taskId, states, outcome, result: outcome.status === 'completed' ? (outcome.result as Answer) : undefined };
}

test('a task-capable client: a wait and an evaluation run as tasks to their end, another evaluation is cancelled mid-way with nothing left, a task outlives its server, the wire follows the extension', async (t) => {
  let stalled = false;
  const fake = await startFakeTinkerOai({
    apiKey: TINKER_KEY,
    baseModels: { [BASE]: 0 },
    checkpoint: (path) => (path.endsWith('/step_0') ? 0 : 1),
    solve: gsm8kSolver(),
    stalled: () => stalled,
  });
  const install = await makeFakeInstall();
  const home = newHome();
  const env = await runServerEnv(install, home, { env: { TINKER_OAI_BASE_URL: fake.baseUrl } });
  t.after(async () => {
    await fake.close();
    await killLeftovers([install.root, home]);
  });
  const tc = await connectTaskClient(env);
  assert.deepEqual(tc.client.getServerCapabilities()?.extensions?.['io.modelcontextprotocol/tasks'], {}, 'server/discover advertises the extension');
  assert.equal((await callTool(tc.client, 'rl_select_environment', { name: 'gsm8k' })).isError, false);
  const started = await callTool(tc.client, 'rl_start_training');
  assert.equal(started.isError, false, JSON.stringify(started.json));
  const runId = started.json.run_id as string;

  // rl_wait_for_run as a task: no 50 s limit, it lasts until the run ended.
  const waited = await asTask(tc, 'rl_wait_for_run', { run_id: runId, until: 'ended' });
  assert.equal(waited.kind, 'task');
  assert.equal(waited.outcome.status, 'completed');
  assert.deepEqual([waited.result?.structuredContent?.reached, waited.result?.structuredContent?.status], [true, 'completed']);

  // rl_evaluate as a task, polled to its end: the answer is the evaluation's, as rl_evaluate({eval_id}) gives it.
  const evaluated = await asTask(tc, 'rl_evaluate', { run_id: runId });
  assert.equal(evaluated.kind, 'task');
  assert.ok(evaluated.states.includes('working'), `polled while working: ${evaluated.states.join(', ')}`);
  assert.equal(evaluated.outcome.status, 'completed');
  const verdict = evaluated.result!.structuredContent!;
  assert.deepEqual([verdict.status, verdict.verdict.verdict], ['completed', 'better']);
  const again = await callTool(tc.client, 'rl_evaluate', { eval_id: verdict.eval_id, wait_seconds: 0 });
  assert.deepEqual(again.json.verdict, verdict.verdict, 'the task is the evaluation in its registry');

  // Another evaluation against an endpoint that stalls: cancelled while its model process waits.
  stalled = true;
  const stuck = await tc.session.callTool('rl_evaluate', { run_id: runId } as never);
  assert.equal(stuck.kind, 'task');
  await waitUntil('the evaluation asks the endpoint', () => fake.requests.some((r) => r.status === 0));
  assert.ok(leftovers([install.root, home]).length > 0, "the evaluation's process is running");
  await stuck.cancel();
  const { outcome } = await stuck.settle();
  assert.equal(outcome.status, 'cancelled');
  await waitUntil('no process is left', () => leftovers([install.root, home]).length === 0, 30);
  const cancelledTask = (await tc.raw.request({ method: 'tasks/get', params: { taskId: stuck.handle!.taskId, _meta: tc.envelope(true) } })).result as { status: string };
  assert.equal(cancelledTask.status, 'cancelled');
  const stored = await waitUntil('the evaluation wrote its end', () => readdirResults(home).find((r) => r.status === 'cancelled'));
  assert.match(stored.message ?? '', /its task was cancelled/, 'the evaluation says why it stopped');
  stalled = false;

  // The wire: a request without the extension gets the tool's own answer; tasks/* need it; ids are the server's.
  const plain = await tc.raw.request({ method: 'tools/call', params: { name: 'rl_wait_for_run', arguments: { run_id: runId, until: 'ended' }, _meta: tc.envelope(false) } });
  assert.equal((plain.result as { resultType?: string }).resultType, 'complete');
  assert.equal((plain.result as Answer).structuredContent?.reached, true);
  const undeclared = await tc.raw.request({ method: 'tasks/get', params: { taskId: evaluated.taskId, _meta: tc.envelope(false) } });
  assert.equal(undeclared.error?.code, -32021);
  const forged = `${evaluated.taskId!.split('.')[0]}.${'A'.repeat(43)}`;
  const unknown = await tc.raw.request({ method: 'tasks/get', params: { taskId: forged, _meta: tc.envelope(true) } });
  assert.equal(unknown.error?.code, -32602);
  await tc.close();

  // The host restarts the server: the finished task is still there, with its answer.
  const next = await connectTaskClient(env);
  const restarted = await next.raw.request({ method: 'tasks/get', params: { taskId: evaluated.taskId, _meta: next.envelope(true) } });
  const task = restarted.result as { status: string; result: Answer & { resultType: string } };
  assert.deepEqual([task.status, task.result.resultType], ['completed', 'complete']);
  assert.deepEqual(task.result.structuredContent?.verdict, verdict.verdict);
});

/** Every evaluation's result.json under RL_HOME. */
function readdirResults(home: string): Array<{ status: string; message?: string }> {
  const root = join(home, 'evaluations');
  return readdirSync(root).map((id) => JSON.parse(readFileSync(join(root, id, 'result.json'), 'utf8')));
}
