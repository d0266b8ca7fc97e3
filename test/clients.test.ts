/**
 * The client configurations we publish (mcp.json and the README snippets) are parsed the way each
 * client reads them, and the command each names is started and answers tools/list.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { parse as parseYaml } from 'yaml';
import { REPO_ROOT, tempDir } from './helpers/tmp.js';

const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
const PLACEHOLDER = '/absolute/path/to/rl-training-mcp';

interface ServerEntry {
  type?: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  timeout?: number;
}

/** The fenced block that follows `<!-- snippet: name -->` in the README. */
function snippet(name: string): string {
  const match = new RegExp(`<!-- snippet: ${name} -->\\s*\`\`\`\\w*\\n([\\s\\S]*?)\`\`\``).exec(README);
  assert.ok(match, `README has a ${name} snippet`);
  return match[1]!;
}

/** `${VAR}` / `${VAR:-default}` as Claude Code and Hermes expand them. */
function expand(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?::-([^}]*))?\}/g, (_, name: string, fallback?: string) => vars[name] ?? fallback ?? '');
}

async function answersToolsList(entry: ServerEntry, cwd: string): Promise<void> {
  const vars = { TINKER_API_KEY: 'tml-snippet-test' };
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', RL_HOME: tempDir(), LOG_LEVEL: 'error' };
  for (const [k, v] of Object.entries(entry.env ?? {})) {
    const expanded = expand(v, vars);
    // Placeholders in a snippet (a path to fill in) are not for this machine.
    if (!expanded.includes('/absolute/path/to/')) env[k] = expanded;
  }
  const args = entry.args.map((a) => expand(a, vars).replace(PLACEHOLDER, REPO_ROOT));
  const client = new Client({ name: 'snippet-test', version: '0' });
  await client.connect(new StdioClientTransport({ command: entry.command, args, env, cwd, stderr: 'ignore' }));
  try {
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'rl_start_training'));
  } finally {
    await client.close();
  }
}

function checkEntry(entry: ServerEntry | undefined, what: string): ServerEntry {
  assert.ok(entry, `${what} names the rl-training server`);
  assert.equal(entry.command, 'node', `${what}: command`);
  assert.match(entry.args.at(-1)!, /dist\/index\.js$/, `${what}: the built entry point`);
  for (const arg of entry.args) assert.doesNotMatch(arg, /KEY|key=/, `${what}: no secret in args`);
  for (const name of Object.keys(entry.env ?? {})) assert.match(name, /^(TINKER_ATROPOS_ROOT|TINKER_API_KEY|WANDB_API_KEY|OPENROUTER_API_KEY)$/, `${what}: env ${name}`);
  return entry;
}

test('mcp.json (Claude Code project config) starts the server from the checkout', async () => {
  const config = JSON.parse(readFileSync(join(REPO_ROOT, 'mcp.json'), 'utf8')) as { mcpServers: Record<string, ServerEntry> };
  const entry = checkEntry(config.mcpServers['rl-training'], 'mcp.json');
  assert.equal(entry.type, 'stdio');
  assert.deepEqual(entry.args, ['dist/index.js']);
  await answersToolsList(entry, REPO_ROOT);
});

test('README Claude Desktop snippet: absolute paths, keys in env', async () => {
  const entry = checkEntry((JSON.parse(snippet('claude-desktop')) as { mcpServers: Record<string, ServerEntry> }).mcpServers['rl-training'], 'Claude Desktop');
  assert.ok(entry.args.every((a) => a.startsWith('/')), 'absolute paths (Claude Desktop may start servers with cwd /)');
  assert.ok(entry.env?.TINKER_API_KEY, 'keys go in env');
  await answersToolsList(entry, '/');
});

test('README Claude Code snippet: ${VAR} expansion for keys', async () => {
  const entry = checkEntry((JSON.parse(snippet('claude-code')) as { mcpServers: Record<string, ServerEntry> }).mcpServers['rl-training'], 'Claude Code');
  assert.equal(entry.type, 'stdio');
  for (const value of Object.values(entry.env ?? {})) assert.match(value, /^\$\{\w+(:-[^}]*)?\}$/);
  await answersToolsList(entry, tempDir());
});

test('README Hermes snippet: mcp_servers with timeout 300', async () => {
  const config = parseYaml(snippet('hermes')) as { mcp_servers: Record<string, ServerEntry> };
  const entry = checkEntry(config.mcp_servers['rl-training'], 'Hermes');
  assert.equal(entry.timeout, 300);
  await answersToolsList(entry, tempDir());
});

test('README Inspector command lists the tools', async () => {
  const line = snippet('inspector').split('\n').find((l) => l.includes('--method tools/list'));
  assert.ok(line, 'an Inspector CLI line');
  const out = await new Promise<string>((resolve, reject) => {
    execFile('sh', ['-c', line], { cwd: REPO_ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, RL_HOME: tempDir(), LOG_LEVEL: 'error' }, timeout: 240_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
    );
  });
  const tools = (JSON.parse(out) as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
  assert.ok(tools.includes('rl_list_environments') && tools.includes('rl_doctor'));
});
