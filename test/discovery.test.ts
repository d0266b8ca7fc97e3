/**
 * Environment discovery through rl_list_environments and runtime.environments: a fixture tree with
 * every base-class shape, files that must be ignored or skipped, a file that must never be
 * imported, re-scans after changes, the persisted cache, and a broken interpreter.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { UserError } from '../src/core/errors.js';
import { discoveryCachePath as parseCachePath } from '../src/core/files/home.js';
import { BUNDLED_EXAMPLES_ROOT } from '../src/core/files/paths.js';
import { connectInMemory } from './helpers/client.js';
import { pythonOnPath, tempDir } from './helpers/tmp.js';

const IMPORT = 'from atroposlib.envs.base import BaseEnv, BaseEnvConfig\n';

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

interface Fixture {
  root: string;
  envs: string;
  extra: string;
  marker: string;
}

/** The acceptance tree: `root/tinker_atropos/environments` plus one RL_ENVIRONMENTS_DIRS entry. */
function fixtureTree(): Fixture {
  const root = tempDir('rlmcp-disc-');
  const envs = join(root, 'tinker_atropos', 'environments');
  const extra = join(root, 'extra_envs');
  const marker = join(root, 'IMPORTED');
  const files: Record<string, string> = {
    'direct.py': `${IMPORT}\n\nclass DirectEnv(BaseEnv):\n    """Direct subclass of BaseEnv.\n\n    More text."""\n\n    name = "direct"\n`,
    'shared/base_qa.py': `${IMPORT}\n\nclass QAConfig(BaseEnvConfig):\n    topic: str = "math"\n\n\nclass QABase(BaseEnv):\n    """Shared question-answer logic."""\n\n    env_config_cls = QAConfig\n`,
    'chained.py': `from tinker_atropos.environments.shared.base_qa import QABase\n\n\nclass ChainedEnv(QABase):\n    name = "chained"\n`,
    'relative_child.py': `from .shared import base_qa\n\n\nclass RelEnv(base_qa.QABase):\n    name = "relative"\n`,
    // `..helpers` is pkg/helpers.py, not the nearer pkg/sub/helpers.py with a class of the same name.
    'pkg/helpers.py': `${IMPORT}\n\nclass PkgBase(BaseEnv):\n    pass\n`,
    'pkg/sub/helpers.py': `class PkgBase(dict):\n    pass\n`,
    'pkg/sub/up_child.py': `from ..helpers import PkgBase\n\n\nclass UpChild(PkgBase):\n    name = "up_relative"\n`,
    'star_child.py': `from tinker_atropos.environments.shared.base_qa import *\n\n\nclass StarEnv(QABase):\n    name = "star"\n`,
    'aliased.py': `from atroposlib.envs.base import BaseEnv as AtroposBaseEnv, BaseEnvConfig\n\n\nclass AliasedConfig(BaseEnvConfig):\n    pass\n\n\nclass AliasedEnv(AtroposBaseEnv):\n    name = "aliased"\n    env_config_cls = AliasedConfig\n`,
    'dotted.py': `import atroposlib.envs\nimport atroposlib.envs.base as base\n\n\nclass DottedEnv(base.BaseEnv):\n    name = "dotted"\n\n\nclass FullyDottedEnv(atroposlib.envs.BaseEnv):\n    name: str = "fully_dotted"\n`,
    'same_file.py': `${IMPORT}\n\nclass Local(BaseEnv):\n    pass\n\n\nclass LocalChild(Local):\n    name = "local_child"\n`,
    'stemmed_env.py': `"""Module docstring used as the description.\n\nDetails."""\n${IMPORT}\n\nclass StemmedEnv(BaseEnv):\n    pass\n`,
    'dup_a.py': `${IMPORT}\n\nclass DupA(BaseEnv):\n    name = "dup"\n`,
    'nested/dup_b.py': `${IMPORT}\n\nclass DupB(BaseEnv):\n    name = "dup"\n`,
    'nested/deeper/deep_env.py': `${IMPORT}\n\nclass DeepEnv(BaseEnv):\n    name = "deep"\n`,
    'not_env.py': `from pydantic import BaseModel\n\n\nclass Model(BaseModel):\n    name = "model"\n\n\nclass Lonely(SomethingElse):\n    name = "lonely"\n`,
    'broken.py': `${IMPORT}\n\nclass BrokenEnv(BaseEnv):\n    name = "broken"\n    def oops(self:\n`,
    'marker.py': `${IMPORT}\nopen(${JSON.stringify(marker)}, "w").write("imported")\nraise SystemExit("discovery must never import environment code")\n\n\nclass MarkerEnv(BaseEnv):\n    name = "marker"\n`,
    '_private.py': `${IMPORT}\n\nclass PrivateEnv(BaseEnv):\n    name = "private"\n`,
    '.hidden/hidden_env.py': `${IMPORT}\n\nclass HiddenEnv(BaseEnv):\n    name = "hidden"\n`,
    '__pycache__/cached_env.py': `${IMPORT}\n\nclass CachedEnv(BaseEnv):\n    name = "cached"\n`,
    'node_modules/pkg/node_env.py': `${IMPORT}\n\nclass NodeEnv(BaseEnv):\n    name = "node_modules_env"\n`,
    'venv/lib/site-packages/venv_env.py': `${IMPORT}\n\nclass VenvEnv(BaseEnv):\n    name = "venv_env"\n`,
    'myenv/pyvenv.cfg': 'home = /usr/bin\n',
    'myenv/lib/other_env.py': `${IMPORT}\n\nclass OtherVenvEnv(BaseEnv):\n    name = "other_venv_env"\n`,
    'README.md': '# not python\n',
  };
  for (const [rel, text] of Object.entries(files)) write(join(envs, rel), text);
  write(join(extra, 'extra_env.py'), `from direct import DirectEnv\n\n\nclass ExtraEnv(DirectEnv):\n    """Extends an environment from another directory."""\n`);
  return { root, envs, extra, marker };
}

