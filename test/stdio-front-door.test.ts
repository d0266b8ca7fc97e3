/**
 * The built server's first answers over real stdio, sent before the SDK loads (src/server/frontDoor.ts),
 * against the SDK's own: the server replays the session to the SDK and checks each one. For each
 * kind of client (2025 protocol versions supported, old and unknown, and 2026-07-28; with and
 * without MCP Apps) the answers are confirmed and the tool list equals the one the SDK sends later;
 * a stale recorded handshake is caught and logged.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/client';
import { APPS_CLIENT_CAPABILITIES } from './helpers/client.js';
import { copyOfBuiltPackage, DIST_ENTRY, tempDir, testEnv } from './helpers/tmp.js';

interface Answer {
  id: number;
  result?: { protocolVersion?: string; instructions?: string; tools?: { name: string }[] };
}

/** A raw JSON-RPC session with a server process: the answers by id. */
function session(entry: string, home: string): { child: ChildProcessWithoutNullStreams; request(id: number, method: string, params?: object): Promise<Answer>; notify(method: string): void } {
  const child = spawn(process.execPath, [entry], { env: testEnv({ RL_HOME: home, LOG_LEVEL: 'debug' }), stdio: ['pipe', 'pipe', 'pipe'] });
  child.stderr.resume();
  const waiting = new Map<number, (a: Answer) => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    const answer = JSON.parse(line) as Answer;
    waiting.get(answer.id)?.(answer);
  });
  const write = (message: object): boolean => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
  return {
    child,
    request: (id, method, params) => new Promise((resolve) => (waiting.set(id, resolve), write({ id, method, ...(params ? { params } : {}) }))),
    notify: (method) => void write({ method }),
  };
}

async function firstAnswers(entry: string, home: string, protocolVersion: string, capabilities: object) {
  const s = session(entry, home);
  const init = await s.request(1, 'initialize', { protocolVersion, capabilities, clientInfo: { name: 'front-door-test', version: '0' } });
  s.notify('notifications/initialized');
  const early = await s.request(2, 'tools/list');
  // A request the front door leaves to the server: the SDK answers everything from here on.
  await s.request(3, 'ping');
  const late = await s.request(4, 'tools/list');
  s.child.stdin.end();
  await once(s.child, 'exit');
  const log = readFileSync(join(home, 'server.log'), 'utf8');
  return { init, early, late, confirmed: (log.match(/early answer confirmed by the server/g) ?? []).length, differs: log.includes('differs from the server') };
}

test("the answers sent before the SDK loads are the SDK's own, for every protocol version and kind of client", async () => {
  const variants: Array<[string, object, string]> = [
    ['2025-06-18', {}, '2025-06-18'],
    ['2024-11-05', {}, '2024-11-05'],
    ['1999-01-01', {}, LATEST_PROTOCOL_VERSION],
    [LATEST_PROTOCOL_VERSION, APPS_CLIENT_CAPABILITIES, LATEST_PROTOCOL_VERSION],
  ];
  const listed: number[] = [];
  for (const [asked, capabilities, negotiated] of variants) {
    const home = join(tempDir('rlmcp-front-'), 'rl_training');
    const a = await firstAnswers(DIST_ENTRY, home, asked, capabilities);
    assert.equal(a.init.result?.protocolVersion, negotiated, asked);
    assert.match(a.init.result!.instructions!, /^Reinforcement-learning training of language models on Tinker/);
    assert.deepEqual(a.early.result, a.late.result, `${asked}: the early tool list is the SDK's`);
    assert.equal(a.confirmed, 2, `${asked}: the server checked both early answers`);
    assert.equal(a.differs, false);
    listed.push(a.early.result!.tools!.length);
  }
  assert.ok(listed[3]! > listed[0]!, 'an Apps client is shown the app-only tools too');
});

/** A 2026-07-28 session: server/discover, then tools/list, each with the envelope; the SDK answers from the third request on. */
async function firstModernAnswers(home: string, capabilities: object) {
  const s = session(DIST_ENTRY, home);
  const _meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'front-door-test', version: '0' }, 'io.modelcontextprotocol/clientCapabilities': capabilities };
  const discover = await s.request(1, 'server/discover', { _meta });
  const early = await s.request(2, 'tools/list', { _meta });
  await s.request(3, 'resources/templates/list', { _meta });
  const late = await s.request(4, 'tools/list', { _meta });
  s.child.stdin.end();
  await once(s.child, 'exit');
  const log = readFileSync(join(home, 'server.log'), 'utf8');
  return { discover, early, late, confirmed: (log.match(/early answer confirmed by the server/g) ?? []).length, differs: log.includes('differs from the server') };
}

test("a 2026-07-28 opening: server/discover and tools/list answered before the SDK loads are the SDK's own, with and without MCP Apps", async () => {
  const listed: number[] = [];
  for (const capabilities of [{}, APPS_CLIENT_CAPABILITIES]) {
    const a = await firstModernAnswers(join(tempDir('rlmcp-front-'), 'rl_training'), capabilities);
    const discover = a.discover.result as { supportedVersions?: string[]; instructions?: string } | undefined;
    assert.deepEqual(discover?.supportedVersions, ['2026-07-28']);
    assert.match(discover!.instructions!, /^Reinforcement-learning training of language models on Tinker/);
    assert.deepEqual(a.early.result, a.late.result, "the early tool list is the SDK's");
    assert.equal((a.early.result as { resultType?: string }).resultType, 'complete');
    assert.equal(a.confirmed, 2, 'the server checked both early answers');
    assert.equal(a.differs, false);
    listed.push(a.early.result!.tools!.length);
  }
  assert.ok(listed[1]! > listed[0]!, 'an Apps client is shown the app-only tools too');
});

test('a stale recorded handshake is caught: the server logs that its own answer differs, with the fix', async () => {
  const root = copyOfBuiltPackage();
  const file = join(root, 'dist', 'handshake.json');
  const handshake = JSON.parse(readFileSync(file, 'utf8')) as { result: { instructions: string } };
  handshake.result.instructions = 'stale';
  writeFileSync(file, JSON.stringify(handshake));
  const home = join(root, 'rl_training');
  const a = await firstAnswers(join(root, 'dist', 'index.js'), home, '2025-06-18', {});
  assert.equal(a.init.result?.instructions, 'stale', 'the front door answered from the file');
  assert.equal(a.differs, true);
  assert.match(readFileSync(join(home, 'server.log'), 'utf8'), /rebuild \(npm run build\)/);
});
