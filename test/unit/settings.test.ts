import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { BUNDLED_EXAMPLES_ROOT } from '../../src/core/files/paths.js';
import { loadSettings } from '../../src/runtime/config/settings.js';
import { SettingsError } from '../../src/core/errors.js';
import { tempDir } from '../helpers/tmp.js';

const HOME = '/home/someone';

test('defaults: the values documented in the README configuration table', () => {
  const cwd = tempDir();
  const s = loadSettings({ HOME }, cwd);
  assert.equal(s.root, BUNDLED_EXAMPLES_ROOT);
  assert.equal(s.usingBundledExamples, true);
  assert.equal(s.home, join(HOME, '.hermes', 'rl_training'));
  assert.equal(s.python, 'python3');
  assert.deepEqual([s.apiPort, s.inferencePort], [8000, 8001]);
  assert.equal(s.statusMinIntervalSeconds, 1800);
  assert.equal(s.stopGraceSeconds, 10);
  assert.equal(s.stopRunsOnExit, false);
  assert.equal(s.autoResume, 2);
  assert.equal(loadSettings({ HOME, RL_AUTO_RESUME: '0' }, cwd).autoResume, 0, 'RL_AUTO_RESUME=0 turns recovery off');
  assert.equal(s.wandb.project, 'atropos-tinker');
  assert.equal(s.wandb.baseUrl, 'https://api.wandb.ai');
  assert.equal(s.locked.env.total_steps, 2500);
  assert.equal(s.locked.tinker.lora_rank, 32);
  assert.equal(s.locked.openai.server_type, 'sglang');
});

test('HERMES_HOME moves RL_HOME; ./tinker-atropos is picked up when present', () => {
  const cwd = tempDir();
  mkdirSync(join(cwd, 'tinker-atropos', '.venv', 'bin'), { recursive: true });
  writeFileSync(join(cwd, 'tinker-atropos', '.venv', 'bin', 'python'), '');
  const s = loadSettings({ HERMES_HOME: '/srv/hermes' }, cwd);
  assert.equal(s.home, '/srv/hermes/rl_training');
  assert.equal(s.root, join(cwd, 'tinker-atropos'));
  assert.equal(s.python, join(cwd, 'tinker-atropos', '.venv', 'bin', 'python'));
  assert.equal(s.usingBundledExamples, false);
});

test('bad values stop with one clear line', () => {
  const cwd = tempDir();
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ RL_API_PORT: 'abc' }, /RL_API_PORT="abc" is not a whole number/],
    [{ RL_API_PORT: '70000' }, /RL_API_PORT=70000 is out of range/],
    [{ RL_API_PORT: '9000', RL_INFERENCE_PORT: '9000' }, /both 9000/],
    [{ RL_STOP_GRACE_SECONDS: '-1' }, /RL_STOP_GRACE_SECONDS/],
    [{ RL_STOP_RUNS_ON_EXIT: 'maybe' }, /not a flag/],
    [{ RL_AUTO_RESUME: '-1' }, /RL_AUTO_RESUME/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL=loud/],
    [{ TINKER_ATROPOS_ROOT: '/does/not/exist' }, /TINKER_ATROPOS_ROOT=\/does\/not\/exist does not exist/],
    [{ RL_MCP_CONFIG: join(cwd, 'missing.yaml') }, /does not exist: create it or unset RL_MCP_CONFIG/],
    [{ WANDB_BASE_URL: 'ftp://x' }, /WANDB_BASE_URL/],
    [{ TINKER_OAI_BASE_URL: 'tinker.example/oai' }, /TINKER_OAI_BASE_URL=tinker.example\/oai is not an http\(s\) URL/],
  ];
  for (const [env, pattern] of cases) {
    assert.throws(() => loadSettings({ HOME, ...env }, cwd), (err: unknown) => {
      assert.ok(err instanceof SettingsError, `expected SettingsError for ${JSON.stringify(env)}`);
      assert.match(err.message, pattern);
      assert.ok(!err.message.includes('\n'), 'one line');
      return true;
    });
  }
});

