/**
 * What a user installs: `npm pack` (which builds, through prepack), the tarball installed
 * globally into an empty prefix, and the installed `rl-training-mcp` started from `/` the way a
 * client starts it, answering --version and tools/list.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { DASHBOARD_URI } from '../src/core/resourceUris.js';
import { callTool } from './helpers/client.js';
import { REPO_ROOT, tempDir, testEnv } from './helpers/tmp.js';

function run(command: string, args: string[], cwd: string): string {
  const res = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 300_000 });
  assert.equal(res.status, 0, `${command} ${args.join(' ')} failed:\n${res.stdout}\n${res.stderr}`);
  return res.stdout;
}

test('npm pack builds; the tarball installed with npm install -g starts from / and answers', async () => {
  const dir = tempDir();
  const [packed] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', dir], REPO_ROOT)) as Array<{ filename: string; files: Array<{ path: string }> }>;
  const shipped = packed!.files.map((f) => f.path);
  for (const path of ['dist/index.js', 'dist/keeper.js', 'README.md', 'package.json', 'python/run_trainer.py', 'clients/claude_desktop_config.json']) assert.ok(shipped.includes(path), `${path} is shipped`);
  assert.ok(shipped.some((p) => p.startsWith('python/') && p.endsWith('.py')), 'the Python helpers are shipped');
  assert.ok(shipped.includes('ui/dashboard.html'), 'the dashboard view is shipped');
  assert.ok(shipped.some((p) => p.startsWith('examples/tinker_atropos/environments/') && p.endsWith('.py')), 'the examples are shipped');
  assert.deepEqual(shipped.filter((p) => p.startsWith('dist/')).sort(), ['dist/index.js', 'dist/index.js.map', 'dist/keeper.js', 'dist/keeper.js.map'], 'dist/ is the bundle: the server and a run\'s keeper, one file each, and their maps');
  assert.deepEqual(shipped.filter((p) => /(^|\/)(__pycache__|test|src|bench|scripts)\//.test(p) || p.endsWith('.pyc')), [], 'no caches, tests, sources, benches or scripts');
  assert.ok(!shipped.includes('.mcp.json'), "the checkout's .mcp.json (a path into the checkout) is not shipped");

  const prefix = join(dir, 'prefix');
  run('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', '--prefer-offline', join(dir, packed!.filename)], dir);
  const bin = join(prefix, 'bin', 'rl-training-mcp');
  const version = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  assert.equal(run(bin, ['--version'], '/').trim(), version);

  // A settings file makes the start read YAML, which the bundle loads from the installed dependencies.
  const settingsFile = join(dir, 'rl.yaml');
  writeFileSync(settingsFile, 'RL_STATUS_MIN_INTERVAL_SECONDS: 5\n');
  const env = testEnv({ RL_MCP_CONFIG: settingsFile, LOG_LEVEL: 'debug' });
  const transport = new StdioClientTransport({ command: bin, args: [], env, cwd: '/', stderr: 'pipe' });
  const client = new Client({ name: 'package-test', version: '0.0.0' });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'rl_start_training'));
    const listing = await callTool(client, 'rl_list_environments');
    assert.equal(listing.isError, false, JSON.stringify(listing.json));
    const installedExamples = join(prefix, 'lib', 'node_modules', 'rl-training-mcp', 'examples');
    assert.ok(listing.json.environments.length > 0);
    assert.ok(listing.json.environments.every((e: { file_path: string }) => e.file_path.startsWith(installedExamples)), 'examples come from the installed package');
    const { contents } = await client.readResource({ uri: DASHBOARD_URI });
    assert.match((contents[0] as { text: string }).text, /^<!doctype html>/i, 'the installed package serves its dashboard view');
  } finally {
    await client.close();
  }
});
