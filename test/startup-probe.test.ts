/**
 * An Atropos run's start-up probe against a real HTTP server (src/runtime/runs/atropos/startUpProbe.ts):
 * a trainer whose log says nothing of its registration is found registered through the API's
 * `GET /wandb_info`, asked at most once a second however often the stage probes; a starting API,
 * a trainer's inference server and a waiting API are asked when the log that shows their change
 * grows (their own access lines aside), not at each probe.
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

test("the environment's data and the trainer's inference server are asked about when their logs grow, not for the probe's own access lines", async (t) => {
  const dir = tempDir();
  const apiLog = join(dir, 'api.log');
  const trainerLog = join(dir, 'trainer.log');
  writeFileSync(apiLog, 'INFO:     Uvicorn running on http://127.0.0.1 (Press CTRL+C to quit)\n');
  writeFileSync(trainerLog, 'Registered as trainer with the Atropos API\n');
  const asked: string[] = [];
  let queue = 0;
  let inferenceUp = false;
  /** Written to the API's log while a /status question is out, as a request of the environment's would be. */
  let meanwhile = '';
  // The API writes an access line per request before its answer, as uvicorn does; the trainer's
  // inference server none (python/run_trainer.py turns its access log off).
  const port = await serving(t, (req, res) => {
    asked.push(req.url ?? '');
    if (req.url === '/status') appendFileSync(apiLog, `INFO:     127.0.0.1:1 - "GET /status HTTP/1.1" 200 OK\n${meanwhile}`);
    meanwhile = '';
    res.statusCode = req.url === '/health' && !inferenceUp ? 503 : 200;
    res.end(JSON.stringify({ queue_size: queue, current_step: 0 }));
  });
  const probe = probeOf(port, { api: apiLog, trainer: trainerLog }, { api: running, trainer: running, env: running });

  for (let i = 0; i < 10; i++) assert.equal(await probe.readiness('trainer'), 'waiting');
  assert.deepEqual(asked, ['/health'], 'ten probes while the trainer log is quiet ask its server once');
  appendFileSync(trainerLog, 'INFO:     Uvicorn running on http://0.0.0.0:8001 (Press CTRL+C to quit)\n');
  inferenceUp = true;
  assert.equal(await probe.readiness('trainer'), 'ready', 'asked again once its log grew');

  asked.length = 0;
  assert.deepEqual(probe.wakeOn('env'), [apiLog], "the API's log wakes the environment's stage");
  for (let i = 0; i < 10; i++) assert.equal(await probe.readiness('env'), 'waiting');
  assert.deepEqual(asked, ['/status'], 'ten probes ask the API once: the access line of its own question is no news');
  meanwhile = 'INFO:     127.0.0.1:2 - "POST /register-env HTTP/1.1" 200 OK\n';
  appendFileSync(apiLog, 'INFO:     127.0.0.1:2 - "GET /batch HTTP/1.1" 200 OK\n');
  assert.equal(await probe.readiness('env'), 'waiting');
  assert.equal(await probe.readiness('env'), 'waiting');
  assert.deepEqual(asked, ['/status', '/status', '/status'], 'what another client left in the log while a question was out is news');
  appendFileSync(apiLog, 'INFO:     127.0.0.1:2 - "POST /scored_data HTTP/1.1" 200 OK\n');
  queue = 1;
  assert.equal(await probe.readiness('env'), 'ready', 'the data the environment posted is seen at once');
});
