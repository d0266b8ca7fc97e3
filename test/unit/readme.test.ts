/** README keeps telling the truth: its tool table matches the tool definitions; its commands exist. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ALL_TOOLS } from '../../src/tools/index.js';
import { REPO_ROOT } from '../helpers/tmp.js';


const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
const PACKAGE = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };

test('every tool is in the README table with its annotations', () => {
  const rows = new Map<string, string>();
  for (const m of README.matchAll(/^\| `(rl_\w+)` \|.*\| ([R·] [D·] [I·] [O·]) \|$/gm)) rows.set(m[1]!, m[2]!);
  assert.deepEqual([...rows.keys()], ALL_TOOLS.map((t) => t.name), 'the same tools, in the same order');
  for (const tool of ALL_TOOLS) {
    const a = tool.annotations;
    const flags = [a.readOnlyHint ? 'R' : '·', a.destructiveHint ? 'D' : '·', a.idempotentHint ? 'I' : '·', a.openWorldHint ? 'O' : '·'].join(' ');
    assert.equal(rows.get(tool.name), flags, `${tool.name} annotations`);
  }
});

test('the README opens with the install-and-run command and the test command, both real scripts', () => {
  const block = /```sh\n([\s\S]*?)```/.exec(README)?.[1] ?? '';
  const [first, second] = block.split('\n').filter((l) => l.trim() !== '');
  assert.match(first!, /^npm ci && npm run demo\b/);
  assert.match(second!, /^npm test\b/);
  assert.ok(PACKAGE.scripts.demo && PACKAGE.scripts.test);
});