const EXPECTED: Record<string, { class_name: string; config_class?: string; file?: string }> = {
  aliased: { class_name: 'AliasedEnv', config_class: 'AliasedConfig' },
  chained: { class_name: 'ChainedEnv', config_class: 'QAConfig' },
  deep: { class_name: 'DeepEnv', file: 'nested/deeper/deep_env.py' },
  direct: { class_name: 'DirectEnv' },
  dotted: { class_name: 'DottedEnv' },
  extra_env: { class_name: 'ExtraEnv' },
  fully_dotted: { class_name: 'FullyDottedEnv' },
  local_child: { class_name: 'LocalChild' },
  marker: { class_name: 'MarkerEnv' },
  relative: { class_name: 'RelEnv', config_class: 'QAConfig' },
  star: { class_name: 'StarEnv', config_class: 'QAConfig' },
  stemmed_env: { class_name: 'StemmedEnv' },
  up_relative: { class_name: 'UpChild' },
};

/** A python3 wrapper that counts its runs, to tell whether a listing did any Python work. */
function countingPython(dir: string): { python: string; runs: () => number } {
  const log = join(dir, 'python-runs.log');
  const python = join(dir, 'counting-python');
  writeFileSync(python, `#!/bin/sh\necho run >> ${JSON.stringify(log)}\nexec ${pythonOnPath()} "$@"\n`);
  chmodSync(python, 0o755);
  return { python, runs: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0) };
}

test('tools/list shows rl_list_environments with schemas and annotations', async () => {
  const { client } = await connectInMemory({ TINKER_ATROPOS_ROOT: fixtureTree().root });
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === 'rl_list_environments');
  assert.ok(tool, 'rl_list_environments is listed');
  // Every input is optional: the Hermes call without arguments lists the first page.
  assert.deepEqual(Object.keys(tool.inputSchema.properties ?? {}), ['search', 'limit', 'offset', 'framework']);
  assert.equal(tool.inputSchema.required, undefined);
  assert.ok((tool.outputSchema?.properties as Record<string, unknown> | undefined)?.environments);
  assert.equal(tool.annotations?.readOnlyHint, true);
  assert.equal(tool.annotations?.destructiveHint, false);
  assert.equal(tool.annotations?.idempotentHint, true);
  assert.equal(tool.annotations?.openWorldHint, false);
});

