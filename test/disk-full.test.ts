/**
 * RL_HOME on a full file system, against the built server over stdio: a call that must write
 * answers isError with the cause and the fix, reads go on answering, the log's ENOSPC never takes
 * the server down (said once on stderr), and nothing on disk is left half written. A tmpfs when
 * run as root (CI), an injected ENOSPC otherwise (test/helpers/fullDisk.ts).
 */
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { callTool, connectStdio } from './helpers/client.js';
import { makeFakeInstall } from './helpers/fakeInstall.js';
import { fullDisk } from './helpers/fullDisk.js';
import { writeRunDir } from './helpers/registry.js';
import { filesUnder, isAlive, runServerEnv } from './helpers/runs.js';

const FULL = /RL_HOME's file system is full: free space on the file system holding .*then call again/;

test('a full disk: writes refused with the fix, reads answered, the server up, no file half written', async (t) => {
  const disk = fullDisk(t);
  const install = await makeFakeInstall();
  const env = await runServerEnv(install, disk.home);
  // debug: every call logs, so the log's full disk is met at once and often.
  const h = await connectStdio({ ...env, ...disk.env, LOG_LEVEL: 'debug' });
  t.after(() => h.close());
  const call = (name: string, args: Record<string, unknown> = {}) => callTool(h.client, name, args);
  assert.equal((await call('rl_select_environment', { name: 'gsm8k' })).isError, false);
  const ended = writeRunDir(disk.home, { runId: 'd15cf011', createdMs: Date.now() - 120_000, status: 'completed' });
  writeFileSync(ended.logs.trainer, 'Step 1 complete\nTraining complete!\n');

  disk.fill();
  const writes: Array<[string, Record<string, unknown>]> = [
    ['rl_edit_config', { field: 'group_size', value: 8 }],
    ['rl_select_environment', { name: 'gsm8k' }],
    ['rl_start_training', {}],
    ['rl_test_inference', { models: ['Qwen/Qwen3-8B'], wait_seconds: 0 }],
  ];
  for (const [tool, args] of writes) {
    const answer = await call(tool, args);
    assert.equal(answer.isError, true, `${tool}: ${JSON.stringify(answer.json)}`);
    assert.match(answer.json.error, FULL, tool);
  }
  const status = await call('rl_check_status', { run_id: 'd15cf011' });
  assert.equal(status.isError, false, JSON.stringify(status.json));
  assert.equal(status.json.status, 'completed');
  for (const [tool, args] of [['rl_list_runs', {}], ['rl_get_current_config', {}], ['rl_read_log', { run_id: 'd15cf011' }], ['rl_get_results', { run_id: 'd15cf011' }], ['rl_list_environments', {}]] as const) {
    const answer = await call(tool, args);
    assert.equal(answer.isError, false, `${tool}: ${JSON.stringify(answer.json)}`);
  }
  const gsm8k = (await call('rl_list_environments')).json.environments.find((e: { name: string }) => e.name === 'gsm8k').file_path as string;
  assert.ok(isAlive(h.transport.pid!), 'the server is up');
  const said = h.stderr().split('\n').filter((l) => /server\.log cannot be written \(ENOSPC\)/.test(l));
  assert.equal(said.length, 1, h.stderr().slice(-2000));

  const files = filesUnder(disk.home);
  assert.deepEqual(files.filter((f) => /\.tmp|\.lock\./.test(f)), [], 'no temp file left behind');
  for (const f of files.filter((f) => f.endsWith('.json'))) assert.doesNotThrow(() => JSON.parse(readFileSync(f, 'utf8')), f);
  for (const line of readFileSync(`${disk.home}/server.log`, 'utf8').split('\n').filter(Boolean)) assert.doesNotThrow(() => JSON.parse(line), line);

  disk.free();
  const edited = await call('rl_edit_config', { field: 'group_size', value: 8 });
  assert.equal(edited.isError, false, JSON.stringify(edited.json));
  // A new environment file: discovery parses it and logs, and the log is written again.
  copyFileSync(gsm8k, join(dirname(gsm8k), 'gsm8k_again.py'));
  assert.equal((await call('rl_list_environments')).isError, false);
  assert.match(h.stderr(), /server\.log is written again; \d+ log lines were dropped/);
});
