/**
 * What the model reads of this server, in review: the tools/list answer is committed
 * (test/snapshots/tools-list.json: names, titles, descriptions, input and output schemas,
 * annotations, _meta, as a client that renders MCP Apps is shown them), so a change to what the
 * model sees shows in the diff; and its size, with the server instructions, is bounded.
 *
 * After a deliberate change, regenerate the snapshot with:
 *   UPDATE_TOOL_SNAPSHOT=1 node --import tsx --test test/unit/tool-list.test.ts
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { APPS_CLIENT_CAPABILITIES, connectInMemory } from '../helpers/client.js';
import { REPO_ROOT, tempDir } from '../helpers/tmp.js';

const SNAPSHOT = join(REPO_ROOT, 'test', 'snapshots', 'tools-list.json');
/** Names, descriptions and input schemas of the tools a model is shown. */
const MAX_MODEL_FACING_CHARS = 20_000;
const MAX_INSTRUCTIONS_CHARS = 1_200;

test('the tools/list answer is the committed snapshot (UPDATE_TOOL_SNAPSHOT=1 writes it)', async () => {
  const h = await connectInMemory({ RL_HOME: join(tempDir('rlmcp-toollist-'), 'rl_training') }, undefined, APPS_CLIENT_CAPABILITIES);
  const { tools } = await h.client.listTools();
  const text = `${JSON.stringify(tools, null, 2)}\n`;
  if (process.env.UPDATE_TOOL_SNAPSHOT === '1') writeFileSync(SNAPSHOT, text);
  assert.deepEqual(JSON.parse(text), JSON.parse(readFileSync(SNAPSHOT, 'utf8')), 'the tool list changed: review the diff, then regenerate with UPDATE_TOOL_SNAPSHOT=1');
  await h.close();
});

test('what a model reads: the tool list within 20,000 characters, the instructions within 1,200, the search words findable', async () => {
  const h = await connectInMemory({ RL_HOME: join(tempDir('rlmcp-toollist-'), 'rl_training') });
  const { tools } = await h.client.listTools();
  const instructions = h.client.getInstructions() ?? '';
  const perTool = tools.map((t) => ({ name: t.name, chars: t.name.length + (t.description ?? '').length + JSON.stringify(t.inputSchema).length }));
  const total = perTool.reduce((sum, t) => sum + t.chars, 0);
  process.stdout.write(`model-facing tool list: ${tools.length} tools, ${total} characters (names + descriptions + input schemas); server instructions: ${instructions.length} characters\n`);
  for (const t of perTool) process.stdout.write(`  ${t.name}: ${t.chars}\n`);
  assert.ok(!tools.some((t) => t.name === 'rl_dashboard_snapshot'), 'the app-only tool is not shown to a model');
  assert.ok(total <= MAX_MODEL_FACING_CHARS, `the tool list a model reads is ${total} characters, over ${MAX_MODEL_FACING_CHARS}`);
  assert.ok(instructions.length > 0 && instructions.length <= MAX_INSTRUCTIONS_CHARS, `the instructions are ${instructions.length} characters, over ${MAX_INSTRUCTIONS_CHARS}`);
  // A client that defers tools behind a keyword search finds them by these words.
  const searchable = tools.map((t) => `${t.name} ${t.description}`).join('\n').toLowerCase();
  for (const word of ['rl', 'training', 'tinker', 'checkpoint', 'evaluate']) assert.ok(searchable.includes(word), `"${word}" is in no tool's name or description`);
  await h.close();
});
