/**
 * The stdio front door (src/server/frontDoor.ts) over in-memory streams: what it answers before the
 * SDK loads, what it leaves to the SDK, that the hand-over replays every byte read, and that the
 * SDK's answers to requests already answered are dropped and checked.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import type { InitializeResult } from '@modelcontextprotocol/client';
import { SERVER_AT_THE_LATEST_MS, StdioFrontDoor, type AnswerCheck, type EarlyAnswers } from '../../src/server/frontDoor.js';

const INIT_PARAMS = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } };
const line = (message: object): string => `${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`;
const initialize = (id: number | string, params: object = INIT_PARAMS): string => line({ id, method: 'initialize', params });

const ANSWERS: EarlyAnswers = {
  initialize: (version) => ({ protocolVersion: version, capabilities: { tools: {} }, serverInfo: { name: 's', version: '1' } }) as InitializeResult,
  tools: (capabilities) => [{ name: capabilities.extensions ? 'with_apps' : 'plain', inputSchema: { type: 'object' } }],
  modern: { versions: ['2026-07-28'], discover: { supportedVersions: ['2026-07-28'], capabilities: {}, resultType: 'complete' }, list: { resultType: 'complete', ttlMs: 0, cacheScope: 'private' } },
};
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const discover = (id: number, meta: object = ENVELOPE): string => line({ id, method: 'server/discover', params: { _meta: meta } });
const modernList = (id: number, meta: object = ENVELOPE, extra: object = {}): string => line({ id, method: 'tools/list', params: { _meta: meta, ...extra } });

function frontDoor(answers: EarlyAnswers | null = ANSWERS) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let written = '';
  stdout.on('data', (c: Buffer) => (written += c.toString()));
  const door = new StdioFrontDoor(stdin, stdout, answers ?? undefined);
  let wanted = false;
  void door.serverWanted.then(() => (wanted = true));
  const settle = () => new Promise((r) => setImmediate(r));
  return {
    door,
    stdin,
    answers: () => written.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { id: unknown; result?: { tools?: { name: string }[]; protocolVersion?: string } }),
    wanted: async () => (await settle(), await settle(), wanted),
    settle,
  };
}

test('initialize and tools/list are answered before the server; the list is what this client is shown; the server is asked for after the list', async () => {
  const f = frontDoor();
  f.stdin.write(initialize(1, { ...INIT_PARAMS, capabilities: { extensions: { x: {} } } }));
  f.stdin.write(line({ method: 'notifications/initialized' }));
  await f.settle();
  assert.equal(await f.wanted(), false, 'nothing asked for the server yet');
  f.stdin.write(line({ id: 'two', method: 'tools/list' }));
  await f.settle();
  assert.deepEqual(f.answers().map((a) => a.id), [1, 'two']);
  assert.equal(f.answers()[0]!.result!.protocolVersion, '2025-06-18');
  assert.deepEqual(f.answers()[1]!.result!.tools!.map((t) => t.name), ['with_apps'], 'the capabilities of the initialize it answered');
  assert.equal(await f.wanted(), true);
});

test('what the SDK must answer is left to it: a malformed line, an initialize it would refuse, a list before initialize, a reused id, any other request', async () => {
  // [case, lines, the ids answered here]
  const cases: Array<[string, string[], number[]]> = [
    ['not json', ['{"jsonrpc":"2.0","id":1,"method":"initialize"\n'], []],
    ['params missing clientInfo', [initialize(1, { protocolVersion: '2025-06-18', capabilities: {} })], []],
    ['protocolVersion not a string', [initialize(1, { ...INIT_PARAMS, protocolVersion: 7 })], []],
    ['a fractional id', [initialize(1.5)], []],
    ['a batch', [`[${initialize(1).trim()}]\n`], []],
    ['tools/list before initialize', [line({ id: 1, method: 'tools/list' })], []],
    ['a reused id', [initialize(1), line({ id: 1, method: 'tools/list' })], [1]],
    ['a second initialize', [initialize(1), initialize(2)], [1]],
    ['tools/list with a bad cursor', [initialize(1), line({ id: 2, method: 'tools/list', params: { cursor: 3 } })], [1]],
    ['another request', [initialize(1), line({ id: 2, method: 'resources/list' })], [1]],
    ['ping', [initialize(1), line({ id: 2, method: 'ping' })], [1]],
  ];
  for (const [name, lines, answered] of cases) {
    const f = frontDoor();
    for (const l of lines) f.stdin.write(l);
    assert.equal(await f.wanted(), true, `${name}: the server is asked for`);
    assert.deepEqual(f.answers().map((a) => a.id), answered, name);
  }
});

test('a 2026-07-28 opening: server/discover and tools/list (with the envelope) are answered; the list is what this request may see', async () => {
  const f = frontDoor();
  f.stdin.write(discover(1));
  await f.settle();
  assert.equal(await f.wanted(), false);
  f.stdin.write(modernList(2, { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': { extensions: { x: {} } } }, { cursor: 'c' }));
  await f.settle();
  const [d, l] = f.answers() as Array<{ id: number; result: Record<string, unknown> & { tools?: { name: string }[] } }>;
  assert.deepEqual(d!.result, ANSWERS.modern!.discover);
  assert.deepEqual(l!.result, { tools: [{ name: 'with_apps', inputSchema: { type: 'object' } }], ...ANSWERS.modern!.list }, "the capabilities on the list request's own envelope");
  assert.equal(await f.wanted(), true);
});

test('a 2026-07-28 request the front door does not recognise exactly is left to the SDK', async () => {
  const cases: Array<[string, string[], number[]]> = [
    ['an unsupported version', [discover(1, { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2027-01-01' })], []],
    ['no capabilities', [discover(1, { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' })], []],
    ['a log level (another reserved key)', [discover(1, { ...ENVELOPE, 'io.modelcontextprotocol/logLevel': 'info' })], []],
    ['a malformed clientInfo', [discover(1, { ...ENVELOPE, 'io.modelcontextprotocol/clientInfo': { name: 1 } })], []],
    ['a list without the envelope', [discover(1), line({ id: 2, method: 'tools/list' })], [1]],
    ['a list of another version', [discover(1), modernList(2, { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2025-11-25' })], [1]],
    ['a list with other params', [discover(1), modernList(2, ENVELOPE, { filter: 'x' })], [1]],
    ['initialize after discover', [discover(1), initialize(2)], [1]],
    ['discover after initialize', [initialize(1), discover(2)], [1]],
  ];
  for (const [name, lines, answered] of cases) {
    const f = frontDoor();
    for (const l of lines) f.stdin.write(l);
    assert.equal(await f.wanted(), true, `${name}: the server is asked for`);
    assert.deepEqual(f.answers().map((a) => a.id), answered, name);
  }
});

test('without recorded answers (the sources, a stale build) nothing is answered and the server is asked for at once', async () => {
  const f = frontDoor(null);
  f.stdin.write(initialize(1));
  assert.equal(await f.wanted(), true);
  assert.deepEqual(f.answers(), []);
});

test('a silent client still gets the server (it supervises runs) within SERVER_AT_THE_LATEST_MS', async () => {
  const f = frontDoor();
  assert.equal(await f.wanted(), false);
  await new Promise((r) => setTimeout(r, SERVER_AT_THE_LATEST_MS + 50));
  assert.equal(await f.wanted(), true);
});

test('the hand-over replays every byte read, in order, then carries stdin on; a line split in a character is read once', async () => {
  const f = frontDoor();
  const init = Buffer.from(initialize(1, { ...INIT_PARAMS, clientInfo: { name: 'é漢字', version: '1' } }));
  const cut = init.indexOf(Buffer.from('漢')) + 1;
  f.stdin.write(init.subarray(0, cut));
  f.stdin.write(init.subarray(cut));
  f.stdin.write(line({ method: 'notifications/initialized' }));
  f.stdin.write(line({ id: 2, method: 'tools/list' }));
  assert.equal(await f.wanted(), true);
  assert.deepEqual(f.answers().map((a) => a.id), [1, 2], 'the split line was answered once');
  const { input } = f.door.handOver(() => undefined);
  const replayed: Buffer[] = [];
  input.on('data', (c: Buffer) => replayed.push(c));
  f.stdin.write(line({ id: 3, method: 'resources/list' }));
  f.stdin.end();
  await once(input, 'end');
  assert.equal(Buffer.concat(replayed).toString(), `${init.toString()}${line({ method: 'notifications/initialized' })}${line({ id: 2, method: 'tools/list' })}${line({ id: 3, method: 'resources/list' })}`);
  assert.equal(f.answers().length, 2, 'nothing answered after the hand-over');
});

test("the SDK's answers to requests already answered are dropped, a different one reported; everything else goes out", async () => {
  const f = frontDoor();
  f.stdin.write(initialize(1));
  f.stdin.write(line({ id: 2, method: 'tools/list' }));
  await f.wanted();
  const checks: AnswerCheck[] = [];
  const { output } = f.door.handOver((c) => checks.push(c));
  const sent = f.answers();
  output.write(line({ result: sent[0]!.result!, id: 1 }));
  output.write(line({ result: { tools: [] }, id: 2 }));
  output.write(line({ method: 'notifications/message', params: { level: 'info', data: 'x' } }));
  output.write(line({ result: {}, id: 3 }));
  output.write(line({ result: {}, id: 1 }));
  await f.settle();
  assert.deepEqual(checks.map((c) => [c.id, c.same]), [[1, true], [2, false]]);
  assert.deepEqual(checks[1]!.sdk, { tools: [] });
  assert.deepEqual(
    f.answers().slice(2).map((a) => a.id),
    [undefined, 3, 1],
    'the notification, a new answer and a second answer to id 1 (the client reused it) go out',
  );
});

test('stdin closed before anything: the server is asked for, told the input ended, and its replay ends', async () => {
  const f = frontDoor();
  let ended = false;
  f.door.onInputEnd(() => (ended = true));
  f.stdin.end();
  assert.equal(await f.wanted(), true);
  assert.equal(ended, true);
  let late = false;
  f.door.onInputEnd(() => (late = true));
  assert.equal(late, true, 'a listener added after the end is called at once');
  const { input } = f.door.handOver(() => undefined);
  input.resume();
  await once(input, 'end');
});

function once(stream: NodeJS.EventEmitter, event: string): Promise<void> {
  return new Promise((resolve) => stream.once(event, () => resolve()));
}
