/**
 * An Atropos run's start-up probe against a real HTTP server (src/runtime/runs/atropos/startUpProbe.ts):
 * a trainer whose log says nothing of its registration is found registered through the API's
 * `GET /wandb_info`, asked at most once a second however often the stage probes.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { AtroposStartUpProbe } from '../src/runtime/runs/atropos/startUpProbe.js';
import type { RunRecord } from '../src/runtime/runs/seams/record.js';
import { tempDir } from './helpers/tmp.js';

test("a trainer whose log is silent registers through the API's word, asked once a second", async (t) => {
  const asked: string[] = [];
  let project: string | null = null;
  const server = createServer((req, res) => {
    asked.push(req.url ?? '');
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(req.url === '/wandb_info' ? { group: 'g', project } : { status: 'ok' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const port = (server.address() as AddressInfo).port;
  const log = join(tempDir(), 'trainer.log');
  writeFileSync(log, 'Loading the model...\n');
  const running = { state: 'running', pid: process.pid, started_at: new Date().toISOString() };
  // The API and the trainer's inference server share the port here.
  const record = { run_id: 'a1b2c3d4', host: '127.0.0.1', ports: { api: port, inference: port }, logs: { trainer: log }, processes: { api: running, trainer: running, env: { state: 'not_started' } } } as unknown as RunRecord;
  const probe = new AtroposStartUpProbe(() => record, pino({ level: 'silent' }));

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