test('RL_MCP_CONFIG sets keys and locked values; the environment wins', () => {
  const cwd = tempDir();
  const file = join(cwd, 'rl.yaml');
  writeFileSync(
    file,
    ['RL_API_PORT: 9100', 'RL_INFERENCE_PORT: 9101', 'WANDB_PROJECT: from-file', 'locked:', '  env:', '    total_steps: 20', '  tinker:', '    lora_rank: 8', 'unlocked: [steps_per_eval]', ''].join('\n'),
  );
  const s = loadSettings({ HOME, RL_MCP_CONFIG: file, RL_API_PORT: '9200' }, cwd);
  assert.equal(s.apiPort, 9200);
  assert.equal(s.inferencePort, 9101);
  assert.equal(s.wandb.project, 'from-file');
  assert.equal(s.locked.env.total_steps, 20);
  assert.equal(s.locked.tinker.lora_rank, 8);
  assert.equal('steps_per_eval' in s.locked.env, false);
  assert.equal(s.locked.env.tokenizer_name, 'Qwen/Qwen3-8B');
});

test('RL_MCP_CONFIG errors: malformed YAML, unknown keys, bad sections', () => {
  const cwd = tempDir();
  const cases: Array<[string, RegExp]> = [
    ['RL_API_PORT: [1, 2\n', /is not valid YAML/],
    ['RL_API_PROT: 1\n', /unknown key 'RL_API_PROT'/],
    ['- a\n- b\n', /must hold a mapping/],
    ['locked:\n  envs: {}\n', /unknown section locked.envs/],
    ['unlocked: total_steps\n', /'unlocked' must be a list/],
  ];
  for (const [text, pattern] of cases) {
    const file = join(cwd, 'bad.yaml');
    writeFileSync(file, text);
    assert.throws(() => loadSettings({ HOME, RL_MCP_CONFIG: file }, cwd), pattern);
  }
});

test('relative paths in RL_MCP_CONFIG are relative to the file; in the environment, to the cwd', () => {
  const dir = tempDir();
  const cwd = tempDir();
  mkdirSync(join(dir, 'checkout'));
  mkdirSync(join(cwd, 'envs'));
  const file = join(dir, 'rl.yaml');
  writeFileSync(file, ['TINKER_ATROPOS_ROOT: ./checkout', 'RL_HOME: state', 'RL_PYTHON: venv/bin/python', ''].join('\n'));
  const s = loadSettings({ HOME, RL_MCP_CONFIG: file, RL_ENVIRONMENTS_DIRS: 'envs' }, cwd);
  assert.equal(s.root, join(dir, 'checkout'));
  assert.equal(s.home, join(dir, 'state'));
  assert.equal(s.python, join(dir, 'venv', 'bin', 'python'));
  assert.deepEqual(s.environmentsDirs, [join(cwd, 'envs')]);
  assert.equal(loadSettings({ HOME, RL_MCP_CONFIG: file, RL_HOME: 'here' }, cwd).home, join(cwd, 'here'));
});

test('locked env values must fit their field: coerced when they can be, refused in one line when not', () => {
  const cwd = tempDir();
  const file = join(cwd, 'rl.yaml');
  writeFileSync(file, 'locked:\n  env:\n    total_steps: "40"\n    eval_handling: limit_train\n');
  const s = loadSettings({ HOME, RL_MCP_CONFIG: file }, cwd);
  assert.equal(s.locked.env.total_steps, 40);
  assert.equal(s.locked.env.eval_handling, 'LIMIT_TRAIN');
  for (const [text, pattern] of [
    ['locked:\n  env:\n    total_steps: [1, 2]\n', /locked\.env\.total_steps: .*expected int/],
    ['locked:\n  env:\n    group_size: 0\n', /locked\.env\.group_size: .*expected int: an integer >= 1/],
    ['locked:\n  env:\n    use_wandb: maybe\n', /locked\.env\.use_wandb/],
  ] as const) {
    writeFileSync(file, text);
    assert.throws(() => loadSettings({ HOME, RL_MCP_CONFIG: file }, cwd), (err: unknown) => err instanceof SettingsError && pattern.test(err.message) && !err.message.includes('\n'));
  }
});

test('a path that still holds an unexpanded ${VAR} stops the server at start with the likely cause', () => {
  for (const [key, value] of [['RL_HOME', '${HOME}/rl'], ['TINKER_ATROPOS_ROOT', '${TA_ROOT}'], ['RL_PYTHON', '$VENV/bin/python'], ['RL_MCP_CONFIG', '${CONFIG}']] as const) {
    assert.throws(() => loadSettings({ HOME: tempDir(), [key]: value }), (err: unknown) => err instanceof SettingsError && err.message.startsWith(`${key} holds the text ${value.replace(/\/.*$/, '')}, not a value`), key);
  }
  assert.equal(loadSettings({ HOME: tempDir(), RL_HOME: '/tmp/plain-$-sign-is-fine' }).home, '/tmp/plain-$-sign-is-fine');
});
