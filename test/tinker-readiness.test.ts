/**
 * Which environments can train on Tinker, known before anything is paid for: the source reading
 * behind rl_list_environments (managed_server through the class itself, a `_helper.py` module or a
 * base class in another file; config_init's server configs), the import-based reading behind
 * rl_select_environment (fake atroposlib on PYTHONPATH), a helper edited alone, the bundled
 * examples, and the pure judgement both feed.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { serverEntriesNeeded, tinkerProblems, type TinkerFacts } from '../src/runtime/environments/tinkerReadiness.js';
import { connectInMemory } from './helpers/client.js';
import { tempDir } from './helpers/tmp.js';

const MANAGED_ROLLOUT = `
    async def collect_trajectories(self, item):
        async with self.server.managed_server(tokenizer=self.tokenizer) as managed:
            await managed.chat_completion(messages=[], n=self.config.group_size)
        return None, []
`;

/** A config_init returning a default config and `servers` as the server configs. */
const configInit = (servers: string): string => `
    @classmethod
    def config_init(cls):
        return BaseEnvConfig(), ${servers}
`;

const HELPER = `from atroposlib.envs.base import APIServerConfig


def server_list():
    servers = [APIServerConfig(base_url="http://localhost:8001/v1", server_type="sglang")]
    return servers


async def sample(env, messages):
    async with env.server.managed_server(tokenizer=env.tokenizer) as managed:
        return await managed.chat_completion(messages=messages, n=env.config.group_size)
`;

/** The helper after an edit that drops managed_server: only this file changes. */
const HELPER_UNMANAGED = HELPER.replace('async with env.server.managed_server(tokenizer=env.tokenizer) as managed:\n        return await managed', 'return await env.server');

const FILES: Record<string, string> = {
  'direct_managed.py': `from atroposlib.envs.base import APIServerConfig, BaseEnv, BaseEnvConfig


class DirectManaged(BaseEnv):
    name = "direct_managed"
${configInit('[APIServerConfig(base_url="http://localhost:8001/v1")]')}${MANAGED_ROLLOUT}`,
  '_helper.py': HELPER,
  'via_helper.py': `from atroposlib.envs.base import BaseEnv, BaseEnvConfig

from _helper import sample, server_list


class ViaHelper(BaseEnv):
    name = "via_helper"
${configInit('server_list()')}
    async def collect_trajectories(self, item):
        return await sample(self, []), []
`,
  'shared/managed_base.py': `from atroposlib.envs.base import BaseEnv


class ManagedBase(BaseEnv):
    """Samples for its subclasses."""
${MANAGED_ROLLOUT}`,
  'from_base.py': `from atroposlib.envs.base import BaseEnvConfig, ServerBaseline

from shared.managed_base import ManagedBase


class FromBase(ManagedBase):
    name = "from_base"
${configInit('ServerBaseline()')}`,
  'unmanaged.py': `"""Samples with chat_completion: this docstring naming managed_server is no use of it."""
from atroposlib.envs.base import APIServerConfig, BaseEnv, BaseEnvConfig


class Unmanaged(BaseEnv):
    """Would need managed_server to train on Tinker."""

    name = "unmanaged"

    @classmethod
    def config_init(cls):
        env_config = BaseEnvConfig()
        server_config = APIServerConfig(base_url="http://localhost:9001/v1")
        return env_config, server_config

    async def collect_trajectories(self, item):
        # managed_server would carry the logprobs
        await self.server.chat_completion(messages=[], n=1, extra="managed_server")
        return None, []


class ManagedNeighbour(BaseEnv):
    name = "managed_neighbour"

    @classmethod
    def servers(cls):
        return [APIServerConfig()]
${configInit('cls.servers()')}${MANAGED_ROLLOUT}`,
  'defaults.py': `from atroposlib.envs.base import BaseEnv


class Defaults(BaseEnv):
    name = "defaults"
`,
};

interface Expected {
  source: TinkerFacts;
  imported: TinkerFacts;
  problems: string[];
}

