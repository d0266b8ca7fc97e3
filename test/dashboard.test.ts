/**
 * The dashboard (MCP Apps) through the SDK client, without a browser: the `_meta.ui` links in
 * tools/list, the ui:// resource and its MIME type, the app-only snapshot tool listed only to
 * clients that render Apps, answers unchanged for clients that do not, and the snapshot itself
 * (W&B curves, the trainer-log fallback, the status rate limit left alone). The view drawn in a
 * browser is test/dashboard-browser.test.ts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { DASHBOARD_URI } from '../src/core/resourceUris.js';
import { WANDB_OFF } from '../src/runtime/wandb/reader.js';
import { createServer } from '../src/server/server.js';
import type { RunRecord } from '../src/runtime/runs/seams/record.js';
import { ENTITY, KEY as WANDB_KEY } from './fakes/wandbFixtures.js';
import { FakeWandb } from './fakes/wandbServer.js';
import { APPS_CLIENT_CAPABILITIES, callTool } from './helpers/client.js';
import { record, type RunServer, runServer, startRun, waitForRun } from './helpers/runs.js';

const LINKED = ['rl_check_status', 'rl_get_results', 'rl_compare_runs'];
const SNAPSHOT = 'rl_dashboard_snapshot';
const MIME = 'text/html;profile=mcp-app';

/** A second client on the same runtime, declaring nothing: a client without Apps. */
async function plainClient(h: RunServer): Promise<Client> {
  const { server } = createServer(h.runtime);
  const client = new Client({ name: 'plain-client', version: '0.0.0' });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([client.connect(a), server.connect(b)]);
  return client;
}

async function completedRun(h: RunServer): Promise<RunRecord> {
  const runId = await startRun(h);
  // The outcome is written first, then what still runs is stopped: wait for both.
  return waitForRun(h, runId, 'completed, its processes gone', (r) => r.status === 'completed' && Object.values(r.processes).every((p) => p.state !== 'running'));
}

test('tools/list links the run tools to the ui:// view; the snapshot tool is app-only and listed only to Apps clients; resources/read serves the view', async (t) => {
  const h = await runServer(t, { capabilities: APPS_CLIENT_CAPABILITIES, select: false });
  const { tools } = await h.client.listTools();
  for (const name of LINKED) {
    const tool = tools.find((x) => x.name === name)!;
    assert.deepEqual(tool._meta?.ui, { resourceUri: DASHBOARD_URI }, `${name} _meta.ui`);
    assert.equal(tool._meta?.['ui/resourceUri'], DASHBOARD_URI, `${name} keeps the older flat key too`);
  }
  const snapshot = tools.find((x) => x.name === SNAPSHOT);
  assert.deepEqual(snapshot?._meta?.ui, { resourceUri: DASHBOARD_URI, visibility: ['app'] });
  assert.equal(tools.filter((x) => x._meta?.ui !== undefined).length, LINKED.length + 1, 'no other tool is linked');

  const plain = await plainClient(h);
  t.after(() => plain.close());
  const plainTools = (await plain.listTools()).tools.map((x) => x.name);
  assert.ok(!plainTools.includes(SNAPSHOT), 'a client without Apps is not shown the app-only tool');
  assert.deepEqual(plainTools, tools.map((x) => x.name).filter((n) => n !== SNAPSHOT));
  const refused = await plain.callTool({ name: SNAPSHOT, arguments: { run_ids: ['abcd1234'] } }).catch((err: Error) => ({ isError: true, content: [{ type: 'text', text: err.message }] }));
  assert.equal(refused.isError, true, 'nor can it call it');

  const { contents } = await h.client.readResource({ uri: DASHBOARD_URI });
  assert.equal(contents.length, 1);
  const [view] = contents;
  assert.equal(view!.mimeType, MIME);
  assert.equal(view!.uri, DASHBOARD_URI);
  const html = (view as { text: string }).text;
  assert.match(html, /^<!doctype html>/i);
  assert.ok(Buffer.byteLength(html) < 150 * 1024, `the view is ${Buffer.byteLength(html)} bytes`);
  assert.doesNotMatch(html, /<script[^>]+src=|<link[^>]+href=|@import|https?:\/\/(?!www\.w3\.org\/2000\/svg)/i, 'nothing is fetched from another origin');
  const listed = (await h.client.listResources()).resources.find((r) => r.uri === DASHBOARD_URI);
  assert.equal(listed?.mimeType, MIME);
});

