/**
 * An Atropos run's start-up probe against a real HTTP server (src/runtime/runs/atropos/startUpProbe.ts):
 * a trainer whose log says nothing of its registration is found registered through the API's
 * `GET /wandb_info`, asked at most once a second however often the stage probes; a starting API is
 * asked when its log grows, not at each probe.
 */
import assert from 'node:assert/strict';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { pino } from 'pino';
import { AtroposStartUpProbe } from '../src/runtime/runs/atropos/startUpProbe.js';
import type { RunRecord } from '../src/runtime/runs/seams/record.js';
import { tempDir } from './helpers/tmp.js';

/** A real HTTP server on a free port of 127.0.0.1, closed after the test; its port. */
async function serving(t: TestContext, handler: RequestListener): Promise<number> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  return (server.address() as AddressInfo).port;
}

/** A probe of a run whose API and trainer's inference server both listen on `port`. */
function probeOf(port: number, logs: Record<string, string>, processes: Record<string, unknown>): AtroposStartUpProbe {
  const record = { run_id: 'a1b2c3d4', host: '127.0.0.1', ports: { api: port, inference: port }, logs, processes } as unknown as RunRecord;
  return new AtroposStartUpProbe(() => record, pino({ level: 'silent' }));
}

const running = { state: 'running', pid: process.pid, started_at: new Date().toISOString() };

test("a trainer whose log is silent registers through the API's word, asked once a second", async (t) => {
  const asked: string[] = [];
  let project: string | null = null;
  const port = await serving(t, (req, res) => {
    asked.push(req.url ?? '');
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(req.url === '/wandb_info' ? { group: 'g', project } : { status: 'ok' }));
  });
  const log = join(tempDir(), 'trainer.log');
  writeFileSync(log, 'Loading the model...\n');
  const probe = probeOf(port, { trainer: log }, { api: running, trainer: running, env: { state: 'not_started' } });

  // The stage probes at each write to the trainer's log: ten probes in a row ask the API once.
  for (let i = 0; i < 10; i++) assert.equal(await probe.readiness('trainer'), 'waiting');
  assert.deepEqual(asked, ['/wandb_info']);

  project = 'p';
  const since = Date.now();
  let readiness = await probe.readiness('trainer');
  while (readiness === 'waiting' && Date.now() - since < 5_000) {
    await new Promise((r) => setTimeout(r, 20));
    readiness = await probe.readiness('trainer');
  }
  assert.equal(readiness, 'ready');
  assert.deepEqual(asked.filter((url) => url === '/wandb_info').length, 2, 'asked again once a second had passed, not at each probe');
  assert.ok(asked.includes('/health'), 'then its inference server');
});

test('a starting API is asked when its log grows, and every 250 ms while it is quiet, not at each probe', async (t) => {
  let asked = 0;
  let up = false;
  const port = await serving(t, (req, res) => {
    if (req.url === '/') asked++;
    res.statusCode = up ? 200 : 503;
    res.end('{}');
  });
  const log = join(tempDir(), 'api.log');
  writeFileSync(log, 'INFO:     Started server process [1]\n');
  const probe = probeOf(port, { api: log, trainer: log }, { api: running, trainer: { state: 'not_started' }, env: { state: 'not_started' } });

  assert.deepEqual(probe.wakeOn('api'), [log], 'a write to its log wakes the stage');
  for (let i = 0; i < 10; i++) assert.equal(await probe.readiness('api'), 'waiting');
  assert.equal(asked, 1, 'ten probes of a quiet log ask the API once');

  appendFileSync(log, 'INFO:     Uvicorn running on http://127.0.0.1 (Press CTRL+C to quit)\n');
  up = true;
  assert.equal(await probe.readiness('api'), 'ready', 'asked again once its log grew');
  assert.equal(asked, 2);

  up = false;
  await probe.readiness('api');
  assert.equal(asked, 2, 'a quiet log is not asked again at once');
  await new Promise((r) => setTimeout(r, 300));
  await probe.readiness('api');
  assert.equal(asked, 3, 'but after 250 ms');
});
