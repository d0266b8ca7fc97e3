/**
 * rl_select_environment, rl_get_current_config and rl_edit_config through the MCP client, against
 * fixture environments imported by the real helper (fake atroposlib on PYTHONPATH) or read
 * statically when the import fails.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { connectInMemory, type InMemoryHarness } from './helpers/client.js';
import { isAlive, waitUntil } from './helpers/runs.js';
import { tempDir } from './helpers/tmp.js';

const TYPED_ENV = `"""Every field type the editor handles."""
from enum import Enum
from typing import Dict, List, Optional

from pydantic import Field

from atroposlib.envs.base import APIServerConfig, BaseEnv, BaseEnvConfig

DEFAULT_COUNT = 7


class Mode(str, Enum):
    FAST = "fast"
    SLOW = "slow"


class TypedConfig(BaseEnvConfig):
    mode: Mode = Field(default=Mode.FAST, description="How to run")
    count: int = Field(3, ge=1, le=10, description="How many")
    ratio: float = Field(default=0.5, ge=0.0, le=1.0, description="A fraction")
    flag: bool = False
    label: str = "x"
    seed: Optional[int] = Field(default=None, description="Seed; None draws one")
    tags: List[str] = Field(default_factory=lambda: ["a"], description="Tags")
    weights: Dict[str, float] = Field(default_factory=dict, description="Weights")


class TypedEnv(BaseEnv):
    name = "typed"
    env_config_cls = TypedConfig

    @classmethod
    def config_init(cls):
        print("config_init chatter on stdout")
        return TypedConfig(group_size=16, batch_size=-1, count=DEFAULT_COUNT, mode=Mode.SLOW, seed=99), [APIServerConfig()]
`;

const V1_ENV = `from typing import Literal, Optional

from pydantic.v1 import BaseModel, Field

from atroposlib.envs.base import BaseEnv


class OldConfig(BaseModel):
    group_size: int = Field(4, ge=1, description="Group size")
    choice: Literal["a", "b"] = "a"
    maybe: Optional[float] = None


class OldEnv(BaseEnv):
    name = "old"

    @classmethod
    def config_init(cls):
        return OldConfig(group_size=5), None
`;

const HANGING_ENV = `import time

from atroposlib.envs.base import BaseEnv

time.sleep(600)


class SlowEnv(BaseEnv):
    name = "slow"
`;

/** Starts a background process at import that keeps the inherited stdout/stderr open (a downloader, a worker pool). */
const SPAWNING_ENV = `import os
import subprocess

from atroposlib.envs.base import BaseEnv, BaseEnvConfig

_worker = subprocess.Popen(["sleep", "300"])
with open(os.path.join(os.path.dirname(__file__), "worker.pid"), "w") as handle:
    handle.write(str(_worker.pid))


class SpawningEnv(BaseEnv):
    name = "spawning"

    @classmethod
    def config_init(cls):
        return BaseEnvConfig(group_size=6), []
`;

function fixtureRoot(): { root: string; envDir: string } {
  const root = tempDir('rlmcp-config-');
  const envDir = join(root, 'tinker_atropos', 'environments');
  mkdirSync(envDir, { recursive: true });
  writeFileSync(join(envDir, 'typed_env.py'), TYPED_ENV);
  writeFileSync(join(envDir, 'old_env.py'), V1_ENV);
  writeFileSync(join(envDir, 'slow_env.py'), HANGING_ENV);
  return { root, envDir };
}

type Field = { name: string; type: string; default: unknown; description: string; current_value: unknown; allowed?: string; locked_value?: unknown };

async function currentConfig(h: InMemoryHarness): Promise<{ editable: Map<string, Field>; locked: Map<string, Field>; json: Record<string, any> }> {
  const answer = await h.call('rl_get_current_config');
  assert.equal(answer.isError, false, JSON.stringify(answer.json));
  const byName = (list: Field[]): Map<string, Field> => new Map(list.map((f) => [f.name, f]));
  return { editable: byName(answer.json.configurable_fields), locked: byName(answer.json.locked_fields), json: answer.json };
}