test('the snapshot draws W&B curves, per run, without using the status window', async (t) => {
  const wandb = await FakeWandb.start({ apiKey: WANDB_KEY });
  t.after(() => wandb.close());
  const h = await runServer(t, {
    capabilities: APPS_CLIENT_CAPABILITIES,
    lockedEnv: { use_wandb: true },
    env: { WANDB_API_KEY: WANDB_KEY, WANDB_BASE_URL: wandb.url, RL_STATUS_MIN_INTERVAL_SECONDS: '1800' },
  });
  h.install.trainerControl({ step_seconds: 0.01 });
  const run = await completedRun(h);
  const rewards = [0.1, 0.3, 0.2, 0.6, 0.7];
  wandb.addRun(ENTITY, run.wandb_project, {
    name: `t${run.run_id}`,
    displayName: run.trainer_wandb_run_name,
    tags: ['trainer'],
    group: run.run_id,
    history: rewards.map((reward, i) => ({ _step: i + 1, 'reward/mean': reward, 'train/loss': i === 2 ? 'NaN' : 2 - i / 10 })),
  });

  const answer = await h.call(SNAPSHOT, { run_ids: [run.run_id, 'ffffffff'] });
  assert.equal(answer.isError, false, JSON.stringify(answer.json));
  const { json } = answer;
  assert.equal(json.active, false);
  assert.equal(json.poll_after_seconds, null, 'an ended run is not polled again');
  const [shown, missing] = json.runs;
  assert.equal(shown.status, 'completed');
  assert.equal(shown.health.verdict, 'completed');
  assert.deepEqual(Object.values(shown.processes).map((p: any) => p.state), ['exited', 'exited', 'exited']);
  assert.match(shown.checkpoint, /^tinker:\/\//);
  assert.deepEqual(shown.series.reward_mean, { source: 'wandb', points: rewards.map((r, i) => [i + 1, r]) });
  assert.equal(shown.series.loss.points.length, 4);
  assert.equal(shown.series.loss.non_finite, 1, 'a NaN loss is counted, not drawn');
  assert.equal(shown.series.percent_correct, undefined, 'no environment run in W&B: no accuracy curve');
  assert.equal(missing.status, 'unknown');
  assert.match(missing.error, /not found/);
  assert.equal(record(h, run.run_id).last_full_check_at, undefined, 'the snapshot left the status window alone');

  const status = await h.call('rl_check_status', { run_id: run.run_id });
  assert.equal(status.json.rate_limited, undefined, 'the first status check after the snapshots is a full one');
  assert.equal(status.json.status, 'completed');
});

test('without W&B the curves come from the trainer log, and say so; a client without Apps gets the same answers', async (t) => {
  const h = await runServer(t, { capabilities: APPS_CLIENT_CAPABILITIES, lockedEnv: { total_steps: 4 } });
  h.install.trainerControl({ step_seconds: 0.01 });
  const run = await completedRun(h);
  const { json } = await h.call(SNAPSHOT, { run_ids: [run.run_id] });
  const [shown] = json.runs;
  assert.equal(shown.wandb_error, WANDB_OFF);
  assert.equal(shown.series.reward_mean.source, 'trainer_log');
  // The trainer prints Reward/mean only for a step with a group of unequal scores: one point per such step.
  const log = readFileSync(record(h, run.run_id).logs.trainer, 'utf8');
  const rewarded = [...log.matchAll(/^Step (\d+)\/\d+$[\s\S]*?^(Reward\/mean: [-\d.]+|Step \d+ complete)/gm)].filter((m) => m[2]!.startsWith('Reward')).map((m) => Number(m[1]));
  assert.ok(rewarded.length > 0, log);
  assert.deepEqual(shown.series.reward_mean.points.map((p: number[]) => p[0]), rewarded, 'one point per step that printed a reward');
  assert.equal(shown.series.loss.points.length, 4);
  assert.equal(shown.series.percent_correct, undefined, 'the trainer log prints no accuracy');
  const refused = await h.call(SNAPSHOT, { run_ids: ['abcd1234', 'abcd1235', 'abcd1236', 'abcd1237', 'abcd1238'] });
  assert.equal(refused.isError, true, 'at most four runs');

  // The same run through a client without Apps: the same answers, nothing added.
  const plain = await plainClient(h);
  t.after(() => plain.close());
  for (const [name, args] of [['rl_check_status', { run_id: run.run_id }], ['rl_get_results', { run_id: run.run_id }]] as const) {
    const withApps = await h.call(name, args);
    const without = await callTool(plain, name, args);
    assert.equal(without.json.rate_limited, undefined, `${name}: a full answer`);
    assert.deepEqual(Object.keys(without.json).sort(), Object.keys(withApps.json).sort(), `${name}: same fields`);
    assert.deepEqual(without.raw, { ...withApps.raw, content: without.raw.content, structuredContent: without.raw.structuredContent }, `${name}: nothing but the content differs`);
    assert.equal(without.raw._meta, undefined);
  }
});