const EXPECTED: Record<string, Expected> = {
  direct_managed: { source: { managed_server: true, server_configs: 'list' }, imported: { managed_server: true, server_configs: 'list' }, problems: [] },
  via_helper: { source: { managed_server: true, server_configs: 'list' }, imported: { managed_server: true, server_configs: 'list' }, problems: [] },
  from_base: { source: { managed_server: true, server_configs: 'single' }, imported: { managed_server: true, server_configs: 'baseline' }, problems: ['single_server_config'] },
  unmanaged: { source: { managed_server: false, server_configs: 'single' }, imported: { managed_server: false, server_configs: 'single' }, problems: ['no_managed_server', 'single_server_config'] },
  // A classmethod call is beyond the source reading; the import tells.
  managed_neighbour: { source: { managed_server: true, server_configs: 'unknown' }, imported: { managed_server: true, server_configs: 'list' }, problems: [] },
  // BaseEnv's own config_init returns a bare ServerBaseline().
  defaults: { source: { managed_server: false, server_configs: 'single' }, imported: { managed_server: false, server_configs: 'baseline' }, problems: ['no_managed_server', 'single_server_config'] },
};

function fixture(): { root: string; envs: string } {
  const root = tempDir('rlmcp-ready-');
  const envs = join(root, 'tinker_atropos', 'environments');
  for (const [rel, text] of Object.entries(FILES)) {
    mkdirSync(dirname(join(envs, rel)), { recursive: true });
    writeFileSync(join(envs, rel), text);
  }
  return { root, envs };
}

type Listing = Record<string, any>;

async function listing(call: (name: string) => Promise<{ isError: boolean; json: Listing }>): Promise<{ byName: Map<string, Listing>; json: Listing }> {
  const { isError, json } = await call('rl_list_environments');
  assert.equal(isError, false, JSON.stringify(json));
  return { byName: new Map(json.environments.map((e: Listing) => [e.name, e])), json };
}

describe('read from source by discovery', async () => {
  const { root, envs } = fixture();
  const home = join(tempDir('rlmcp-home-'), 'rl_training');
  const h = await connectInMemory({ TINKER_ATROPOS_ROOT: root, RL_HOME: home });

  test('each environment carries managed_server, server_configs and its problem codes', async () => {
    const { byName, json } = await listing(h.call);
    assert.deepEqual([...byName.keys()].sort(), Object.keys(EXPECTED).sort(), 'the _helper module is read, never offered');
    for (const [name, want] of Object.entries(EXPECTED)) {
      const env = byName.get(name)!;
      assert.deepEqual({ managed_server: env.managed_server, server_configs: env.server_configs }, want.source, name);
      assert.deepEqual(env.tinker_problems, want.problems, name);
    }
    assert.deepEqual(Object.keys(json.problem_details).sort(), ['no_managed_server', 'single_server_config']);
    assert.equal(json.problem_details.no_managed_server.blocking, true);
    assert.match(json.problem_details.no_managed_server.message, /Error in step 0: 'NoneType' object is not subscriptable/);
    assert.match(json.problem_details.no_managed_server.fix, /RL_ALLOW_UNMANAGED_ENVIRONMENTS/);
    assert.equal(json.problem_details.single_server_config.blocking, false);
    assert.ok(json.tips.some((t: string) => /2 of these cannot train on Tinker/.test(t)), JSON.stringify(json.tips));
    assert.deepEqual(json.abstract.map((a: Listing) => a.class_name), ['ManagedBase']);
  });

  test('editing only the helper module changes the flag, in a running server and after a restart', async () => {
    assert.doesNotMatch(HELPER_UNMANAGED, /managed_server/);
    writeFileSync(join(envs, '_helper.py'), HELPER_UNMANAGED);
    const edited = (await listing(h.call)).byName.get('via_helper')!;
    assert.equal(edited.managed_server, false);
    assert.deepEqual(edited.tinker_problems, ['no_managed_server']);
    await h.close();

    writeFileSync(join(envs, '_helper.py'), HELPER);
    const restarted = await connectInMemory({ TINKER_ATROPOS_ROOT: root, RL_HOME: home });
    const back = (await listing(restarted.call)).byName.get('via_helper')!;
    assert.equal(back.managed_server, true, 'the persisted cache kept a stale flag');
    assert.deepEqual(back.tinker_problems, []);
  });
});