async function edit(h: InMemoryHarness, field: string, value: unknown): Promise<Record<string, any>> {
  const answer = await h.call('rl_edit_config', { field, value });
  assert.equal(answer.isError, false, `${field}=${JSON.stringify(value)}: ${JSON.stringify(answer.json)}`);
  return answer.json;
}

async function refused(h: InMemoryHarness, field: string, value: unknown): Promise<Record<string, any>> {
  const answer = await h.call('rl_edit_config', { field, value });
  assert.equal(answer.isError, true, `${field}=${JSON.stringify(value)} was accepted: ${JSON.stringify(answer.json)}`);
  return answer.json;
}

describe('with the environment importable', async () => {
  const { root } = fixtureRoot();
  const apiPort = 18650;
  const h = await connectInMemory({ TINKER_ATROPOS_ROOT: root, RL_API_PORT: String(apiPort) });

  test('tools/list shows the three tools in Hermes order with schemas and annotations', async () => {
    const { tools } = await h.client.listTools();
    const names = tools.map((t) => t.name);
    const at = names.indexOf('rl_list_environments');
    assert.deepEqual(names.slice(at, at + 4), ['rl_list_environments', 'rl_select_environment', 'rl_get_current_config', 'rl_edit_config']);
    const annotations = (name: string): unknown => {
      const { readOnlyHint, destructiveHint, idempotentHint, openWorldHint } = tools.find((t) => t.name === name)!.annotations!;
      return { readOnlyHint, destructiveHint, idempotentHint, openWorldHint };
    };
    const mutating = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false };
    assert.deepEqual(annotations('rl_select_environment'), mutating);
    assert.deepEqual(annotations('rl_edit_config'), mutating);
    assert.deepEqual(annotations('rl_get_current_config'), { ...mutating, readOnlyHint: true });
    for (const name of names.slice(at + 1, at + 4)) {
      const tool = tools.find((t) => t.name === name)!;
      assert.equal(tool.outputSchema?.type, 'object', name);
      assert.equal((tool.inputSchema as { additionalProperties?: boolean }).additionalProperties, false, name);
    }
  });

  test('nothing selected: get and edit say to select first', async () => {
    for (const [name, args] of [['rl_get_current_config', {}], ['rl_edit_config', { field: 'group_size', value: 8 }]] as const) {
      const answer = await h.call(name, args);
      assert.equal(answer.isError, true);
      assert.match(answer.json.error, /No environment selected\. Use rl_select_environment\(name\) first/);
    }
  });

  test('an unknown name lists the available environments', async () => {
    const answer = await h.call('rl_select_environment', { name: 'nope' });
    assert.equal(answer.isError, true);
    assert.ok(Array.isArray(answer.json.available) && answer.json.available.includes('typed'), JSON.stringify(answer.json));
  });

  test('select loads config_init() values, fixes batch_size and stamps wandb_name', async () => {
    const selected = await h.call('rl_select_environment', { name: 'typed' });
    assert.equal(selected.isError, false, JSON.stringify(selected.json));
    const s = selected.json;
    assert.equal(s.environment, 'typed');
    assert.equal(s.introspection, 'import');
    assert.equal(s.import_error, undefined);
    assert.equal(s.config_class, 'TypedConfig');
    assert.match(s.file_path, /typed_env\.py$/);
    assert.equal(s.configurable_fields + s.locked_fields, 29 + 8);
    assert.match(s.message, /batch_size was -1.*128/);

    const { editable, locked } = await currentConfig(h);
    assert.equal(editable.size, s.configurable_fields);
    // config_init() values win over the class defaults (Hermes showed group_size 4, batch_size -1).
    assert.deepEqual([editable.get('group_size')!.current_value, editable.get('group_size')!.default], [16, 4]);
    assert.equal(editable.get('batch_size')!.current_value, 128);
    assert.equal(editable.get('count')!.current_value, 7);
    assert.equal(editable.get('mode')!.current_value, 'slow');
    assert.equal(editable.get('seed')!.current_value, 99);
    assert.deepEqual(editable.get('tags')!.current_value, ['a']);
    assert.match(String(editable.get('wandb_name')!.current_value), /^typed-\d{8}-\d{6}$/);
    assert.deepEqual(editable.get('count'), { name: 'count', type: 'int', default: 3, description: 'How many', current_value: 7, allowed: '1..10' });
    assert.equal(editable.get('mode')!.type, 'Mode');
    assert.equal(editable.get('mode')!.allowed, 'one of fast, slow');
    assert.equal(editable.get('seed')!.type, 'Optional[int]');
    assert.equal(editable.get('tags')!.type, 'List[str]');
    assert.equal(editable.get('weights')!.type, 'Dict[str, float]');
    assert.equal(editable.get('eval_handling')!.type, 'EvalHandlingEnum');
    assert.equal(editable.get('max_reasoning_tokens')!.allowed, '1024..32000');
    // A bound the schema leaves out comes from the known table.
    assert.equal(editable.get('group_size')!.allowed, '>= 1');

    assert.deepEqual([locked.get('total_steps')!.current_value, locked.get('total_steps')!.locked_value, locked.get('total_steps')!.type], [2500, 2500, 'int']);
    assert.equal(locked.get('rollout_server_url')!.locked_value, `http://127.0.0.1:${apiPort}`);
    assert.ok(!editable.has('total_steps') && !editable.has('tokenizer_name'));
  });

  test('edit -> get round trip with every type', async () => {
    const cases: Array<[string, unknown, unknown]> = [
      ['group_size', '32', 32],
      ['count', 10, 10],
      ['ratio', '0.25', 0.25],
      ['ratio', 1, 1],
      ['flag', 'true', true],
      ['include_messages', 1, true],
      ['ensure_scores_are_not_same', 'off', false],
      ['label', 'hello', 'hello'],
      ['mode', 'FAST', 'fast'],
      ['eval_handling', 'limit_train', 'LIMIT_TRAIN'],
      ['reasoning_effort', 'High', 'high'],
      ['reasoning_effort', 'none', 'none'],
      ['seed', 42, 42],
      ['seed', null, null],
      ['max_reasoning_tokens', '2048', 2048],
      ['max_reasoning_tokens', 'None', null],
      ['min_batch_allocation', 0.2, 0.2],
      ['num_rollouts_per_group_for_logging', -1, -1],
      ['tags', ['x', 'y'], ['x', 'y']],
      ['tags', '["z"]', ['z']],
      ['weights', { a: '0.5', b: 2 }, { a: 0.5, b: 2 }],
      ['weights', '{"c": 1.5}', { c: 1.5 }],
      ['data_path_to_save_groups', 'out/groups.jsonl', 'out/groups.jsonl'],
      ['wandb_name', 'my-run', 'my-run'],
    ];
    for (const [field, value, stored] of cases) {
      const answer = await edit(h, field, value);
      assert.deepEqual(answer.value, stored, field);
      assert.equal(answer.field, field);
      assert.equal(answer.message, `Updated ${field} = ${JSON.stringify(stored)}`);
      assert.deepEqual(answer.config[field], stored, `${field} in config`);
      assert.equal(answer.config.total_steps, undefined, 'config holds editable fields only');
      const { editable } = await currentConfig(h);
      assert.deepEqual(editable.get(field)!.current_value, stored, `${field} after get`);
    }
  });

  test('wrong types and out-of-range values are refused with what is expected', async () => {
    const cases: Array<[string, unknown, RegExp, RegExp]> = [
      ['group_size', 3.5, /not an integer/, /^int: an integer >= 1$/],
      ['group_size', true, /not an integer/, /integer/],
      ['group_size', 'abc', /not an integer/, /integer/],
      ['group_size', 0, /out of range/, />= 1/],
      ['count', 11, /out of range/, /^int: an integer 1\.\.10$/],
      ['ratio', 1.5, /out of range/, /0\.\.1/],
      ['ratio', 'half', /not a number/, /a number/],
      ['flag', 'maybe', /not a boolean/, /true or false/],
      ['label', true, /not a string/, /a string/],
      ['label', null, /null is not allowed/, /^str: a string$/],
      ['mode', 'medium', /not one of/, /one of fast, slow/],
      ['reasoning_effort', 'extreme', /not one of/, /none, minimal, low, medium, high, xhigh/],
      ['max_reasoning_tokens', 100, /out of range/, /1024\.\.32000, or null to unset/],
      ['num_rollouts_per_group_for_logging', 0, /out of range/, /-1 or >= 1/],
      ['min_batch_allocation', -0.1, /out of range/, /0\.\.1/],
      ['tags', [true], /item 0: true is not a string/, /JSON array of str items/],
      ['tags', 'not json', /not a JSON array/, /JSON array/],
      ['weights', [1], /not a JSON object/, /JSON object with float values/],
      ['weights', { a: 'x' }, /key "a": "x" is not a number/, /float values/],
      ['wandb_project', 'bad/name', /not a W&B project name/, /letters, digits/],
      ['wandb_project', '', /not a W&B project name/, /1\.\.128 characters/],
    ];
    const before = (await currentConfig(h)).json;
    for (const [field, value, error, expected] of cases) {
      const json = await refused(h, field, value);
      assert.match(json.error, new RegExp(`^Invalid value for '${field}': `));
      assert.match(json.error, error, `${field}=${JSON.stringify(value)}: ${json.error}`);
      assert.match(json.expected, expected, `${field}: ${json.expected}`);
    }
    assert.deepEqual((await currentConfig(h)).json, before, 'refused edits change nothing');
  });

  test('unknown and locked fields are refused with their hint fields', async () => {
    const unknown = await refused(h, 'groupsize', 8);
    assert.equal(unknown.error, "Unknown field 'groupsize'. Did you mean 'group_size'?");
    assert.equal(unknown.did_you_mean, 'group_size');
    assert.ok(unknown.available_fields.includes('group_size') && unknown.available_fields.includes('wandb_project'));
    assert.ok(!unknown.available_fields.includes('total_steps'), 'locked fields are not offered');

    const far = await refused(h, 'zzzzzzzz', 1);
    assert.equal(far.did_you_mean, undefined);
    assert.ok(Array.isArray(far.available_fields));

    // Names every JS object inherits are unknown fields like any other, not "locked".
    for (const field of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const json = await refused(h, field, 1);
      assert.match(json.error, new RegExp(`^Unknown field '${field}'`), json.error);
      assert.ok(Array.isArray(json.available_fields));
    }

    for (const [field, lockedValue] of [
      ['total_steps', 2500],
      ['tokenizer_name', 'Qwen/Qwen3-8B'],
      ['use_wandb', true],
      ['rollout_server_url', `http://127.0.0.1:${apiPort}`],
    ] as const) {
      const json = await refused(h, field, 1);
      assert.match(json.error, new RegExp(`^Field '${field}' is locked and cannot be changed`));
      assert.deepEqual(json.locked_value, lockedValue);
    }
    // The trainer's and inference server's locked settings are named as locked, not unknown.
    for (const [field, section, lockedValue] of [
      ['lora_rank', 'tinker', 32],
      ['learning_rate', 'tinker', 0.00004],
      ['model_name', 'openai', 'Qwen/Qwen3-8B'],
    ] as const) {
      const json = await refused(h, field, 1);
      assert.match(json.error, new RegExp(`^Field '${field}' is locked: ${section}\\.${field} is set by the operator`));
      assert.deepEqual(json.locked_value, lockedValue);
    }
  });

  test('wandb_project is a run-level field', async () => {
    assert.equal((await currentConfig(h)).json.wandb_project, 'atropos-tinker');
    const answer = await edit(h, 'wandb_project', 'my-project_2');
    assert.equal(answer.wandb_project, 'my-project_2');
    assert.equal(answer.config.wandb_project, undefined);
    assert.equal((await currentConfig(h)).json.wandb_project, 'my-project_2');
    assert.equal(h.runtime.selection.requireSelection().wandbProject, 'my-project_2');
  });

  test('selecting again resets to the config_init() values', async () => {
    await edit(h, 'count', 2);
    await h.call('rl_select_environment', { name: 'typed' });
    const { editable, json } = await currentConfig(h);
    assert.equal(editable.get('count')!.current_value, 7);
    assert.equal(json.wandb_project, 'atropos-tinker');
  });

  test('an edited file is introspected again', async () => {
    const file = h.runtime.selection.requireSelection().environment.file_path;
    writeFileSync(file, TYPED_ENV.replace('DEFAULT_COUNT = 7', 'DEFAULT_COUNT = 9  # edited'));
    await h.call('rl_select_environment', { name: 'typed' });
    assert.equal((await currentConfig(h)).editable.get('count')!.current_value, 9);
  });

  test('a pydantic v1 config class works', async () => {
    const selected = await h.call('rl_select_environment', { name: 'old' });
    assert.equal(selected.isError, false, JSON.stringify(selected.json));
    assert.equal(selected.json.introspection, 'import');
    assert.equal(selected.json.config_class, 'OldConfig');
    const { editable } = await currentConfig(h);
    assert.deepEqual([...editable.keys()].sort(), ['choice', 'group_size', 'maybe']);
    assert.deepEqual(editable.get('group_size'), { name: 'group_size', type: 'int', default: 4, description: 'Group size', current_value: 5, allowed: '>= 1' });
    assert.equal(editable.get('choice')!.type, "Literal['a', 'b']");
    assert.equal((await edit(h, 'choice', 'B')).value, 'b');
    assert.equal((await edit(h, 'maybe', '0.5')).value, 0.5);
    assert.equal((await edit(h, 'maybe', null)).value, null);
    assert.match((await refused(h, 'choice', 'c')).expected, /one of a, b/);
    assert.match((await refused(h, 'group_size', 0)).expected, />= 1/);
  });

  test('bad input is refused with a clear message and the next call is answered', async () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['rl_select_environment', {}, /name/],
      ['rl_select_environment', { name: 'typed', extra: 1 }, /extra|Unrecognized/i],
      ['rl_select_environment', { name: 'x'.repeat(200) }, /128|too big|too long/i],
      ['rl_select_environment', { name: 42 }, /string/],
      ['rl_select_environment', { name: '' }, /name/],
      ['rl_select_environment', { name: 'tinker_atropos/environments/typed_env' }, /not a path/],
      ['rl_select_environment', { name: '..' }, /not a path/],
      ['rl_select_environment', { name: 'typed\u0000' }, /not a path/],
      ['rl_get_current_config', { verbose: true }, /Unrecognized|verbose/i],
      ['rl_edit_config', { field: 'group_size' }, /value is required/],
      ['rl_edit_config', { value: 3 }, /field/],
      ['rl_edit_config', { field: 'group_size', value: 3, force: true }, /Unrecognized|force/i],
      ['rl_edit_config', { field: 7, value: 3 }, /string/],
      ['rl_edit_config', { field: 'x'.repeat(200), value: 3 }, /128|too big|too long/i],
      ['rl_edit_config', { field: 'label', value: 'x'.repeat(70_000) }, /too large/],
    ];
    for (const [name, args, message] of cases) {
      const answer = await h.call(name, args);
      assert.equal(answer.isError, true, `${name} ${JSON.stringify(args).slice(0, 80)} was accepted`);
      assert.match(answer.json.error, message, `${name}: ${answer.json.error}`);
      const next = await h.call('rl_select_environment', { name: 'typed' });
      assert.equal(next.isError, false, 'the next call is answered normally');
    }
  });
});

