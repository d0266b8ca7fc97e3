/**
 * The client configurations we publish (clients/, the checkout's mcp.json, the README's
 * Inspector command), each parsed the way its client reads it and checked against that client's
 * documented format (docs/clients.md); then the server is started from each, with the
 * placeholders filled in and the variables expanded as the client would, and answers tools/list.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { lstatSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { parse as parseYaml } from 'yaml';
import { REPO_ROOT, tempDir } from './helpers/tmp.js';

interface ServerEntry {
  type?: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  timeout?: number;
}

interface ClientFormat {
  client: string;
  file: string;
  topKey: string;
  parse: (text: string) => any;
  /** A value written with this client's variable syntax; `expand` replaces each as the client does. */
  variable: RegExp;
  expand: (value: string, vars: Record<string, string>) => string;
  requiresType: boolean;
  cwd: string;
}

const TEST_VARS = { TINKER_API_KEY: 'tml-snippet-test', 'tinker-api-key': 'tml-snippet-test' };
const shellStyle = (value: string, vars: Record<string, string>): string =>
  value.replace(/\$\{(\w+)(?::-([^}]*))?\}/g, (_, name: string, fallback?: string) => vars[name] ?? fallback ?? '');
const editorStyle = (value: string, vars: Record<string, string>): string => value.replace(/\$\{(?:env|input):([\w-]+)\}/g, (_, name: string) => vars[name] ?? '');
/** Hermes keeps an unset variable as it is. */
const hermesStyle = (value: string, vars: Record<string, string>): string => value.replace(/\$\{(\w+)\}/g, (whole, name: string) => vars[name] ?? whole);

const FORMATS: ClientFormat[] = [
  { client: 'Claude Desktop', file: 'clients/claude_desktop_config.json', topKey: 'mcpServers', parse: JSON.parse, variable: /(?!)/, expand: (v) => v, requiresType: false, cwd: '/' },
  { client: 'Claude Code', file: 'clients/claude-code/.mcp.json', topKey: 'mcpServers', parse: JSON.parse, variable: /^\$\{\w+(:-[^}]*)?\}$/, expand: shellStyle, requiresType: true, cwd: '/' },
  { client: 'this checkout (mcp.json; Claude Code reads it as .mcp.json)', file: 'mcp.json', topKey: 'mcpServers', parse: JSON.parse, variable: /^\$\{\w+(:-[^}]*)?\}$/, expand: shellStyle, requiresType: true, cwd: REPO_ROOT },
  { client: 'VS Code', file: 'clients/vscode/.vscode/mcp.json', topKey: 'servers', parse: JSON.parse, variable: /^\$\{(env|input):[\w-]+\}$/, expand: editorStyle, requiresType: true, cwd: '/' },
  { client: 'Cursor', file: 'clients/cursor/.cursor/mcp.json', topKey: 'mcpServers', parse: JSON.parse, variable: /^\$\{env:\w+\}$/, expand: editorStyle, requiresType: false, cwd: '/' },
  { client: 'Hermes', file: 'clients/hermes/config.yaml', topKey: 'mcp_servers', parse: parseYaml, variable: /^\$\{\w+\}$/, expand: hermesStyle, requiresType: false, cwd: '/' },
];

const SETTINGS = /^(TINKER_ATROPOS_ROOT|TINKER_API_KEY|WANDB_API_KEY|OPENROUTER_API_KEY|HERMES_HOME|RL_CLIENT)$/;
/** Settings written as plain values: they hold no secret. */
const PLAIN: Record<string, RegExp> = { RL_CLIENT: /^hermes$/ };
/** A value that is plainly not a secret: a path to fill in, or a description of the key to paste. */
const PLACEHOLDER = /^(\/absolute\/path\/to\/[\w./-]+|<your [^>]+>)$/;