test('the fixture tree lists exactly the expected environments and reports the rest', async () => {
  const fx = fixtureTree();
  const { call } = await connectInMemory({ TINKER_ATROPOS_ROOT: fx.root, RL_ENVIRONMENTS_DIRS: fx.extra });
  const { isError, json } = await call('rl_list_environments');
  assert.equal(isError, false, JSON.stringify(json));

  const byName = new Map<string, any[]>();
  for (const env of json.environments) byName.set(env.name, [...(byName.get(env.name) ?? []), env]);
  assert.deepEqual([...byName.keys()].sort(), [...Object.keys(EXPECTED), 'dup'].sort());
  assert.equal(json.count, json.environments.length);
  assert.equal(json.count, Object.keys(EXPECTED).length + 2);
  for (const [name, want] of Object.entries(EXPECTED)) {
    const [env] = byName.get(name)!;
    assert.equal(env.class_name, want.class_name, name);
    assert.equal(env.config_class, want.config_class ?? 'BaseEnvConfig', name);
    if (want.file) assert.equal(env.file_path, join(fx.envs, want.file));
  }
  assert.equal(byName.get('extra_env')![0].file_path, join(fx.extra, 'extra_env.py'));

  // Descriptions: class docstring first line, else module docstring, else the file name.
  assert.equal(byName.get('direct')![0].description, 'Direct subclass of BaseEnv.');
  assert.equal(byName.get('stemmed_env')![0].description, 'Module docstring used as the description.');
  assert.equal(byName.get('chained')![0].description, 'Environment from chained.py');

  assert.deepEqual(json.duplicates, [{ name: 'dup', file_paths: [join(fx.envs, 'dup_a.py'), join(fx.envs, 'nested', 'dup_b.py')], select_as: ['DupA', 'DupB'] }]);
  assert.deepEqual(
    json.abstract.map((a: any) => a.class_name).sort(),
    ['Local', 'PkgBase', 'QABase'],
  );
  assert.equal(json.skipped.length, 1);
  assert.equal(json.skipped[0].file_path, join(fx.envs, 'broken.py'));
  assert.match(json.skipped[0].reason, /^SyntaxError: .+ \(line \d+\)$/);
  assert.deepEqual(json.searched, [fx.envs, fx.extra]);
  assert.ok(json.tips.some((t: string) => t.includes('rl_select_environment')));
  assert.equal(json.omitted, undefined);
  assert.equal(existsSync(fx.marker), false, 'marker.py was imported');
});

test('new, edited and deleted files are seen by the next listing', async () => {
  const fx = fixtureTree();
  const { call } = await connectInMemory({ TINKER_ATROPOS_ROOT: fx.root });
  const names = async (): Promise<string[]> => {
    const { isError, json } = await call('rl_list_environments');
    assert.equal(isError, false, JSON.stringify(json));
    return json.environments.map((e: any) => e.name);
  };
  const before = await names();
  assert.ok(before.includes('direct') && !before.includes('fresh'));

  write(join(fx.envs, 'later', 'fresh.py'), `${IMPORT}\n\nclass FreshEnv(BaseEnv):\n    name = "fresh"\n`);
  writeFileSync(join(fx.envs, 'direct.py'), `${IMPORT}\n\nclass DirectEnv(BaseEnv):\n    name = "direct_renamed"\n`);
  rmSync(join(fx.envs, 'nested', 'dup_b.py'));
  writeFileSync(join(fx.envs, 'broken.py'), `${IMPORT}\n\nclass FixedEnv(BaseEnv):\n    name = "fixed"\n`);

  const { json } = await call('rl_list_environments');
  const after = json.environments.map((e: any) => e.name);
  assert.ok(after.includes('fresh'), 'added file listed');
  assert.ok(after.includes('direct_renamed') && !after.includes('direct'), 'edited file re-read');
  assert.equal(after.filter((n: string) => n === 'dup').length, 1, 'deleted file gone');
  assert.deepEqual(json.duplicates, []);
  assert.ok(after.includes('fixed'));
  assert.deepEqual(json.skipped, []);
});

test('resolve: by name, by class name, ambiguous and unknown names', async () => {
  const fx = fixtureTree();
  const { runtime } = await connectInMemory({ TINKER_ATROPOS_ROOT: fx.root });
  const catalog = runtime.environments;
  assert.equal((await catalog.resolve('chained')).class_name, 'ChainedEnv');
  assert.equal((await catalog.resolve('StemmedEnv')).name, 'stemmed_env');
  assert.equal((await catalog.resolve('DupB')).file_path, join(fx.envs, 'nested', 'dup_b.py'));

  await assert.rejects(catalog.resolve('dup'), (err: unknown) => {
    assert.ok(err instanceof UserError);
    assert.match(err.message, /matches 2 environments.*class_name/);
    assert.deepEqual(err.hints.available, ['DupA', 'DupB']);
    assert.deepEqual(
      (err.hints.candidates as any[]).map((c) => [c.class_name, c.file_path]),
      [
        ['DupA', join(fx.envs, 'dup_a.py')],
        ['DupB', join(fx.envs, 'nested', 'dup_b.py')],
      ],
    );
    return true;
  });
  await assert.rejects(catalog.resolve('nope'), (err: unknown) => {
    assert.ok(err instanceof UserError);
    assert.match(err.message, /Unknown environment 'nope'.*rl_list_environments/);
    assert.ok((err.hints.available as string[]).includes('direct'));
    return true;
  });
  // Abstract bases are never offered.
  await assert.rejects(catalog.resolve('QABase'), UserError);
});