describe('with atroposlib missing', async () => {
  const { root } = fixtureRoot();
  const h = await connectInMemory({ TINKER_ATROPOS_ROOT: root, PYTHONPATH: tempDir('rlmcp-empty-') });

  test('the static fallback lists the known fields and the environment\'s own, with config_init literals', async () => {
    const selected = await h.call('rl_select_environment', { name: 'typed' });
    assert.equal(selected.isError, false, JSON.stringify(selected.json));
    assert.equal(selected.json.introspection, 'static');
    assert.equal(selected.json.import_error, "ModuleNotFoundError: No module named 'atroposlib'");
    assert.equal(selected.json.config_class, 'TypedConfig');
    assert.equal(selected.json.configurable_fields + selected.json.locked_fields, 29 + 8);

    const { editable, locked } = await currentConfig(h);
    assert.deepEqual(editable.get('count'), { name: 'count', type: 'int', default: 3, description: 'How many', current_value: 7, allowed: '1..10' });
    assert.deepEqual(
      ['mode', 'seed', 'tags', 'weights', 'flag'].map((n) => [editable.get(n)!.type, editable.get(n)!.current_value]),
      [
        ['Mode', 'slow'],
        ['Optional[int]', 99],
        ['List[str]', ['a']],
        ['Dict[str, float]', {}],
        ['bool', false],
      ],
    );
    assert.equal(editable.get('group_size')!.current_value, 16);
    assert.equal(editable.get('batch_size')!.current_value, 128);
    assert.equal(editable.get('eval_handling')!.type, 'EvalHandlingEnum');
    assert.equal(locked.get('max_token_length')!.locked_value, 8192);

    assert.equal((await edit(h, 'mode', 'Fast')).value, 'fast');
    assert.equal((await edit(h, 'eval_handling', 'none')).value, 'NONE');
    assert.match((await refused(h, 'count', 0)).expected, /1\.\.10/);
  });

  test('a pydantic v1 config class is read from source too', async () => {
    const selected = await h.call('rl_select_environment', { name: 'old' });
    assert.equal(selected.json.introspection, 'static');
    const { editable } = await currentConfig(h);
    assert.equal(editable.get('group_size')!.current_value, 5);
    assert.ok(editable.has('choice') && editable.has('ensure_scores_are_not_same'));
  });
});

