/**
 * The selection lives in RL_HOME: a new server process sees what another selected and edited, a
 * stateless start leaves it as it was, and a damaged or stale file is reported with the fix.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { callTool, connectInMemory, connectStdio, type InMemoryHarness } from './helpers/client.js';
import { runServer, type RunServer, waitForRun } from './helpers/runs.js';
import { tempDir } from './helpers/tmp.js';

const MINE_ENV = `from pydantic import Field

from atroposlib.envs.base import BaseEnv, BaseEnvConfig


class MineConfig(BaseEnvConfig):
    count: int = Field(3, ge=1, description="How many")


class MineEnv(BaseEnv):
    name = "mine"
    env_config_cls = MineConfig

    @classmethod
    def config_init(cls):
        return MineConfig(group_size=4, batch_size=8), []
`;

function runDirs(home: string): string[] {
  const root = join(home, 'runs');
  return existsSync(root) ? readdirSync(root).filter((n) => !n.startsWith('.')) : [];
}

function selectionFile(home: string): string {
  return join(home, 'selection.json');
}

async function ok(h: InMemoryHarness, name: string, args: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const answer = await h.call(name, args);
  assert.equal(answer.isError, false, `${name}: ${JSON.stringify(answer.json)}`);
  return answer.json;
}

async function currentValue(h: InMemoryHarness, field: string): Promise<unknown> {
  const config = await ok(h, 'rl_get_current_config');
  return config.configurable_fields.find((f: { name: string }) => f.name === field)?.current_value;
}

/** Starts a run with `args`, waits until it ended with no process left, and answers the start. */
async function runToEnd(h: RunServer, args: Record<string, unknown>): Promise<Record<string, any>> {
  const started = await ok(h, 'rl_start_training', args);
  const ended = await waitForRun(h, started.run_id, 'ended with no process left', (r) => r.status !== 'starting' && r.status !== 'running' && Object.values(r.processes).every((p) => p.state === 'exited'));
  assert.equal(ended.status, 'completed', ended.error);
  return started;
}

test('select and edit in one server; a new server process on the same RL_HOME sees them and starts from them', async (t) => {
  const a = await runServer(t);
  a.install.trainerControl({ step_seconds: 0.01 });
  const selectedAt = (await ok(a, 'rl_get_current_config')).selected_at;
  assert.ok(Date.parse(selectedAt) <= Date.now(), selectedAt);
  await ok(a, 'rl_edit_config', { field: 'group_size', value: 8 });
  await ok(a, 'rl_edit_config', { field: 'wandb_project', value: 'sweep-1' });

  const b = await connectStdio(a.env);
  const config = await callTool(b.client, 'rl_get_current_config');
  assert.equal(config.isError, false, JSON.stringify(config.json));
  assert.equal(config.json.environment, 'gsm8k');
  assert.equal(config.json.selected_at, selectedAt);
  assert.equal(config.json.wandb_project, 'sweep-1');
  assert.equal(config.json.configurable_fields.find((f: { name: string }) => f.name === 'group_size').current_value, 8);

  const started = await callTool(b.client, 'rl_start_training');
  assert.equal(started.isError, false, JSON.stringify(started.json));
  assert.equal(started.json.config_source, 'selection');
  assert.equal(started.json.overrides, undefined);
  assert.equal(started.json.wandb_project, 'sweep-1');
  assert.equal(parse(readFileSync(started.json.config_path, 'utf8')).env.group_size, 8);
  await waitForRun(a, started.json.run_id, 'ended', (r) => r.status === 'completed' || r.status === 'failed');
  await b.close();
});

test("another server's edits are seen at the next call, and two servers' edits both stand", async (t) => {
  const a = await runServer(t);
  const b = await runServer(t, { install: a.install, home: a.home, select: false });
  assert.equal(await currentValue(b, 'group_size'), 16, 'b sees what a selected');
  await ok(b, 'rl_edit_config', { field: 'group_size', value: 4 });
  assert.equal(await currentValue(a, 'group_size'), 4, 'a sees what b edited');
  await ok(a, 'rl_edit_config', { field: 'batch_size', value: 64 });
  assert.deepEqual([await currentValue(b, 'group_size'), await currentValue(b, 'batch_size')], [4, 64]);
  // Unchanged on disk, the file is not read again: the same object answers.
  assert.equal(a.runtime.selection.requireSelection(), a.runtime.selection.requireSelection());
});

test('stateless starts: each run has its group_size, the saved selection stays as it was', async (t) => {
  const h = await runServer(t);
  h.install.trainerControl({ step_seconds: 0.01 });
  const saved = readFileSync(selectionFile(h.home), 'utf8');
  for (const groupSize of [4, 8, 32]) {
    const start = await runToEnd(h, { config: { group_size: groupSize } });
    assert.equal(start.config_source, 'selection+config');
    assert.deepEqual(start.overrides, { group_size: groupSize });
    assert.match(start.message, /Config: the saved selection \(gsm8k, selected at .*\) with group_size set for this run only; the saved selection is unchanged\./);
    assert.equal(parse(readFileSync(start.config_path, 'utf8')).env.group_size, groupSize);
  }
  // Another environment, named in the call: its own config_init() values, plus the config given.
  const other = await runToEnd(h, { environment: 'word_sort', config: { batch_size: '32' } });
  assert.equal(other.environment, 'word_sort');
  assert.equal(other.config_source, 'environment+config');
  assert.deepEqual(other.overrides, { batch_size: 32 });
  const otherEnv = parse(readFileSync(other.config_path, 'utf8')).env;
  assert.deepEqual([otherEnv.group_size, otherEnv.batch_size], [8, 32]);
  assert.match(otherEnv.wandb_name, /^word_sort-\d{8}-\d{6}$/);

  assert.equal(readFileSync(selectionFile(h.home), 'utf8'), saved, 'the saved selection is unchanged');
  const config = await ok(h, 'rl_get_current_config');
  assert.equal(config.environment, 'gsm8k');
  assert.equal(await currentValue(h, 'group_size'), 16);
});

