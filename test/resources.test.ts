/**
 * MCP resources through the SDK client: templates, bounded listing, completion,
 * reading each kind, tails and paging of multi-MiB logs, subscriptions, and refusal of every
 * traversal attempt. Run directories are written here as any server process would write them.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport, ProtocolError, type ReadResourceResult } from '@modelcontextprotocol/client';
import { McpServer, PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import { pino } from 'pino';
import { registerResources } from '../src/resources/index.js';
import { DEFAULT_WINDOW_BYTES } from '../src/resources/window.js';
import { ChangeWatcher } from '../src/core/files/watch.js';
import { SessionTap } from '../src/server/sessionTap.js';
import { connectInMemory, connectStdio } from './helpers/client.js';
import { tempDir } from './helpers/tmp.js';

const SECRET = 'tml-resources-secret-7f3a9c';

function writeRun(home: string, runId: string, opts: { status?: string; createdAt?: string; log?: string } = {}): string {
  const dir = join(home, 'runs', runId);
  mkdirSync(dir, { recursive: true });
  const logs = { api: join(dir, 'api.log'), trainer: join(dir, 'trainer.log'), env: join(dir, 'env.log') };
  const record = {
    run_id: runId,
    environment: 'resource_probe',
    environment_file: '/somewhere/resource_probe.py',
    status: opts.status ?? 'running',
    phase: 'training',
    created_at: opts.createdAt ?? '2026-11-02T10:00:00.000Z',
    started_at: opts.createdAt ?? '2026-11-02T10:00:00.000Z',
    wandb_project: 'atropos-tinker',
    wandb_run_name: `resource_probe-${runId}`,
    wandb_group: runId,
    wandb_name: 'resource_probe-20261102-100000',
    use_wandb: false,
    config_path: join(dir, 'config.yaml'),
    logs,
    processes: Object.fromEntries(Object.keys(logs).map((p) => [p, { state: 'running', pid: null, exit_code: null, signal: null }])),
  };
  writeFileSync(join(dir, 'run.json'), JSON.stringify(record, null, 2));
  writeFileSync(join(dir, 'config.yaml'), `env:\n  group_size: 16\n  wandb_name: resource_probe\ntinker:\n  wandb_group: ${runId}\n`);
  writeFileSync(logs.api, 'INFO: Uvicorn running on http://127.0.0.1:8000\n');
  writeFileSync(logs.trainer, opts.log ?? 'Registered as trainer\nStep 1/10\n');
  writeFileSync(logs.env, '');
  return dir;
}

/** `count` bytes of numbered log lines; the line numbers make misplaced pages visible. */
function bigLog(count: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < count; i++) {
    const line = `Step ${i}: reward/mean=0.${i % 1000} train/loss=${(i * 7) % 113} ${'x'.repeat(40)}\n`;
    lines.push(line);
    size += line.length;
  }
  return lines.join('');
}

function onlyText(result: ReadResourceResult): { text: string; mimeType?: string; meta?: Record<string, unknown> } {
  assert.equal(result.contents.length, 1);
  const content = result.contents[0]!;
  assert.ok('text' in content && typeof content.text === 'string', 'expected a text content');
  return { text: content.text, mimeType: content.mimeType, meta: content._meta };
}

async function waitFor(condition: () => boolean, what: string, deadlineMs = 15_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function refusal(promise: Promise<unknown>): Promise<ProtocolError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof ProtocolError, `expected an MCP error, got ${String(err)}`);
    return err;
  }
  return assert.fail('expected the request to be refused');
}

async function setup() {
  const envDir = tempDir('rlmcp-envs-');
  writeFileSync(
    join(envDir, 'resource_probe.py'),
    [
      'from atroposlib.envs.base import BaseEnv',
      '',
      'class ResourceProbeEnv(BaseEnv):',
      '    """Probe environment for the resources test."""',
      '    name = "resource_probe"',
      '',
      '    @classmethod',
      '    def config_init(cls):',
      '        return None, []',
      '',
    ].join('\n'),
  );
  const harness = await connectInMemory({ RL_ENVIRONMENTS_DIRS: envDir, TINKER_API_KEY: SECRET });
  return { ...harness, home: harness.runtime.settings.home, envDir };
}