test('an import that hangs is cut off and the source is read instead', async () => {
  const { root } = fixtureRoot();
  const h = await connectInMemory({ TINKER_ATROPOS_ROOT: root, RL_INTROSPECT_TIMEOUT_SECONDS: '2' });
  const selected = await h.call('rl_select_environment', { name: 'slow' });
  assert.equal(selected.isError, false, JSON.stringify(selected.json));
  assert.equal(selected.json.introspection, 'static');
  assert.match(selected.json.import_error, /did not finish within 2 s/);
  assert.match(selected.json.message, /read from its source/);
  assert.equal((await currentConfig(h)).editable.get('group_size')!.current_value, 4);
  await h.close();
});

test('a process the environment leaves behind neither holds the answer nor outlives it', { timeout: 90_000 }, async () => {
  const { root, envDir } = fixtureRoot();
  writeFileSync(join(envDir, 'spawning_env.py'), SPAWNING_ENV);
  const pidFile = join(envDir, 'worker.pid');
  after(() => {
    const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : 0;
    if (pid > 0 && isAlive(pid)) process.kill(pid, 'SIGKILL');
  });
  const h = await connectInMemory({ TINKER_ATROPOS_ROOT: root });
  const selected = await h.call('rl_select_environment', { name: 'spawning' });
  assert.equal(selected.isError, false, JSON.stringify(selected.json));
  assert.equal(selected.json.introspection, 'import');
  assert.equal((await currentConfig(h)).editable.get('group_size')!.current_value, 6);
  const worker = Number(readFileSync(pidFile, 'utf8'));
  await waitUntil("the introspection helper's background process is stopped with it", () => !isAlive(worker), 10);
  await h.close();
});