function entryOf(format: ClientFormat): { config: any; entry: ServerEntry } {
  const config = format.parse(readFileSync(join(REPO_ROOT, format.file), 'utf8'));
  assert.deepEqual(Object.keys(config).filter((k) => k !== 'inputs'), [format.topKey], `${format.client}: top-level key`);
  const entry = config[format.topKey]?.['rl-training'] as ServerEntry | undefined;
  assert.ok(entry, `${format.client} names the rl-training server`);
  assert.equal(typeof entry.command, 'string');
  assert.ok(Array.isArray(entry.args) && entry.args.every((a) => typeof a === 'string'), `${format.client}: args is a list of strings`);
  if (format.requiresType) assert.equal(entry.type, 'stdio', `${format.client}: type`);
  assert.match(entry.args.at(-1)!, /dist\/index\.js$/, `${format.client}: the built entry point`);
  for (const arg of entry.args) assert.doesNotMatch(arg, /KEY|key=|\$\{/, `${format.client}: no secret or variable in args`);
  for (const [name, value] of Object.entries(entry.env ?? {})) {
    assert.match(name, SETTINGS, `${format.client}: env ${name}`);
    // Hermes's SDK does not start a server whose env holds a YAML number or boolean.
    assert.equal(typeof value, 'string', `${format.client}: env ${name} is a string`);
    assert.ok(format.variable.test(value) || PLACEHOLDER.test(value) || PLAIN[name]?.test(value), `${format.client}: ${name}=${value} is a variable or a placeholder, never a secret`);
  }
  return { config, entry };
}

async function answersToolsList(format: ClientFormat, entry: ServerEntry): Promise<void> {
  // The user pastes the Tinker key where Claude Desktop's file describes it.
  const fill = (value: string): string =>
    format
      .expand(value, TEST_VARS)
      .replace(/^<your Tinker key[^>]*>$/, TEST_VARS.TINKER_API_KEY).replace('/absolute/path/to/rl-training-mcp', REPO_ROOT).replace('/absolute/path/to/node', process.execPath);
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', RL_HOME: tempDir(), LOG_LEVEL: 'error' };
  for (const [name, value] of Object.entries(entry.env ?? {})) {
    const filled = fill(value);
    // A path this machine does not have, or a key's description, is left for the user.
    if (!PLACEHOLDER.test(filled)) env[name] = filled;
  }
  assert.equal(env.TINKER_API_KEY, TEST_VARS.TINKER_API_KEY, `${format.client}: the key reaches the server`);
  const client = new Client({ name: 'snippet-test', version: '0' });
  await client.connect(new StdioClientTransport({ command: fill(entry.command), args: entry.args.map(fill), env, cwd: format.cwd, stderr: 'ignore' }));
  try {
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'rl_start_training'));
  } finally {
    await client.close();
  }
}

for (const format of FORMATS) {
  test(`${format.client} (${format.file}): the documented format, and the server starts from it`, async () => {
    const { config, entry } = entryOf(format);
    if (format.client === 'Claude Desktop') {
      assert.ok(entry.command.startsWith('/'), 'the absolute path of node: Claude Desktop does not see nvm or the shell PATH');
      assert.ok(entry.args.every((a) => a.startsWith('/')), 'absolute paths: Claude Desktop starts servers in /');
    }
    if (format.client === 'VS Code') {
      const input = (config.inputs as Array<Record<string, unknown>>).find((i) => i.id === 'tinker-api-key');
      assert.deepEqual({ type: input?.type, password: input?.password }, { type: 'promptString', password: true }, 'the key is asked for, hidden');
    }
    if (format.client === 'Hermes') {
      assert.equal(entry.timeout, 300, 'rl_test_inference may wait');
      // Hermes passes a server only its entry's env (and PATH, HOME...): the home of a profile too.
      assert.equal(entry.env?.HERMES_HOME, '${HERMES_HOME}', 'the Hermes home reaches the server');
      assert.equal(entry.env?.RL_CLIENT, 'hermes', 'answers fit Hermes (docs/clients.md)');
    }
    await answersToolsList(format, entry);
  });
}

test("Claude Code's .mcp.json is a link to mcp.json, never a second hand-kept copy", () => {
  assert.ok(lstatSync(join(REPO_ROOT, '.mcp.json')).isSymbolicLink());
  assert.equal(readlinkSync(join(REPO_ROOT, '.mcp.json')), 'mcp.json');
});

test('README Inspector command lists the tools', async () => {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const block = /<!-- snippet: inspector -->\s*```\w*\n([\s\S]*?)```/.exec(readme);
  assert.ok(block, 'README has the Inspector snippet');
  const line = block[1]!.split('\n').find((l) => l.includes('--method tools/list'));
  assert.ok(line, 'an Inspector CLI line');
  const out = await new Promise<string>((resolve, reject) => {
    execFile('sh', ['-c', line], { cwd: REPO_ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, RL_HOME: tempDir(), LOG_LEVEL: 'error' }, timeout: 240_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
    );
  });
  const tools = (JSON.parse(out) as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
  assert.ok(tools.includes('rl_list_environments') && tools.includes('rl_doctor'));
});
