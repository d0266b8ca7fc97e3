/** rl_doctor and `rl-training-mcp doctor`: every missing piece with its fix; ready against the fakes. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { connectInMemory } from './helpers/client.js';
import { makeFakeInstall } from './helpers/fakeInstall.js';
import { DIST_ENTRY, freePort, tempDir, testEnv } from './helpers/tmp.js';
import { FakeWandb } from './fakes/wandbServer.js';
import { KEY as WANDB_KEY } from './fakes/wandbFixtures.js';
import { makeFakeTinker } from './helpers/fakeTinker.js';

/** A fake Tinker service knowing `key` and serving the locked model: what the doctor asks for the live base models. */
function tinkerFor(key: string): string {
  const tinker = makeFakeTinker();
  tinker.addKey(key);
  tinker.setModels(['Qwen/Qwen3-8B']);
  return `file://${tinker.dir}`;
}

/** Runs the CLI without blocking this process: the fake W&B server it talks to lives here. */
function doctor(env: Record<string, string | undefined>): Promise<{ code: number | null; out: string }> {
  // No PYTHONPATH: nothing of the fake atroposlib leaks in unless the install provides it.
  return new Promise((resolve) => {
    execFile(process.execPath, [DIST_ENTRY, 'doctor'], { env: testEnv({ PYTHONPATH: undefined, ...env }), encoding: 'utf8', timeout: 120_000 }, (err, stdout) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, out: stdout });
    });
  });
}

test('doctor on a machine with nothing configured lists every missing piece with its fix and exits 1', async () => {
  const { code, out } = await doctor({ RL_API_PORT: String(await freePort()), RL_INFERENCE_PORT: String(await freePort()) });
  assert.equal(code, 1, out);
  for (const check of ['atroposlib', 'tinker', 'run-api', 'launch_training.py', 'TINKER_API_KEY', 'WANDB_API_KEY']) {
    const line = out.split('\n').findIndex((l) => l.includes(`FAIL  ${check} `));
    assert.ok(line >= 0, `${check} reported as failing:\n${out}`);
    assert.match(out.split('\n')[line + 1] ?? '', /fix: \S/, `${check} has a fix`);
  }
  assert.match(out, /ok {4}environments +3 found/);
  assert.match(out, /Training cannot start/);
});

test('doctor with an RL_HOME that cannot be a directory says so in one line', async () => {
  const notADirectory = join(tempDir(), 'file');
  writeFileSync(notADirectory, '');
  const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    execFile(process.execPath, [DIST_ENTRY, 'doctor'], { env: testEnv({ RL_HOME: notADirectory }), encoding: 'utf8', timeout: 60_000 }, (err, _stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr });
    });
  });
  assert.notEqual(code, 0);
  assert.equal(stderr.trim().split('\n').length, 1, stderr);
  assert.match(stderr, /RL_HOME=.* cannot be created \(EEXIST\): point RL_HOME at a writable directory/);
});

test('doctor against the fake install with keys set exits 0 and never prints a key', async () => {
  const install = await makeFakeInstall();
  const wandb = await FakeWandb.start({ apiKey: WANDB_KEY });
  after(() => wandb.close());
  const tinkerKey = 'tml-doctor-secret-0123456789';
  const { code, out } = await doctor({
    TINKER_ATROPOS_ROOT: install.root,
    TINKER_API_KEY: tinkerKey,
    TINKER_BASE_URL: tinkerFor(tinkerKey),
    WANDB_API_KEY: WANDB_KEY,
    WANDB_BASE_URL: wandb.url,
    RL_API_PORT: String(await freePort()),
    RL_INFERENCE_PORT: String(await freePort()),
  });
  assert.equal(code, 0, out);
  assert.doesNotMatch(out, /FAIL/);
  assert.match(out, new RegExp(`python +Python 3\\.\\d+\\.\\d+ \\(${install.python.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)`));
  assert.match(out, /W&B +.*accepts the key \(entity alice\)/);
  assert.match(out, /ok {4}base model on Tinker +Qwen\/Qwen3-8B is served/);
  assert.ok(!out.includes(tinkerKey) && !out.includes(WANDB_KEY), 'no key value printed');
});

test('rl_doctor over MCP: structured checks, a busy port named, a rejected W&B key explained', async () => {
  const install = await makeFakeInstall();
  const wandb = await FakeWandb.start({ apiKey: WANDB_KEY });
  after(() => wandb.close());
  const busy = await new Promise<Server>((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => resolve(srv));
  });
  after(() => busy.close());
  const busyPort = (busy.address() as AddressInfo).port;
  const { call } = await connectInMemory({
    TINKER_ATROPOS_ROOT: install.root,
    TINKER_API_KEY: 'tml-x-0123456789',
    TINKER_BASE_URL: tinkerFor('tml-x-0123456789'),
    WANDB_API_KEY: 'wrong-key-0123456789',
    WANDB_BASE_URL: wandb.url,
    RL_API_PORT: String(busyPort),
    RL_INFERENCE_PORT: String(await freePort()),
  });
  const { isError, json } = await call('rl_doctor');
  assert.equal(isError, false);
  assert.equal(json.ready, false);
  type Check = { check: string; ok: boolean; detail: string; fix?: string };
  const byName: Record<string, Check> = Object.fromEntries((json.checks as Check[]).map((c) => [c.check, c]));
  assert.equal(byName['atroposlib']!.ok, true);
  assert.equal(byName['run-api']!.ok, true);
  assert.equal(byName['api port']!.ok, false);
  assert.match(byName['api port']!.detail, new RegExp(`127.0.0.1:${busyPort} is in use`));
  assert.match(byName['api port']!.fix!, /RL_API_PORT/);
  assert.equal(byName['W&B']!.ok, false);
  assert.match(byName['W&B']!.detail, /reject|key/i);
  assert.match(json.summary, /api port/);
});

test('doctor with RL_PLACEMENT=slurm on a host without Slurm names the missing commands and the fix', async () => {
  // A PATH with nothing of Slurm on it (the doctor itself runs on this process's node by its full path).
  const { code, out } = await doctor({ RL_PLACEMENT: 'slurm', PATH: tempDir(), RL_API_PORT: String(await freePort()), RL_INFERENCE_PORT: String(await freePort()) });
  assert.equal(code, 1, out);
  const lines = out.split('\n');
  const at = lines.findIndex((l) => /FAIL {2}slurm commands +not found: sbatch, squeue, scancel, scontrol, sacct, srun$/.test(l));
  assert.ok(at >= 0, out);
  assert.match(lines[at + 1]!, /fix: Slurm's sbatch, squeue, scancel, scontrol are not found on this host.*apt-get install slurm-client/);
  assert.match(out, /FAIL {2}slurm controller +not asked: scontrol is not installed/);
  assert.doesNotMatch(out, /api port/, "this host's ports are not a Slurm run's");
});
