/** What a user installs: the packed tarball, installed into an empty folder, serving over stdio. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { DASHBOARD_URI } from '../src/core/resourceUris.js';
import { callTool } from './helpers/client.js';
import { REPO_ROOT, tempDir, testEnv } from './helpers/tmp.js';

function npm(args: string[], cwd: string): string {
  const res = spawnSync('npm', args, { cwd, encoding: 'utf8', timeout: 300_000 });
  assert.equal(res.status, 0, `npm ${args.join(' ')} failed:\n${res.stdout}\n${res.stderr}`);
  return res.stdout;
}

test('npm pack, install into an empty folder, start rl-training-mcp over stdio', async () => {
  const dir = tempDir();
  const [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', dir], REPO_ROOT)) as Array<{ filename: string; files: Array<{ path: string }> }>;
  const shipped = packed!.files.map((f) => f.path);
  for (const path of ['dist/index.js', 'README.md', 'mcp.json', 'package.json']) assert.ok(shipped.includes(path), `${path} is shipped`);
  assert.ok(shipped.some((p) => p.startsWith('python/') && p.endsWith('.py')), 'the Python helpers are shipped');
  assert.ok(shipped.includes('ui/dashboard.html'), 'the dashboard view is shipped');
  assert.ok(shipped.some((p) => p.startsWith('examples/tinker_atropos/environments/') && p.endsWith('.py')), 'the examples are shipped');
  assert.ok(!shipped.some((p) => p.startsWith('test/') || p.startsWith('src/') || p.startsWith('bench/')), 'no tests, sources or benches');

  const app = join(dir, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
  npm(['install', '--no-audit', '--no-fund', '--prefer-offline', join(dir, packed!.filename)], app);

  const transport = new StdioClientTransport({ command: join(app, 'node_modules', '.bin', 'rl-training-mcp'), args: [], env: testEnv(), cwd: app, stderr: 'pipe' });
  const client = new Client({ name: 'package-test', version: '0.0.0' });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'rl_list_environments'));
    const listing = await callTool(client, 'rl_list_environments');
    assert.equal(listing.isError, false);
    const installedExamples = join(app, 'node_modules', 'rl-training-mcp', 'examples');
    assert.ok(listing.json.environments.every((e: { file_path: string }) => e.file_path.startsWith(installedExamples)), 'examples come from the installed package');
    const { contents } = await client.readResource({ uri: DASHBOARD_URI });
    assert.match((contents[0] as { text: string }).text, /^<!doctype html>/i, 'the installed package serves its dashboard view');
  } finally {
    await client.close();
  }
});
