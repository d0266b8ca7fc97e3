/**
 * Both protocol generations against the built server over stdio, each with the whole workflow: the
 * SDK Client speaking 2025-06-18, 2025-11-25 and 2026-07-28, and a client of SDK v1 (what hosts
 * built before v2 run). Each selects, edits, starts (the cost question declined, then accepted),
 * follows the run's trainer log (resources/subscribe on 2025, subscriptions/listen on 2026), checks
 * the status and stops the run, nothing left running. How the question was asked is read off the
 * wire: a server request `elicitation/create` on 2025, an `input_required` answer on 2026 (the
 * client asks its user and calls again).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client, ProtocolError, ProtocolErrorCode, type JSONRPCMessage } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioClientTransportV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, ResourceUpdatedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { connectStdio, PROTOCOL_VERSIONS, speaking, toolAnswer, type ToolAnswer } from './helpers/client.js';
import { makeFakeInstall, type FakeInstall } from './helpers/fakeInstall.js';
import { killLeftovers, leftovers, newHome, runServerEnv, waitUntil } from './helpers/runs.js';
import { DIST_ENTRY, testEnv } from './helpers/tmp.js';

/** What a session saw arrive: server requests by method, and the resultType of each answer. */
interface Wire {
  requests: string[];
  resultTypes: string[];
}

/** One client session, whatever its SDK and protocol version. */
interface Session {
  call(name: string, args?: Record<string, unknown>): Promise<ToolAnswer>;
  /** Follows a resource: resources/subscribe (2025) or subscriptions/listen (2026). */
  follow(uri: string): Promise<void>;
  updates: string[];
  /** The questions the client's user was asked, in order. */
  questions: string[];
  wire: Wire;
  close(): Promise<void>;
}

/** The user declines the first question and accepts every later one. */
const userAnswer = (questions: string[], message: string) => {
  questions.push(message);
  return questions.length === 1 ? { action: 'decline' as const } : { action: 'accept' as const, content: { start: true } };
};

function record(wire: Wire, message: JSONRPCMessage): void {
  const m = message as { method?: string; id?: unknown; result?: { resultType?: string } };
  if (m.method !== undefined && m.id !== undefined) wire.requests.push(m.method);
  if (m.result !== undefined) wire.resultTypes.push(m.result.resultType ?? '(none)');
}

async function sessionV2(env: Record<string, string>, version: (typeof PROTOCOL_VERSIONS)[number]): Promise<Session> {
  const client = new Client({ name: `protocols-${version}`, version: '0' }, { ...speaking(version), capabilities: { elicitation: { form: {} } } });
  const s: Session = { updates: [], questions: [], wire: { requests: [], resultTypes: [] } } as unknown as Session;
  client.setRequestHandler('elicitation/create', (request) => userAnswer(s.questions, request.params.message));
  client.setNotificationHandler('notifications/resources/updated', (n) => void s.updates.push(n.params.uri));
  const transport = new StdioClientTransport({ command: process.execPath, args: [DIST_ENTRY], env: testEnv(env), stderr: 'ignore' });
  await client.connect(transport);
  assert.equal(client.getNegotiatedProtocolVersion(), version);
  const deliver = transport.onmessage!;
  transport.onmessage = (message: JSONRPCMessage) => {
    record(s.wire, message);
    deliver(message);
  };
  s.call = async (name, args = {}) => toolAnswer(name, await client.callTool({ name, arguments: args }));
  s.follow = async (uri) => {
    if (version === '2026-07-28') await client.listen({ resourceSubscriptions: [uri] });
    else await client.subscribeResource({ uri });
  };
  s.close = () => client.close();
  return s;
}

async function sessionV1(env: Record<string, string>): Promise<Session> {
  const client = new ClientV1({ name: 'protocols-sdk-v1', version: '0' }, { capabilities: { elicitation: { form: {} } } });
  const s: Session = { updates: [], questions: [], wire: { requests: [], resultTypes: [] } } as unknown as Session;
  client.setRequestHandler(ElicitRequestSchema, (request) => userAnswer(s.questions, request.params.message));
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void s.updates.push(n.params.uri));
  const transport = new StdioClientTransportV1({ command: process.execPath, args: [DIST_ENTRY], env: testEnv(env), stderr: 'ignore' });
  await client.connect(transport);
  const deliver = transport.onmessage!;
  transport.onmessage = (message) => {
    record(s.wire, message as JSONRPCMessage);
    deliver(message);
  };
  s.call = async (name, args = {}) => toolAnswer(name, (await client.callTool({ name, arguments: args })) as CallToolResult as never);
  s.follow = async (uri) => void (await client.subscribeResource({ uri }));
  s.close = () => client.close();
  return s;
}