describe('resources', async () => {
  const { client, home, runtime, envDir } = await setup();
  const runId = 'a1b2c3d4';
  writeRun(home, runId, { log: `Registered as trainer\nusing key ${SECRET}\nStep 1/10\n` });

  it('declares subscriptions and shows every template', async () => {
    assert.deepEqual(client.getServerCapabilities()?.resources, { subscribe: true, listChanged: true });
    const { resourceTemplates } = await client.listResourceTemplates();
    const byName = Object.fromEntries(resourceTemplates.map((t) => [t.name, t]));
    assert.equal(byName.run?.uriTemplate, 'rl://runs/{run_id}');
    assert.equal(byName.run?.mimeType, 'application/json');
    assert.equal(byName['run-config']?.uriTemplate, 'rl://runs/{run_id}/config');
    assert.equal(byName['run-log']?.uriTemplate, 'rl://runs/{run_id}/logs/{process}');
    assert.equal(byName['run-log-page']?.uriTemplate, 'rl://runs/{run_id}/logs/{process}{?offset,length}');
    assert.equal(byName['environment-source']?.uriTemplate, 'rl://environments/{name}/source');
    assert.equal(byName['environment-source']?.mimeType, 'text/x-python');
    assert.equal(byName['inference-test-file']?.uriTemplate, 'rl://inference-tests/{test_id}/{+file}');
  });

  it('reads run.json, the config and a log (redacted) with their MIME types', async () => {
    const run = onlyText(await client.readResource({ uri: `rl://runs/${runId}` }));
    assert.equal(run.mimeType, 'application/json');
    assert.equal(JSON.parse(run.text).run_id, runId);

    const config = onlyText(await client.readResource({ uri: `rl://runs/${runId}/config` }));
    assert.equal(config.mimeType, 'application/yaml');
    assert.match(config.text, new RegExp(`wandb_group: ${runId}`));

    const log = onlyText(await client.readResource({ uri: `rl://runs/${runId}/logs/trainer` }));
    assert.equal(log.mimeType, 'text/plain');
    assert.equal(log.text, 'Registered as trainer\nusing key [REDACTED]\nStep 1/10\n');
    assert.ok(!log.text.includes(SECRET));
  });

  it('reports a damaged run.json as an unknown run, and a missing run with what to do', async () => {
    const damaged = 'dddddddd';
    writeRun(home, damaged);
    writeFileSync(join(home, 'runs', damaged, 'run.json'), '{"run_id": "dddddddd", "status": "runn');
    const record = JSON.parse(onlyText(await client.readResource({ uri: `rl://runs/${damaged}` })).text);
    assert.equal(record.status, 'unknown');
    assert.match(record.error, /not valid JSON/);

    const missing = await refusal(client.readResource({ uri: 'rl://runs/0000beef' }));
    // Resource not found: -32602 with the URI (2026-07-28; the SDK sends it to 2025 clients too).
    assert.equal(missing.code, -32602);
    assert.equal((missing.data as { uri?: string }).uri, 'rl://runs/0000beef');
    assert.match(missing.message, /Run '0000beef' not found.*rl_list_runs/);
    rmSync(join(home, 'runs', damaged), { recursive: true });
  });

  it('reads a discovered environment source and an inference test file', async () => {
    const source = onlyText(await client.readResource({ uri: 'rl://environments/resource_probe/source' }));
    assert.equal(source.mimeType, 'text/x-python');
    assert.match(source.text, /class ResourceProbeEnv\(BaseEnv\)/);

    const unknown = await refusal(client.readResource({ uri: 'rl://environments/no_such_env/source' }));
    assert.match(unknown.message, /no_such_env/);

    const testDir = join(home, 'inference_tests', 'feedf00d');
    mkdirSync(testDir, { recursive: true });
    writeFileSync(join(testDir, 'qwen_qwen3-8b.jsonl'), '{"scores": [1, 0]}\n{"scores": [0, 0]}\n');
    const jsonl = onlyText(await client.readResource({ uri: 'rl://inference-tests/feedf00d/qwen_qwen3-8b.jsonl' }));
    assert.equal(jsonl.mimeType, 'application/jsonl');
    assert.equal(jsonl.text, '{"scores": [1, 0]}\n{"scores": [0, 0]}\n');
  });

  it('lists a bounded set of recent runs plus the environments', async () => {
    for (let i = 0; i < 55; i++) {
      writeRun(home, `e0${i.toString(16).padStart(6, '0')}`, { createdAt: new Date(Date.UTC(2026, 10, 1, 0, i)).toISOString(), status: 'completed' });
    }
    const { resources } = await client.listResources();
    const runJsons = resources.filter((r) => /^rl:\/\/runs\/[0-9a-f]{8}$/.test(r.uri)).map((r) => r.uri);
    assert.equal(runJsons.length, 50, 'only the 50 most recent runs are listed');
    // Newest first: a1b2c3d4 (Nov 2) before e0000036 (the last of the Nov 1 series).
    assert.deepEqual(runJsons.slice(0, 2), [`rl://runs/${runId}`, 'rl://runs/e0000036']);
    assert.ok(!runJsons.includes('rl://runs/e0000000'), 'the oldest runs are left out');
    const ofRun = resources.filter((r) => r.uri.startsWith(`rl://runs/${runId}`));
    assert.deepEqual(
      ofRun.map((r) => [r.uri, r.mimeType]),
      [
        [`rl://runs/${runId}`, 'application/json'],
        [`rl://runs/${runId}/config`, 'application/yaml'],
        [`rl://runs/${runId}/logs/api`, 'text/plain'],
        [`rl://runs/${runId}/logs/trainer`, 'text/plain'],
        [`rl://runs/${runId}/logs/env`, 'text/plain'],
      ],
    );
    assert.ok(resources.some((r) => r.uri === 'rl://environments/resource_probe/source'));
    assert.ok(resources.some((r) => r.uri === 'rl://inference-tests/feedf00d/qwen_qwen3-8b.jsonl'));
    assert.ok(resources.length <= 50 * 5 + 100 + 10 * 20);
  });

  it('completes run ids, processes, environment names and test ids', async () => {
    const complete = async (uri: string, name: string, value: string) =>
      (await client.complete({ ref: { type: 'ref/resource', uri }, argument: { name, value } })).completion.values;
    assert.deepEqual(await complete('rl://runs/{run_id}', 'run_id', 'a1b'), [runId]);
    assert.deepEqual(await complete('rl://runs/{run_id}/logs/{process}', 'run_id', 'a1'), [runId]);
    assert.equal((await complete('rl://runs/{run_id}/config', 'run_id', 'e0')).length, 55);
    assert.deepEqual(await complete('rl://runs/{run_id}/logs/{process}', 'process', 'tr'), ['trainer']);
    assert.deepEqual(await complete('rl://environments/{name}/source', 'name', 'resource_p'), ['resource_probe']);
    assert.deepEqual(await complete('rl://inference-tests/{test_id}/{+file}', 'test_id', 'fee'), ['feedf00d']);
  });

  it('serves the tail of a multi-MiB log with a note, and pages reach the start', async () => {
    const bigRun = 'b16b16b1';
    const content = bigLog(5 * 1024 * 1024 + 12345);
    writeRun(home, bigRun, { log: content });
    const uri = `rl://runs/${bigRun}/logs/trainer`;

    const tail = onlyText(await client.readResource({ uri }));
    const [note, ...rest] = tail.text.split('\n');
    const body = rest.join('\n');
    assert.match(note!, /^\[\.\.\. \d+ bytes before this point not shown/);
    assert.ok(note!.includes(`${uri}?offset=0&length=${DEFAULT_WINDOW_BYTES}`), note);
    assert.ok(Buffer.byteLength(body) <= DEFAULT_WINDOW_BYTES);
    assert.ok(content.endsWith(body), 'the tail is the end of the file');
    assert.ok(body.startsWith('Step '), 'the tail starts at a line start');
    assert.equal(tail.meta?.size, Buffer.byteLength(content));

    // Follow "next page" links from the start until the end: the pages put the file back together.
    let next: string | undefined = `${uri}?offset=0&length=1048576`;
    const pages: string[] = [];
    while (next) {
      const page = onlyText(await client.readResource({ uri: next }));
      const newline = page.text.indexOf('\n');
      const header = page.text.slice(0, newline);
      assert.match(header, /^\[bytes \d+-\d+ of \d+;/);
      pages.push(page.text.slice(newline + 1));
      next = /next page: (\S+?)\]?$/.exec(header)?.[1]?.replace(/[;\]]$/, '');
      assert.ok(pages.length < 20, 'paging terminates');
    }
    assert.ok(pages[0]!.startsWith('Step 0: '), 'the first page is the start of the file');
    assert.equal(pages.join(''), content);

    const bad = await refusal(client.readResource({ uri: `${uri}?offset=-1&length=10` }));
    assert.equal(bad.code, -32602);
    assert.match(bad.message, /Bad page/);
    const typo = await refusal(client.readResource({ uri: `${uri}?ofset=0` }));
    assert.match(typo.message, /Bad page/);
  });

  it('notifies a subscriber when a log grows or the status changes, and stops after unsubscribe', async () => {
    const live = 'c0ffee00';
    const dir = writeRun(home, live);
    const updates: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', (n) => {
      updates.push(n.params.uri);
    });
    const logUri = `rl://runs/${live}/logs/trainer`;
    await client.subscribeResource({ uri: logUri });
    await client.subscribeResource({ uri: `rl://runs/${live}` });

    appendFileSync(join(dir, 'trainer.log'), 'Step 2/10\n');
    await waitFor(() => updates.includes(logUri), 'the log update');

    const record = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8'));
    writeFileSync(join(dir, 'run.json.tmp'), JSON.stringify({ ...record, status: 'completed', phase: 'done' }));
    // Atomic replace, as the run registry writes it: the watch must survive the inode change.
    renameSync(join(dir, 'run.json.tmp'), join(dir, 'run.json'));
    await waitFor(() => updates.includes(`rl://runs/${live}`), 'the status update');

    // A burst of writes is one change to a throttled watcher, not one notification per write.
    const beforeBurst = updates.filter((u) => u === logUri).length;
    for (let i = 0; i < 200; i++) appendFileSync(join(dir, 'trainer.log'), `burst ${i}\n`);
    await waitFor(() => updates.filter((u) => u === logUri).length > beforeBurst, 'the burst update');
    await new Promise((r) => setTimeout(r, 2500));
    assert.ok(updates.filter((u) => u === logUri).length - beforeBurst <= 2, `200 writes gave ${updates.filter((u) => u === logUri).length - beforeBurst} notifications`);

    await client.unsubscribeResource({ uri: logUri });
    const seen = updates.filter((u) => u === logUri).length;
    for (let i = 0; i < 5; i++) {
      appendFileSync(join(dir, 'trainer.log'), `Step ${3 + i}/10\n`);
      await new Promise((r) => setTimeout(r, 300));
    }
    // A bounded wait longer than the throttle: any notification would have arrived by now.
    await new Promise((r) => setTimeout(r, 2500));
    assert.equal(updates.filter((u) => u === logUri).length, seen, 'no update after unsubscribe');
    await client.unsubscribeResource({ uri: `rl://runs/${live}` });
  });

  it('sends list_changed when a run appears', async () => {
    let changed = 0;
    client.setNotificationHandler('notifications/resources/list_changed', () => {
      changed++;
    });
    await client.listResources();
    writeRun(home, 'f1f2f3f4');
    await waitFor(() => changed > 0, 'list_changed');
  });

  it('refuses every traversal attempt and keeps answering', async () => {
    const outside = join(tempDir('rlmcp-outside-'), 'secret.log');
    writeFileSync(outside, 'outside secret\n');
    const linked = 'decafbad';
    const linkedDir = writeRun(home, linked);
    rmSync(join(linkedDir, 'env.log'));
    symlinkSync(outside, join(linkedDir, 'env.log'));
    symlinkSync(outside, join(home, 'inference_tests', 'feedf00d', 'escape.log'));
    symlinkSync(join(outside, '..'), join(home, 'runs', 'deadbeef'));

    const attempts: [string, RegExp][] = [
      [`rl://runs/${runId}/../../../etc/passwd`, /not found/],
      [`rl://runs/${runId}/%2e%2e/%2E%2E/etc/passwd`, /not found/],
      [`rl://runs/..%2f..%2fetc/config`, /not a run id/],
      ['rl://runs/A1B2C3D4', /not a run id/],
      [`rl://runs/${runId}/logs/..%2fconfig`, /Unknown process/],
      [`rl://runs/${runId}/logs/trainer%00`, /Unknown process/],
      [`rl://runs/${linked}/logs/env`, /symlink leading outside/],
      ['rl://runs/deadbeef/config', /symlink leading outside/],
      ['rl://inference-tests/feedf00d/..%2f..%2fruns%2fa1b2c3d4%2ftrainer.log', /encoded path separator/],
      ['rl://inference-tests/feedf00d/%2Fetc%2Fpasswd.log', /encoded path separator/],
      ['rl://inference-tests/feedf00d//etc/passwd.log', /absolute paths are not served/],
      ['rl://inference-tests/feedf00d/a//b.log', /empty path segment/],
      ['rl://inference-tests/feedf00d/x%00.log', /NUL byte/],
      ['rl://inference-tests/feedf00d/escape.log', /symlink leading outside/],
      ['rl://inference-tests/..%2fruns/x.log', /encoded path separator/],
      ['rl://inference-tests/0000/x.log', /expected 8 lowercase hex/],
      ['rl://inference-tests/feedf00d/key.yaml', /only .* files of a test are served/],
      ['rl://environments/..%2f..%2fetc%2fpasswd/source', /encoded path separator/],
      ['file:///etc/passwd', /not found/],
    ];
    for (const [uri, reason] of attempts) {
      const err = await refusal(client.readResource({ uri }));
      assert.match(err.message, reason, uri);
      assert.ok(!err.message.includes('outside secret'));
      // The next request is answered.
      assert.equal(JSON.parse(onlyText(await client.readResource({ uri: `rl://runs/${runId}` })).text).run_id, runId);
    }
    const subscribe = await refusal(client.subscribeResource({ uri: 'rl://nothing/here' }));
    assert.match(subscribe.message, /No resource matches/);
    const escaping = await refusal(client.subscribeResource({ uri: `rl://runs/${linked}/logs/env` }));
    assert.match(escaping.message, /symlink leading outside/);
  });

  it('a page whose edge falls inside a secret shows no part of it', async () => {
    const cut = 'c0ffee00';
    // One line longer than the pages asked for, so no page edge can move to a line end.
    const line = `${'x'.repeat(100)}${SECRET}${'y'.repeat(100)}`;
    writeRun(home, cut, { createdAt: '2020-01-01T00:00:00.000Z', log: `${line}\n` });
    const at = line.indexOf(SECRET);
    const page = async (offset: number, length: number) =>
      onlyText(await client.readResource({ uri: `rl://runs/${cut}/logs/trainer?offset=${offset}&length=${length}` })).text;
    const pieces = [await page(at + 1, 300), await page(0, at + 5), await page(at + 3, 10)];
    for (const text of pieces) {
      for (let i = 0; i + 4 <= SECRET.length; i++) assert.ok(!text.includes(SECRET.slice(i, i + 4)), `${JSON.stringify(text)} shows part of the secret`);
    }
    assert.match(pieces[0]!, /\[REDACTED\]y{100}\n$/);
    assert.match(pieces[1]!, /^\[bytes 0-105 of \d+;.*\]\nx{100}\[REDACTED\]$/);
    assert.equal(onlyText(await client.readResource({ uri: `rl://runs/${cut}/logs/trainer` })).text, `${'x'.repeat(100)}[REDACTED]${'y'.repeat(100)}\n`);
  });

  it('a config or environment source cut where a secret is shows no part of it', async () => {
    // Both are shown by their first MiB: the secret straddles that edge.
    const MIB = 1024 * 1024;
    const edgeRun = 'c0ffee01';
    const dir = writeRun(home, edgeRun, { createdAt: '2020-01-02T00:00:00.000Z' });
    writeFileSync(join(dir, 'config.yaml'), `# ${'x'.repeat(MIB - 12)}${SECRET}\n`);
    const envFile = join(envDir, 'resource_probe.py');
    const original = readFileSync(envFile, 'utf8');
    writeFileSync(envFile, `${original}# ${'x'.repeat(MIB - original.length - 12)}${SECRET}\n`);
    const texts = [
      onlyText(await client.readResource({ uri: `rl://runs/${edgeRun}/config` })).text,
      onlyText(await client.readResource({ uri: 'rl://environments/resource_probe/source' })).text,
    ];
    for (const text of texts) {
      assert.match(text, /cut: the file has/);
      // From the filler to the end: the source's own text has words the secret has too ("resource").
      const edge = text.slice(text.lastIndexOf('xxxx'));
      for (let i = 0; i + 4 <= SECRET.length; i++) assert.ok(!edge.includes(SECRET.slice(i, i + 4)), `${JSON.stringify(edge)} shows part of the secret`);
    }
    writeFileSync(envFile, original);
  });

  /** A second server with only the resources, so a test can see its watches. */
  async function resourcesOnly() {
    const server = new McpServer({ name: 'resources-only', version: '0.0.0' }, { capabilities: { resources: { subscribe: true, listChanged: true } } });
    const watches = registerResources(server, runtime);
    const other = new Client({ name: 'test-client', version: '0.0.0' });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    await Promise.all([other.connect(clientTransport), server.connect(serverTransport)]);
    return { watches, other };
  }

  it('stops every watch when the connection closes', async () => {
    const { watches, other } = await resourcesOnly();
    await other.subscribeResource({ uri: `rl://runs/${runId}/logs/trainer` });
    await other.subscribeResource({ uri: `rl://runs/${runId}` });
    await other.listResources();
    assert.equal(watches.subscriptions, 2);
    assert.equal(watches.watchedDirectories, 2, 'one watch per directory: the run directory and the runs root');
    await other.close();
    assert.equal(watches.subscriptions, 0);
    assert.equal(watches.watchedDirectories, 0);
  });

  it('an unsubscribe that arrives while its subscribe is still being checked leaves no watch', async () => {
    const { watches, other } = await resourcesOnly();
    const uri = `rl://runs/${runId}/logs/trainer`;
    await Promise.all([other.subscribeResource({ uri }), other.unsubscribeResource({ uri })]);
    assert.equal(watches.subscriptions, 0);
    assert.equal(watches.watchedDirectories, 0);
    await other.subscribeResource({ uri });
    assert.equal(watches.subscriptions, 1, 'a later subscribe still works');
    await other.close();
  });
});