test('a config value a start refuses is refused as rl_edit_config refuses it, and leaves no run', async (t) => {
  const h = await runServer(t);
  const cases: Array<[string, unknown, string]> = [
    ['total_steps', 10, 'locked_value'],
    ['lora_rank', 8, 'locked_value'],
    ['group_size', 'abc', 'expected'],
    ['group_size', 0, 'expected'],
    ['groupsize', 8, 'available_fields'],
  ];
  for (const [field, value, hint] of cases) {
    const edit = await h.call('rl_edit_config', { field, value });
    assert.equal(edit.isError, true, `${field}=${JSON.stringify(value)} was accepted`);
    for (const args of [{ config: { [field]: value } }, { environment: 'gsm8k', config: { [field]: value } }]) {
      const start = await h.call('rl_start_training', args);
      assert.equal(start.isError, true, `${JSON.stringify(args)} started`);
      assert.deepEqual(start.json, edit.json, JSON.stringify(args));
      assert.ok(start.json[hint] !== undefined, `${hint} in ${JSON.stringify(start.json)}`);
    }
  }
  const unknownEnvironment = await h.call('rl_start_training', { environment: 'nope' });
  assert.equal(unknownEnvironment.isError, true);
  assert.match(unknownEnvironment.json.error, /^Unknown environment 'nope'/);
  const stalls = await h.call('rl_start_training', { config: { batch_size: 100 } });
  assert.match(stalls.json.error, /^batch_size 100 is not a multiple of group_size 16/);
  const path = await h.call('rl_start_training', { environment: '../gsm8k' });
  assert.equal(path.isError, true);
  assert.match(path.json.error, /not a path/);
  assert.deepEqual(runDirs(h.home), [], 'no refused start leaves a run behind');
  assert.equal(await currentValue(h, 'group_size'), 16, 'nor changes the selection');
});

test('a damaged selection file is reported with the fix; the server goes on, and selecting again repairs it', async (t) => {
  const h = await runServer(t, { select: false });
  for (const [content, reason] of [
    ['{"format": 1, "selected', /cannot be used \(it is not JSON\)/],
    ['{"format": 2}', /cannot be used \(format: /],
    ['[]', /cannot be used \(the file: /],
  ] as const) {
    writeFileSync(selectionFile(h.home), content);
    for (const [name, args] of [['rl_get_current_config', {}], ['rl_edit_config', { field: 'group_size', value: 8 }], ['rl_start_training', {}], ['rl_test_inference', {}]] as const) {
      const answer = await h.call(name, args);
      assert.equal(answer.isError, true, name);
      assert.match(answer.json.error, reason, `${name}: ${answer.json.error}`);
      assert.match(answer.json.error, /Select an environment again with rl_select_environment\(name\): that replaces the file\.$/);
      assert.equal(answer.json.selection_file, selectionFile(h.home));
    }
  }
  // A server that starts on the damaged file starts all the same.
  const other = await connectInMemory(h.env);
  assert.match((await other.call('rl_get_current_config')).json.error, /cannot be used/);
  assert.equal((await other.call('rl_list_environments')).isError, false);
  assert.deepEqual(runDirs(h.home), []);

  await ok(h, 'rl_select_environment', { name: 'gsm8k' });
  assert.equal(await currentValue(other, 'group_size'), 16, 'the other server reads the repaired file');
});

test('a selection whose environment is gone, or whose fields changed, is reported with the fix', async () => {
  const root = tempDir('rlmcp-selection-');
  const envDir = join(root, 'tinker_atropos', 'environments');
  mkdirSync(envDir, { recursive: true });
  const file = join(envDir, 'mine_env.py');
  writeFileSync(file, MINE_ENV);
  const h = await connectInMemory({ TINKER_ATROPOS_ROOT: root });
  await ok(h, 'rl_select_environment', { name: 'mine' });
  await ok(h, 'rl_edit_config', { field: 'count', value: 5 });

  // Changed, but not its fields: the edits stand, and the new stamp is saved.
  writeFileSync(file, `${MINE_ENV}\n# a comment\n`);
  assert.equal(await currentValue(h, 'count'), 5);
  const stamp = JSON.parse(readFileSync(selectionFile(h.runtime.settings.home), 'utf8')).environment_file;
  assert.equal(stamp.size, MINE_ENV.length + '\n# a comment\n'.length);

  writeFileSync(file, MINE_ENV.replace('description="How many")', 'description="How many")\n    extra: bool = False').replace('ge=1', 'ge=2'));
  const changed = await h.call('rl_get_current_config');
  assert.equal(changed.isError, true);
  assert.match(changed.json.error, /^The config fields of 'mine' changed since it was selected at .* \(.*mine_env\.py was modified; added: extra; changed: count\)\. Select it again with rl_select_environment\('mine'\)/);
  assert.deepEqual([changed.json.fields_added, changed.json.fields_removed, changed.json.fields_changed], [['extra'], [], ['count']]);
  assert.equal(changed.json.saved_config.count, 5, 'the edits to apply again');
  assert.match((await h.call('rl_start_training')).json.error, /^The config fields of 'mine' changed/);

  rmSync(file);
  const gone = await h.call('rl_edit_config', { field: 'count', value: 6 });
  assert.equal(gone.isError, true);
  assert.match(gone.json.error, /^The selected environment 'mine' is gone: .*mine_env\.py no longer exists \(selected at .*\)\. Select another with rl_select_environment\(name\)/);
});