test('same class name in two files: select_as falls back to file.Class', async () => {
  const root = tempDir('rlmcp-disc-');
  const envs = join(root, 'tinker_atropos', 'environments');
  write(join(envs, 'one', 'math_env.py'), `${IMPORT}\n\nclass MathEnv(BaseEnv):\n    name = "math"\n`);
  write(join(envs, 'two', 'math_env.py'), `${IMPORT}\n\nclass MathEnv(BaseEnv):\n    name = "math"\n`);
  const { call, runtime } = await connectInMemory({ TINKER_ATROPOS_ROOT: root });
  const { json } = await call('rl_list_environments');
  assert.deepEqual(json.duplicates[0].select_as, ['one.math_env.MathEnv', 'two.math_env.MathEnv']);
  assert.equal((await runtime.environments.resolve('two.math_env.MathEnv')).file_path, join(envs, 'two', 'math_env.py'));
});

test('an unchanged tree is listed without Python, also after a restart; a corrupt cache is survived', async () => {
  const fx = fixtureTree();
  const home = join(tempDir('rlmcp-home-'), 'rl_training');
  const counter = countingPython(fx.root);
  const env = { TINKER_ATROPOS_ROOT: fx.root, RL_PYTHON: counter.python, RL_HOME: home };

  const first = await connectInMemory(env);
  const cold = await first.call('rl_list_environments');
  assert.equal(cold.isError, false, JSON.stringify(cold.json));
  const runsAfterCold = counter.runs();
  assert.ok(runsAfterCold >= 1);
  const warm = await first.call('rl_list_environments');
  assert.deepEqual(warm.json, cold.json);
  assert.equal(counter.runs(), runsAfterCold, 'a warm listing ran Python');
  await first.close();

  const restarted = await connectInMemory(env);
  assert.deepEqual((await restarted.call('rl_list_environments')).json, cold.json);
  assert.equal(counter.runs(), runsAfterCold, 'a restarted server parsed again despite the persisted cache');
  await restarted.close();

  // Well-formed JSON with entries of the wrong shape, then a truncated file: both are parsed again.
  const stored = JSON.parse(readFileSync(parseCachePath(home), 'utf8')) as { entries: any[][] };
  for (const entry of stored.entries) if (Array.isArray(entry[3].classes)) entry[3].classes = [{ name: 42 }];
  const damages = [JSON.stringify(stored), '{"version": 1, "entries": [['];
  for (const damaged of damages) {
    writeFileSync(parseCachePath(home), damaged);
    const runsBefore = counter.runs();
    const afterDamage = await connectInMemory(env);
    assert.deepEqual((await afterDamage.call('rl_list_environments')).json, cold.json);
    assert.ok(counter.runs() > runsBefore, 'a damaged cache did not lead to a fresh parse');
    await afterDamage.close();
    JSON.parse(readFileSync(parseCachePath(home), 'utf8')); // rewritten whole
  }
});

test('an interpreter that cannot run gives a clear error naming RL_PYTHON; the next call is answered', async () => {
  const fx = fixtureTree();
  const failing = join(fx.root, 'failing-python');
  writeFileSync(failing, '#!/bin/sh\necho "ImportError: broken interpreter install" >&2\nexit 3\n');
  chmodSync(failing, 0o755);
  for (const python of [join(fx.root, 'no', 'such', 'python3'), failing]) {
    const { call, client } = await connectInMemory({ TINKER_ATROPOS_ROOT: fx.root, RL_PYTHON: python });
    const first = await call('rl_list_environments');
    assert.equal(first.isError, true);
    assert.match(first.json.error, /RL_PYTHON/);
    assert.ok(first.json.error.includes(python));
    assert.equal(first.json.python, python);
    if (python === failing) assert.match(first.json.reason, /broken interpreter install/);
    else assert.match(first.json.reason, /no such interpreter/);
    const again = await call('rl_list_environments');
    assert.equal(again.isError, true);
    assert.equal(again.json.error, first.json.error);
    assert.ok((await client.listTools()).tools.length > 0);
  }
});

test('the bundled examples are listed when TINKER_ATROPOS_ROOT is unset', async () => {
  const { call, runtime } = await connectInMemory({}, tempDir());
  assert.equal(runtime.settings.root, BUNDLED_EXAMPLES_ROOT);
  const { isError, json } = await call('rl_list_environments');
  assert.equal(isError, false, JSON.stringify(json));
  const names = json.environments.map((e: any) => e.name);
  for (const name of ['gsm8k', 'word_sort']) assert.ok(names.includes(name), `${name} listed`);
  assert.ok(json.environments.some((e: any) => e.file_path.endsWith('countdown_tinker.py')));
  assert.ok(json.abstract.some((a: any) => a.class_name === 'SingleTurnQAEnv'));
  assert.ok(!names.includes('single_turn'));
  assert.deepEqual(json.skipped, []);
});
