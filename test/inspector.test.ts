/**
 * A client this project did not write: the real MCP Inspector CLI (2.x, on Node 22, both fetched
 * on demand) drives the built server, itself run under Node 22, with --format json.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parse } from 'yaml';
import { makeFakeInstall } from './helpers/fakeInstall.js';
import { inspectorLauncher, node22 } from './helpers/node22.js';
import { killLeftovers, newHome, runServerEnv } from './helpers/runs.js';
import { DIST_ENTRY, tempDir } from './helpers/tmp.js';

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

/** One Inspector CLI call, a server process of its own; `env` is its settings (default: a fresh RL_HOME). */
function inspector(args: string[], env: Record<string, string> = { RL_HOME: tempDir() }): { code: number | null; json: any; stderr: string } {
  const node = node22();
  const settings = Object.entries({ LOG_LEVEL: 'error', ...env }).flatMap(([name, value]) => ['-e', `${name}=${value}`]);
  const res = spawnSync(node, [inspectorLauncher(), '--cli', node, DIST_ENTRY, '--', ...settings, '--format', 'json', ...args], {
    encoding: 'utf8',
    timeout: 120_000,
    env: { PATH: process.env.PATH, HOME: tempDir() },
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

test('tools/list --strict, over 2025 and over 2026-07-28: every tool portable (0 schema findings), with schemas and annotations', () => {
  for (const era of ['legacy', 'modern']) {
    const { code, json, stderr } = inspector(['--method', 'tools/list', '--strict', '--protocol-era', era]);
    assert.equal(code, 0, `${era}: ${stderr}`);
    // --strict lists each portability finding (type arrays, bare {} schemas, ...) in schemaFindings and on stderr.
    assert.equal(json.schemaFindings, undefined, JSON.stringify(json.schemaFindings));
    assert.doesNotMatch(stderr, /Warning: tool|Error: tool|Schema portability/);
    const tools = json.result.tools as Array<{ name: string; inputSchema: object; outputSchema?: object; annotations?: Record<string, unknown> }>;
    const names = tools.map((t) => t.name);
    for (const name of [...HERMES_TOOLS, 'rl_read_log', 'rl_doctor']) assert.ok(names.includes(name), `${name} listed`);
    for (const tool of tools) {
      assert.ok(tool.outputSchema, `${tool.name} has an outputSchema`);
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) {
        assert.equal(typeof tool.annotations?.[hint], 'boolean', `${tool.name}.${hint}`);
      }
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

test('one server process per call: select -> edit -> start -> status carry on through RL_HOME', async (t) => {
  const install = await makeFakeInstall();
  install.trainerControl({ step_seconds: 0.01 });
  const home = newHome();
  const env = await runServerEnv(install, home);
  t.after(() => killLeftovers([install.root, home]));
  const call = (tool: string, ...args: string[]): Record<string, any> => {
    const { code, json, stderr } = inspector(['--method', 'tools/call', '--tool-name', tool, ...args.flatMap((a) => ['--tool-arg', a])], env);
    assert.equal(code, 0, `${tool}: ${JSON.stringify(json)} ${stderr}`);
    return json.result.structuredContent;
  };

  assert.equal(call('rl_select_environment', 'name=gsm8k').environment, 'gsm8k');
  assert.equal(call('rl_edit_config', 'field=group_size', 'value=8').value, 8);
  const config = call('rl_get_current_config');
  assert.equal(config.environment, 'gsm8k');
  assert.equal(config.configurable_fields.find((f: { name: string }) => f.name === 'group_size').current_value, 8);
  const started = call('rl_start_training');
  assert.equal(started.environment, 'gsm8k');
  assert.equal(parse(readFileSync(started.config_path, 'utf8')).env.group_size, 8);
  // The Inspector reads each --tool-arg value as JSON first: an id such as 12345678 or 5e123456 would
  // arrive as a number (or not at all), so the id goes as a JSON string, as a user of the CLI must send it.
  const status = call('rl_check_status', `run_id=${JSON.stringify(started.run_id)}`);
  assert.equal(status.run_id, started.run_id);
  assert.ok(['starting', 'running', 'completed'].includes(status.status), JSON.stringify(status));
});
