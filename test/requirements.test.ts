/**
 * rl_doctor and rl_start_training judge a host by the same requirements: where the doctor says a
 * check fails, a start refuses with the doctor's fix as its error, and where the doctor says
 * ready, a start gets through.
 */
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { networkInterfaces } from 'node:os';
import { dirname, join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { stringify } from 'yaml';
import type { ToolAnswer } from './helpers/client.js';
import { makeFakeInstall } from './helpers/fakeInstall.js';
import { record, runServer, startRun, waitForRun } from './helpers/runs.js';
import { tempDir } from './helpers/tmp.js';

type Check = { check: string; ok: boolean; required: boolean; detail: string; fix?: string };

function checks(doctor: ToolAnswer): Record<string, Check> {
  assert.equal(doctor.isError, false, JSON.stringify(doctor.json));
  return Object.fromEntries((doctor.json.checks as Check[]).map((c) => [c.check, c]));
}

function failing(doctor: ToolAnswer): string[] {
  return (doctor.json.checks as Check[]).filter((c) => !c.ok && c.required).map((c) => c.check);
}

/** An IPv4 address of this machine other than 127.0.0.1. */
function otherAddress(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    const external = addresses?.find((a) => a.family === 'IPv4' && !a.internal);
    if (external) return external.address;
  }
  // No network interface besides loopback: 127.0.0.2 is another address the kernel accepts a
  // bind on (all of 127/8 is local) and that a bind on 127.0.0.1 does not collide with. Nothing is
  // sent to it; it is only bound.
  return '127.0.0.2';
}

async function listenOn(t: TestContext, host: string, port: number): Promise<void> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
}

test('a listener on another address holds the inference port: the doctor fails it and a start refuses with its fix', async (t) => {
  const install = await makeFakeInstall();
  // Every launch of RL_PYTHON is logged: a start checks the version and both imports in one.
  const launches = join(tempDir(), 'launches');
  const python = join(dirname(install.python), 'python-logged');
  writeFileSync(python, `#!/bin/sh\necho launch >> "${launches}"\nexec "${install.python}" "$@"\n`);
  chmodSync(python, 0o755);
  const h = await runServer(t, { install, env: { RL_PYTHON: python } });
  const port = Number(h.env.RL_INFERENCE_PORT);
  const host = otherAddress();
  await listenOn(t, host, port);

  const doctor = await h.call('rl_doctor');
  const inference = checks(doctor)['inference port']!;
  assert.equal(doctor.json.ready, false);
  assert.deepEqual(failing(doctor), ['inference port'], `only the inference port fails with ${host}:${port} taken:\n${JSON.stringify(doctor.json.checks, null, 1)}`);
  assert.match(inference.detail, new RegExp(`^0\\.0\\.0\\.0:${port} is in use`));

  const launchesBefore = readFileSync(launches, 'utf8').split('\n').length;
  const start = await h.call('rl_start_training');
  assert.equal(start.isError, true, JSON.stringify(start.json));
  assert.match(start.json.error, new RegExp(`^Port ${port} \\(RL_INFERENCE_PORT.*hard-codes its inference port`));
  assert.equal(inference.fix, start.json.error);
  assert.equal(start.json.port, port);
  assert.equal(readFileSync(launches, 'utf8').split('\n').length - launchesBefore, 1, 'the start launched RL_PYTHON once');
});

test('use_wandb unlocked: the selection decides, for the doctor and a start alike, whether WANDB_API_KEY is required', async (t) => {
  const config = join(tempDir(), 'rl.yaml');
  writeFileSync(config, stringify({ locked: { env: { total_steps: 3 } }, unlocked: ['use_wandb'] }));
  const h = await runServer(t, { env: { RL_MCP_CONFIG: config, WANDB_API_KEY: undefined } });

  // gsm8k's config_init() turns W&B on.
  const on = await h.call('rl_doctor');
  const key = checks(on)['WANDB_API_KEY']!;
  assert.equal(on.json.ready, false);
  assert.deepEqual(failing(on), ['WANDB_API_KEY']);
  const refusal = await h.call('rl_start_training');
  assert.equal(refusal.isError, true, JSON.stringify(refusal.json));
  assert.match(refusal.json.error, /^WANDB_API_KEY is not set while use_wandb is true.*rl_edit_config\('use_wandb', false\)/);
  assert.equal(key.fix, refusal.json.error);

  const edit = await h.call('rl_edit_config', { field: 'use_wandb', value: false });
  assert.equal(edit.isError, false, JSON.stringify(edit.json));
  const off = await h.call('rl_doctor');
  assert.equal(off.json.ready, true, JSON.stringify(off.json.checks, null, 1));
  assert.deepEqual({ ok: checks(off)['WANDB_API_KEY']!.ok, required: checks(off)['WANDB_API_KEY']!.required }, { ok: false, required: false });
  const id = await startRun(h);
  assert.equal(record(h, id).use_wandb, false);
  await h.call('rl_stop_training', { run_id: id });
  await waitForRun(h, id, 'ended', (r) => r.status === 'stopped' || r.status === 'completed');
});