test('RL_MCP_CONFIG can lock a field and unlock another', async () => {
  const { root } = fixtureRoot();
  const configFile = join(tempDir(), 'rl.yaml');
  writeFileSync(configFile, 'locked:\n  env:\n    group_size: 32\nunlocked:\n  - total_steps\n');
  const h = await connectInMemory({ TINKER_ATROPOS_ROOT: root, RL_MCP_CONFIG: configFile });
  await h.call('rl_select_environment', { name: 'typed' });
  const { editable, locked } = await currentConfig(h);
  assert.equal(locked.get('group_size')!.locked_value, 32);
  assert.equal(editable.get('total_steps')!.current_value, 1000);
  assert.equal((await edit(h, 'total_steps', '200')).value, 200);
  assert.deepEqual((await refused(h, 'group_size', 8)).locked_value, 32);
  await h.close();
});

test('the bundled gsm8k example answers with its config_init() values', async () => {
  const h = await connectInMemory();
  const selected = await h.call('rl_select_environment', { name: 'gsm8k' });
  assert.equal(selected.isError, false, JSON.stringify(selected.json));
  assert.equal(selected.json.introspection, 'import');
  const { editable } = await currentConfig(h);
  assert.equal(editable.get('group_size')!.current_value, 16);
  assert.equal(editable.get('batch_size')!.current_value, 128);
  await h.close();
});