/** One fake install for the file, its runs taking a second a step; a server (and RL_HOME) per client. */
const install: FakeInstall = await makeFakeInstall();
install.trainerControl({ step_seconds: 1 });

async function serverEnv(): Promise<{ env: Record<string, string>; paths: string[] }> {
  const home = newHome();
  const env = await runServerEnv(install, home, { lockedEnv: { total_steps: 500 }, env: { RL_CONFIRM_ABOVE_USD: '0' } });
  return { env, paths: [install.root, home] };
}

async function workflow(s: Session, legacy: boolean): Promise<void> {
  assert.equal((await s.call('rl_select_environment', { name: 'gsm8k' })).isError, false);
  const edited = await s.call('rl_edit_config', { field: 'group_size', value: 8 });
  assert.equal(edited.isError, false, JSON.stringify(edited.json));

  const declined = await s.call('rl_start_training');
  assert.equal(declined.isError, true);
  assert.match(declined.json.error, /^Not started: the cost was not confirmed \(the client answered the question "decline"/);
  const started = await s.call('rl_start_training');
  assert.equal(started.isError, false, JSON.stringify(started.json));
  assert.equal(started.json.config.group_size, 8, 'the edit reached the run');
  assert.equal(s.questions.length, 2);
  assert.match(s.questions[1]!, /^Start training gsm8k on Qwen\/Qwen3-8B\? This is an estimated/);
  // How the user was asked: a request from the server (2025), or an input_required answer (2026).
  assert.equal(s.wire.requests.filter((m) => m === 'elicitation/create').length, legacy ? 2 : 0, `server requests: ${s.wire.requests.join(', ')}`);
  assert.equal(s.wire.resultTypes.filter((r) => r === 'input_required').length, legacy ? 0 : 2, `results: ${s.wire.resultTypes.join(', ')}`);

  const runId = started.json.run_id as string;
  const log = started.json.log_uris.trainer as string;
  await s.follow(log);
  await waitUntil('the trainer log grows and the client is told', () => s.updates.includes(log), 60);
  const running = await s.call('rl_wait_for_run', { run_id: runId, until: 'running' });
  assert.equal(running.json.reached, true, JSON.stringify(running.json));
  const status = await s.call('rl_check_status', { run_id: runId });
  assert.equal(status.json.status, 'running', JSON.stringify(status.json));
  const stopped = await s.call('rl_stop_training', { run_id: runId });
  assert.equal(stopped.json.status, 'stopped', JSON.stringify(stopped.json));
}

for (const version of PROTOCOL_VERSIONS) {
  test(`SDK v2 client on ${version}: select, edit, start (asked, declined, then accepted), follow the log, status, stop`, async (t) => {
    const { env, paths } = await serverEnv();
    const s = await sessionV2(env, version);
    t.after(async () => {
      await s.close();
      await killLeftovers(paths);
    });
    await workflow(s, version !== '2026-07-28');
    assert.deepEqual(leftovers(paths), []);
  });
}

test('SDK v1 client (2025-11-25): the same workflow', async (t) => {
  const { env, paths } = await serverEnv();
  const s = await sessionV1(env);
  t.after(async () => {
    await s.close();
    await killLeftovers(paths);
  });
  await workflow(s, true);
  assert.deepEqual(leftovers(paths), []);
});

test('2026-07-28: `arguments` that is not an object is invalid params (-32602) in one sentence, as on 2025 (unit/tool-calls.test.ts)', async () => {
  const h = await connectStdio({ RL_HOME: newHome() }, { protocol: '2026-07-28' });
  for (const args of ['a string', [1, 2]]) {
    const refused = await h.client.request({ method: 'tools/call', params: { name: 'rl_list_runs', arguments: args } } as never).then(
      () => assert.fail(`arguments ${JSON.stringify(args)} was accepted`),
      (err: unknown) => err,
    );
    assert.ok(refused instanceof ProtocolError, String(refused));
    assert.equal(refused.code, ProtocolErrorCode.InvalidParams, refused.message);
    assert.match(refused.message, /^The arguments of a tools\/call must be a JSON object of argument names to values, not (a string|an array)\.$/);
  }
  assert.equal(toolAnswer('rl_list_runs', await h.client.callTool({ name: 'rl_list_runs', arguments: {} })).isError, false, 'the next call is answered');
});
