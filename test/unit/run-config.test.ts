/** The run config a run is started with: its own ports and checkpoints, health checks off, and two server entries when the environment needs them. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadSettings } from '../../src/runtime/config/settings.js';
import { buildRunConfig, checkpointDir } from '../../src/runtime/runs/atropos/runConfig.js';
import { SERVER_CONFIGS_SHAPES } from '../../src/runtime/environments/tinkerReadiness.js';
import { testEnv } from '../helpers/tmp.js';

const settings = loadSettings(testEnv());
const selection = { environment: { name: 'gsm8k', file_path: '/envs/gsm8k.py' }, values: { group_size: 8 }, wandbProject: 'p' };
const placement = { ports: { api: 9100, inference: 9101 }, checkpointDir: '/home/runs/abcd0123/checkpoints' };

test('one server entry for a config_init list, two otherwise (upstream spreads a single config to localhost:9004-9007)', () => {
  const expected = { list: 1, single: 2, baseline: 2, unknown: 2 };
  for (const shape of SERVER_CONFIGS_SHAPES) {
    const { config } = buildRunConfig(settings, { ...selection, tinker: { managed_server: true, server_configs: shape } }, 'abcd0123', placement);
    assert.equal(config.openai.length, expected[shape], shape);
    for (const entry of config.openai) {
      assert.equal(entry.base_url, 'http://127.0.0.1:9101/v1');
      assert.equal(entry.health_check, false, 'no 1-token health request to the trainer every second');
      assert.equal(entry.server_type, 'sglang');
    }
  }
});

test("the run's own ports and checkpoint_dir; an operator's absolute checkpoint_dir gets a folder per run", () => {
  const { config } = buildRunConfig(settings, selection, 'abcd0123', placement);
  assert.equal(config.env.rollout_server_url, 'http://127.0.0.1:9100');
  assert.equal(config.tinker.checkpoint_dir, '/home/runs/abcd0123/checkpoints');
  assert.equal(config.env.group_size, 8);
  assert.equal(checkpointDir(settings, '/home/runs/abcd0123', 'abcd0123'), '/home/runs/abcd0123/checkpoints', "upstream's relative ./temp/ is replaced");
  const shared = { ...settings, locked: { ...settings.locked, tinker: { ...settings.locked.tinker, checkpoint_dir: '/data/ckpt' } } };
  assert.equal(checkpointDir(shared, '/home/runs/abcd0123', 'abcd0123'), '/data/ckpt/abcd0123');
  const locked = { ...settings, locked: { ...settings.locked, openai: { ...settings.locked.openai, health_check: true } } };
  assert.equal(buildRunConfig(locked, selection, 'abcd0123', placement).config.openai[0]!.health_check, true, 'the operator may lock it back on');
});