describe('change watcher without fs.watch', () => {
  it('reports changes by polling, throttled', async () => {
    const dir = tempDir('rlmcp-watch-');
    const file = join(dir, 'trainer.log');
    writeFileSync(file, '');
    const watcher = new ChangeWatcher(pino({ level: 'silent' }), { useFsWatch: false, throttleMs: 200 });
    let changes = 0;
    const stop = watcher.watch({ dir, file: 'trainer.log', signature: async () => String(readFileSync(file).length), onChange: () => changes++ });
    await new Promise((r) => setTimeout(r, 300));
    appendFileSync(file, 'Step 1\n');
    await waitFor(() => changes === 1, 'the polled change');
    stop();
    assert.equal(watcher.watchedDirectories, 0);
    appendFileSync(file, 'Step 2\n');
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(changes, 1, 'no change reported after stop');
    watcher.close();
  });

  it('a change made the moment a settled watch is answered is reported (a subscriber appends right after its answer)', async () => {
    const dir = tempDir('rlmcp-watch-');
    const file = join(dir, 'trainer.log');
    writeFileSync(file, '');
    const watcher = new ChangeWatcher(pino({ level: 'silent' }), { useFsWatch: false, throttleMs: 100 });
    let changes = 0;
    // The signature takes a while, as a stat does on a loaded machine: a baseline taken after the append would hide it.
    const signature = async (): Promise<string> => {
      await new Promise((r) => setTimeout(r, 50));
      return String(readFileSync(file).length);
    };
    const stop = await watcher.watchSettled({ dir, file: 'trainer.log', signature, onChange: () => changes++ });
    appendFileSync(file, 'Step 1\n');
    await waitFor(() => changes === 1, 'the change made right after the answer');
    stop();
    watcher.close();
  });
});

