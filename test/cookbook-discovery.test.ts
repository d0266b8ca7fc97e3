/**
 * Where RL_PYTHON's verifiers environments are found (python/cookbook_discover.py): an environment
 * installed the way pip, uv and `prime env install` install one (its module and a `.dist-info` in
 * the interpreter's site-packages), in a venv and in an interpreter that is not one; the standard
 * library is not scanned.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { COOKBOOK_DISCOVER_SCRIPT } from '../src/runtime/environments/cookbook.js';
import { pipInstall } from './helpers/fakeInstall.js';
import { pythonOnPath, REPO_ROOT, tempDir } from './helpers/tmp.js';

const run = promisify(execFile);

interface Discovered {
  environments: { module: string; file: string; vf_env_id: string; env_args: { name: string; default?: string }[] }[];
  stamps: [string, number, number][];
}

async function discover(python: string): Promise<Discovered> {
  const { stdout } = await run(python, [COOKBOOK_DISCOVER_SCRIPT], { cwd: REPO_ROOT });
  return JSON.parse(stdout) as Discovered;
}

async function pythonPaths(python: string): Promise<{ stdlib: string; platstdlib: string; purelib: string }> {
  const { stdout } = await run(python, ['-c', 'import json, os, sysconfig; print(json.dumps({k: os.path.realpath(v) for k, v in sysconfig.get_paths().items()}))']);
  return JSON.parse(stdout);
}

test('an environment pip installed into a venv\'s site-packages is listed; the standard library is not scanned', async () => {
  const venv = join(tempDir('rlmcp-vfenv-'), 'v');
  await run(pythonOnPath(), ['-m', 'venv', '--without-pip', venv]);
  const python = join(venv, 'bin', 'python');
  const paths = await pythonPaths(python);
  const sitePackages = paths.purelib;
  assert.equal(join(sitePackages, '..'), paths.platstdlib, "in a venv, site-packages' parent is sysconfig's platstdlib");
  pipInstall(sitePackages, 'my_env', '0.1.0', { 'my_env.py': '"""Reverse a string."""\nimport verifiers as vf\n\n\ndef load_environment(num_examples: int = 100, **kwargs):\n    return vf.SingleTurnEnv()\n' });
  pipInstall(sitePackages, 'word_count', '1.0.0', { 'word_count/__init__.py': 'def load_environment(split="train"):\n    pass\n' });

  const found = await discover(python);
  const byModule = Object.fromEntries(found.environments.map((e) => [e.module, e]));
  assert.deepEqual(byModule.my_env && [byModule.my_env.file, byModule.my_env.vf_env_id, byModule.my_env.env_args], [join(sitePackages, 'my_env.py'), 'my-env', [{ name: 'num_examples', default: '100' }]], JSON.stringify(found.environments));
  assert.equal(byModule.word_count?.vf_env_id, 'word-count', 'a package whose __init__.py defines load_environment');
  const scanned = found.stamps.map(([path]) => path);
  assert.ok(scanned.includes(sitePackages), 'the stamps cover site-packages: an install there is seen at the next listing');
  const stdlib = [paths.stdlib, join(paths.stdlib, 'lib-dynload')];
  assert.deepEqual(scanned.filter((p) => stdlib.some((s) => p === s || p.startsWith(`${s}/`)) && !p.startsWith(sitePackages)), [], 'nothing of the standard library is read');
});

test("an interpreter that is not a venv has its own site-packages scanned (the standard library's child), not the standard library", async () => {
  const python = pythonOnPath();
  const paths = await pythonPaths(python);
  assert.equal(join(paths.purelib, '..'), paths.stdlib, 'outside a venv, site-packages sits in the standard library folder');
  const found = await discover(python);
  const scanned = found.stamps.map(([path]) => path);
  assert.ok(scanned.includes(paths.purelib), JSON.stringify(scanned));
  assert.ok(!scanned.includes(paths.stdlib) && !scanned.some((p) => p.endsWith('/lib-dynload')), JSON.stringify(scanned));
  assert.ok(readdirSync(paths.purelib).length > 0);
});
