/**
 * A client this project did not write: the real MCP Inspector CLI (2.x, on Node 22) drives the
 * built server, itself run under Node 22, with --format json.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { node22 } from './helpers/node22.js';
import { DIST_ENTRY, REPO_ROOT, tempDir } from './helpers/tmp.js';

const INSPECTOR = join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');
const HERMES_TOOLS = [
  'rl_list_environments',
  'rl_select_environment',
  'rl_get_current_config',
  'rl_edit_config',
  'rl_start_training',
  'rl_check_status',
  'rl_stop_training',
  'rl_get_results',
  'rl_list_runs',
  'rl_test_inference',
];

function inspector(args: string[]): { code: number | null; json: any; stderr: string } {
  const node = node22();
  const home = tempDir();
  const res = spawnSync(node, [INSPECTOR, '--cli', node, DIST_ENTRY, '--', '-e', `RL_HOME=${home}`, '-e', 'LOG_LEVEL=error', '--format', 'json', ...args], {
    encoding: 'utf8',
    timeout: 120_000,
    env: { PATH: process.env.PATH, HOME: home },
  });
  let json: any;
  try {
    json = JSON.parse(res.stdout);
  } catch {
    json = { unparsed: res.stdout };
  }
  return { code: res.status, json, stderr: res.stderr };
}

test('initialize: server info, capabilities and short instructions', () => {
  const { code, json } = inspector(['--method', 'initialize']);
  assert.equal(code, 0);
  const result = json.result;
  assert.equal(result.serverInfo.name, 'rl-training-mcp');
  assert.ok(result.capabilities.tools);
  assert.ok(result.capabilities.resources?.subscribe, 'resources.subscribe declared');
  assert.ok(typeof result.instructions === 'string' && result.instructions.length > 100);
  assert.ok(Buffer.byteLength(result.instructions) < 2048, 'instructions under 2 KB');
});

test('tools/list --strict: every tool portable, with schemas and annotations', () => {
  const { code, json, stderr } = inspector(['--method', 'tools/list', '--strict']);
  assert.equal(code, 0, stderr);
  const tools = json.result.tools as Array<{ name: string; inputSchema: object; outputSchema?: object; annotations?: Record<string, unknown> }>;
  const names = tools.map((t) => t.name);
  for (const name of [...HERMES_TOOLS, 'rl_doctor']) assert.ok(names.includes(name), `${name} listed`);
  for (const tool of tools) {
    assert.ok(tool.outputSchema, `${tool.name} has an outputSchema`);
    for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) {
      assert.equal(typeof tool.annotations?.[hint], 'boolean', `${tool.name}.${hint}`);
    }
  }
});

test('resources/templates/list shows the run, log, environment and inference-test templates', () => {
  const { code, json } = inspector(['--method', 'resources/templates/list']);
  assert.equal(code, 0);
  const templates = (json.result.resourceTemplates as Array<{ uriTemplate: string }>).map((t) => t.uriTemplate);
  for (const prefix of ['rl://runs/{run_id}', 'rl://runs/{run_id}/config', 'rl://runs/{run_id}/logs/{process}', 'rl://environments/{name}/source', 'rl://inference-tests/{test_id}/']) {
    assert.ok(templates.some((t) => t.startsWith(prefix)), `${prefix} in ${templates.join(', ')}`);
  }
});

test('tools/call rl_list_environments lists the bundled examples', () => {
  const { code, json } = inspector(['--method', 'tools/call', '--tool-name', 'rl_list_environments']);
  assert.equal(code, 0);
  const structured = json.result.structuredContent as { environments: Array<{ name: string }>; count: number };
  assert.ok(structured.count >= 3);
  assert.ok(structured.environments.some((e) => e.name === 'gsm8k'));
});

test('a tool error exits 5 with the error text, as the Inspector reports isError', () => {
  const { code, json, stderr } = inspector(['--method', 'tools/call', '--tool-name', 'rl_check_status', '--tool-arg', 'run_id=deadbeef']);
  assert.equal(code, 5, JSON.stringify(json));
  assert.match(stderr + JSON.stringify(json), /Run 'deadbeef' not found/);
});