describe('2026-07-28 subscriptions/listen (answered by the SDK under src/server/sessionTap.ts)', () => {
  const listen = (id: number, uri: string) => ({ jsonrpc: '2.0' as const, id, method: 'subscriptions/listen', params: { notifications: { resourceSubscriptions: [uri] }, _meta: { [PROTOCOL_VERSION_META_KEY]: '2026-07-28' } } });

  it('a listen reaches the SDK, which acknowledges it at once, only when its watch has its baseline; later messages wait behind it, in order', async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const tap = new SessionTap(serverSide, pino({ level: 'silent' }));
    let baselineTaken!: () => void;
    const subscribing: string[] = [];
    await tap.follow({
      subscribe: (uri) => {
        subscribing.push(uri);
        return new Promise<void>((resolve) => (baselineTaken = resolve));
      },
      unsubscribe: () => undefined,
    });
    const reached: string[] = [];
    tap.onmessage = (message) => void reached.push((message as { method: string }).method);
    await tap.start();
    await clientSide.start();
    const uri = 'rl://runs/c0ffee00/logs/trainer';
    await clientSide.send(listen(7, uri));
    await clientSide.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } });
    // Every message already sent has been handed on by now unless something holds it.
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(subscribing, [uri], 'the watch is being set up');
    assert.deepEqual(reached, [], 'the SDK has not seen the listen while the baseline is taken');
    baselineTaken();
    await waitFor(() => reached.length === 2, 'both messages handed on');
    assert.deepEqual(reached, ['subscriptions/listen', 'notifications/cancelled']);
    await tap.close();
  });

  it('the built server over stdio: a 2026-07-28 client that appends to the log the moment its listen is acknowledged is notified', async () => {
    const home = tempDir('rlmcp-listen-home-');
    const dir = writeRun(home, 'c0ffee00');
    const h = await connectStdio({ RL_HOME: home }, { protocol: '2026-07-28' });
    const updates: string[] = [];
    h.client.setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params.uri));
    const uri = 'rl://runs/c0ffee00/logs/trainer';
    // One append, as the acknowledgement comes off the pipe, before the SDK client has parsed it (the
    // transport's child process is not public API: a test reaching in, to be as quick as a client can be).
    const stdout = (h.transport as unknown as { _process: { stdout: NodeJS.ReadableStream } })._process.stdout;
    let appended = false;
    stdout.prependListener('data', (chunk: Buffer) => {
      if (appended || !chunk.toString().includes('notifications/subscriptions/acknowledged')) return;
      appended = true;
      appendFileSync(join(dir, 'trainer.log'), 'Step 2/10\n');
    });
    await h.client.listen({ resourceSubscriptions: [uri] });
    await waitFor(() => updates.includes(uri), 'the update of the one append', 60_000);
    await h.close();
  });
});