describe('read from the import at selection', async () => {
  const { root, envs } = fixture();
  const h = await connectInMemory({ TINKER_ATROPOS_ROOT: root });

  for (const [name, want] of Object.entries(EXPECTED)) {
    test(`${name}: the imported facts and their problems`, async () => {
      const { isError, json } = await h.call('rl_select_environment', { name });
      assert.equal(isError, false, JSON.stringify(json));
      assert.equal(json.introspection, 'import');
      assert.deepEqual({ managed_server: json.managed_server, server_configs: json.server_configs }, want.imported);
      assert.deepEqual(
        json.tinker_problems.map((p: Listing) => p.code),
        want.problems,
      );
      for (const p of json.tinker_problems) assert.ok(p.message.length > 0 && p.fix.length > 0);
      if (want.problems.includes('no_managed_server')) {
        assert.match(json.message, /cannot train on Tinker.*managed_server\(tokenizer=.*RL_ALLOW_UNMANAGED_ENVIRONMENTS/);
      } else {
        assert.doesNotMatch(json.message, /cannot train on Tinker/);
      }
    });
  }

  test('editing only the helper module changes the answer of the next selection', async () => {
    writeFileSync(join(envs, '_helper.py'), HELPER_UNMANAGED);
    const { json } = await h.call('rl_select_environment', { name: 'via_helper' });
    assert.equal(json.introspection, 'import');
    assert.equal(json.managed_server, false, 'a cached import answer outlived the helper it was read from');
    assert.deepEqual(
      json.tinker_problems.map((p: Listing) => p.code),
      ['no_managed_server'],
    );
  });
});

test('when the import fails, selection carries what discovery read from the source', async () => {
  const { root } = fixture();
  const h = await connectInMemory({ TINKER_ATROPOS_ROOT: root, PYTHONPATH: tempDir('rlmcp-empty-') });
  const { json } = await h.call('rl_select_environment', { name: 'from_base' });
  assert.equal(json.introspection, 'static');
  assert.deepEqual({ managed_server: json.managed_server, server_configs: json.server_configs }, EXPECTED.from_base!.source);
  assert.deepEqual(
    json.tinker_problems.map((p: Listing) => p.code),
    ['single_server_config'],
  );
});

test('the bundled examples all sample through managed_server and return a list of server configs', async () => {
  const h = await connectInMemory({}, tempDir());
  const { byName, json } = await listing(h.call);
  assert.ok(byName.size >= 3);
  for (const [name, env] of byName) {
    assert.deepEqual([env.managed_server, env.server_configs, env.tinker_problems], [true, 'list', []], name);
  }
  assert.deepEqual(json.problem_details, {});
  for (const name of byName.keys()) {
    const selected = await h.call('rl_select_environment', { name });
    assert.equal(selected.json.introspection, 'import', name);
    assert.deepEqual([selected.json.managed_server, selected.json.server_configs, selected.json.tinker_problems], [true, 'list', []], name);
  }
});

test('tinkerProblems and serverEntriesNeeded', () => {
  const codes = (facts: TinkerFacts): string[] => tinkerProblems(facts).map((p) => p.code);
  assert.deepEqual(codes({ managed_server: true, server_configs: 'list' }), []);
  assert.deepEqual(codes({ managed_server: true, server_configs: 'unknown' }), []);
  assert.deepEqual(codes({ managed_server: true, server_configs: 'single' }), ['single_server_config']);
  assert.deepEqual(codes({ managed_server: true, server_configs: 'baseline' }), ['single_server_config']);
  assert.deepEqual(codes({ managed_server: false, server_configs: 'list' }), ['no_managed_server']);

  const [unmanaged, single] = tinkerProblems({ managed_server: false, server_configs: 'single' });
  assert.equal(unmanaged!.blocking, true);
  assert.match(unmanaged!.message, /inference_logprobs.*step 0.*paid/s);
  assert.match(unmanaged!.fix, /self\.server\.managed_server\(tokenizer=self\.tokenizer\).*gsm8k_tinker\.py.*RL_ALLOW_UNMANAGED_ENVIRONMENTS/s);
  assert.equal(single!.blocking, false);
  assert.match(single!.message, /localhost:9004\.\.9007.*two or more/s);
  assert.match(single!.fix, /two `openai:` entries/);

  assert.deepEqual(
    (['list', 'single', 'baseline', 'unknown'] as const).map(serverEntriesNeeded),
    [1, 2, 2, 2],
  );
});
