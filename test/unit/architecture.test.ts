/**
 * The house rules of src/, checked by machine (docs/architecture.md explains them): the layers a
 * folder name shows, no import cycles (type-only imports included), no two folders of
 * src/runtime importing each other (in either direction, through any file), the SDK only in the MCP
 * folders, folders small enough to take in at a glance, and functions and files small enough to
 * read in one sitting. Each rule is a function of the parsed tree, so a planted breach can show
 * that it fails.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { REPO_ROOT } from '../helpers/tmp.js';

const SRC = join(REPO_ROOT, 'src');
const MAX_FUNCTION_LINES = 60;
const MAX_FILE_LINES = 350;
/** More source files than this in one folder, and it is split into sub-folders. */
const MAX_FOLDER_FILES = 15;
/** One file per tool: the tools folder grows with the tool list, and is read by tool name. */
const FOLDERS_EXEMPT_FROM_SIZE = new Set(['tools']);

/** Lower layers first; a file may import its own layer and the layers below it. */
const LAYERS = ['core', 'services', 'wiring', 'mcp', 'entry'] as const;
type Layer = (typeof LAYERS)[number];
/** The folders of the MCP layer, the only ones that may import the MCP SDK. */
const MCP_FOLDERS = ['tools', 'resources', 'server'];

interface SourceFile {
  /** Relative to src/, `/`-separated. */
  path: string;
  text: string;
  ast: ts.SourceFile;
  /** Relative imports (resolved to paths relative to src/) and package imports, as written. */
  imports: { target: string; line: number }[];
  packages: { name: string; line: number }[];
}

function layerOf(path: string): Layer {
  if (path === 'index.ts' || path === 'keeper.ts') return 'entry';
  const [top, second] = path.split('/');
  if (top === 'core') return 'core';
  if (top === 'runtime') return second === 'wiring' ? 'wiring' : 'services';
  if (MCP_FOLDERS.includes(top!)) return 'mcp';
  throw new Error(`${path} is outside the known folders (core, runtime, ${MCP_FOLDERS.join(', ')}, index.ts)`);
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : path.endsWith('.ts') ? [path] : [];
  });
}

function moduleSpecifiers(ast: ts.SourceFile): { spec: string; line: number }[] {
  const found: { spec: string; line: number }[] = [];
  const visit = (node: ts.Node): void => {
    let spec: ts.Expression | undefined;
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) spec = node.moduleSpecifier;
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) spec = node.arguments[0];
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) spec = node.argument.literal;
    if (spec && ts.isStringLiteral(spec)) found.push({ spec: spec.text, line: ast.getLineAndCharacterOfPosition(node.getStart(ast)).line + 1 });
    ts.forEachChild(node, visit);
  };
  visit(ast);
  return found;
}

/** One source file as the rules see it; `path` is relative to src/. */
function parse(path: string, text: string): SourceFile {
  const ast = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const imports: SourceFile['imports'] = [];
  const packages: SourceFile['packages'] = [];
  for (const { spec, line } of moduleSpecifiers(ast)) {
    if (spec.startsWith('.')) imports.push({ target: relative(SRC, resolve(SRC, dirname(path), spec)).split('\\').join('/').replace(/\.js$/, '.ts'), line });
    else packages.push({ name: spec, line });
  }
  return { path, text, ast, imports, packages };
}

function load(): SourceFile[] {
  return walk(SRC).map((file) => parse(relative(SRC, file).split('\\').join('/'), readFileSync(file, 'utf8')));
}

function sdkImportsOutsideMcp(files: readonly SourceFile[]): string[] {
  return files.flatMap((f) =>
    layerOf(f.path) === 'mcp' ? [] : f.packages.filter((p) => p.name.startsWith('@modelcontextprotocol/')).map((p) => `${f.path}:${p.line} imports ${p.name}`),
  );
}

function upwardImports(files: readonly SourceFile[]): string[] {
  const offenders: string[] = [];
  for (const f of files) {
    const from = LAYERS.indexOf(layerOf(f.path));
    for (const { target, line } of f.imports) {
      const to = LAYERS.indexOf(layerOf(target));
      if (to > from) offenders.push(`${f.path}:${line} (${LAYERS[from]}) imports ${target} (${LAYERS[to]})`);
    }
  }
  return offenders;
}

function importCycles(files: readonly SourceFile[]): string[] {
  const graph = new Map(files.map((f) => [f.path, [...new Set(f.imports.map((i) => i.target))]]));
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next].join(' -> '));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return cycles;
}

const folderOf = (path: string): string => (path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '.');

/**
 * Pairs of folders of src/runtime (any directory under it, a sub-folder and its parent too) that
 * import each other, each direction shown by its first import: a folder that imports one importing
 * it back is one knot, however the files inside avoid a cycle.
 */
function mutualFolders(files: readonly SourceFile[]): string[] {
  const first = new Map<string, string>();
  for (const f of files) {
    const from = folderOf(f.path);
    if (!from.startsWith('runtime/')) continue;
    for (const { target, line } of f.imports) {
      const to = folderOf(target);
      const key = `${from} -> ${to}`;
      if (to !== from && to.startsWith('runtime/') && !first.has(key)) first.set(key, `${f.path}:${line} imports ${target}`);
    }
  }
  const pairs: string[] = [];
  for (const [key, there] of first) {
    const [from, to] = key.split(' -> ') as [string, string];
    const back = first.get(`${to} -> ${from}`);
    if (back !== undefined && from < to) pairs.push(`src/${from} <-> src/${to}: ${there}; ${back}`);
  }
  return pairs.sort();
}

function crowdedFolders(files: readonly SourceFile[]): string[] {
  const counts = new Map<string, number>();
  for (const f of files) {
    const folder = folderOf(f.path);
    counts.set(folder, (counts.get(folder) ?? 0) + 1);
  }
  return [...counts].filter(([folder, n]) => n > MAX_FOLDER_FILES && !FOLDERS_EXEMPT_FROM_SIZE.has(folder)).map(([folder, n]) => `src/${folder}: ${n} files`);
}

function oversized(files: readonly SourceFile[]): string[] {
  const offenders: string[] = [];
  for (const f of files) {
    const lines = f.text.split('\n').length;
    if (lines > MAX_FILE_LINES) offenders.push(`${f.path}: ${lines} lines`);
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const start = f.ast.getLineAndCharacterOfPosition(node.getStart(f.ast)).line;
        const end = f.ast.getLineAndCharacterOfPosition(node.end).line;
        const name = node.name && ts.isIdentifier(node.name) ? node.name.text : '(anonymous)';
        if (end - start + 1 > MAX_FUNCTION_LINES) offenders.push(`${f.path}:${start + 1} ${name}: ${end - start + 1} lines`);
      }
      ts.forEachChild(node, visit);
    };
    visit(f.ast);
  }
  return offenders;
}

/**
 * zod 4's `import { z }` brings the whole namespace object, its locales included, into the bundle;
 * `import * as z` lets the bundler keep what is used (dist/index.js 1.27 MB against 0.92 MB).
 */
function zodNamedImports(files: readonly SourceFile[]): string[] {
  return files.flatMap((f) => [...f.text.matchAll(/^import \{[^}]*\} from 'zod';/gm)].map((m) => `${f.path}:${f.text.slice(0, m.index).split('\n').length} ${m[0]}`));
}

/**
 * Leaf schemas come from src/core/schemaLeaves.ts, one instance each: a fresh `z.string()` per field
 * is another zod instance (about 1 KB) built at every start.
 */
const FRESH_LEAF = /\bz\s*\.(string|number|int|boolean|unknown)\(\)/g;

function freshLeaves(files: readonly SourceFile[]): string[] {
  return files
    .filter((f) => f.path !== 'core/schemaLeaves.ts')
    .flatMap((f) => [...f.text.matchAll(FRESH_LEAF)].map((m) => `${f.path}:${f.text.slice(0, m.index).split('\n').length} ${m[0]}`));
}

/**
 * Node's modules a server start does not need (HTTP, TLS, zlib, child processes, readline) load on
 * first use through src/core/onDemand.ts: a static import anywhere loads them at every start (about
 * 4 MiB of an idle server's memory together). Type-only imports load nothing.
 */
const ON_DEMAND_BUILTINS = /^import (?!type )[^;]*from 'node:(http|https|tls|zlib|child_process|readline)';/gm;

function startLoadedBuiltins(files: readonly SourceFile[]): string[] {
  return files
    .filter((f) => f.path !== 'core/onDemand.ts')
    .flatMap((f) => [...f.text.matchAll(ON_DEMAND_BUILTINS)].map((m) => `${f.path}:${f.text.slice(0, m.index).split('\n').length} imports node:${m[1]}`));
}

const files = load();

const RULES: Array<[string, (files: readonly SourceFile[]) => string[]]> = [
  ['only the MCP folders (src/tools, src/resources, src/server) import the MCP SDK', sdkImportsOutsideMcp],
  ['each layer imports only itself and the layers below it', upwardImports],
  ['there is no import cycle, type-only imports included', importCycles],
  ['no two folders of src/runtime import each other, in either direction, through any file', mutualFolders],
  [`no folder holds more than ${MAX_FOLDER_FILES} source files (src/tools, one file per tool, excepted)`, crowdedFolders],
  [`no function over ${MAX_FUNCTION_LINES} lines, no file over ${MAX_FILE_LINES} lines`, oversized],
  ["zod is imported as a namespace (import * as z from 'zod'), so the bundle keeps only the zod it uses", zodNamedImports],
  ['Node modules a start does not need (HTTP, TLS, zlib, child processes, readline) are loaded on first use, through src/core/onDemand.ts', startLoadedBuiltins],
  ['leaf schemas (z.string(), z.number(), z.int(), z.boolean(), z.unknown()) are the shared ones of src/core/schemaLeaves.ts', freshLeaves],
];

for (const [rule, breaches] of RULES) test(rule, () => assert.deepEqual(breaches(files), []));

test('the rules can fail: planted breaches of each are caught', () => {
  const planted = [
    parse('runtime/runs/a.ts', "import { Server } from '@modelcontextprotocol/server';\nimport type { B } from './b.js';"),
    parse('runtime/runs/b.ts', "import type { A } from './a.js';\nexport const f = (): Promise<unknown> => import('../wiring/runtime.js');"),
    parse('core/c.ts', "import { x } from '../runtime/runs/a.js';"),
    parse('runtime/runs/seams/s.ts', "import type { A } from '../a.js';"),
    parse('runtime/runs/d.ts', "export type { S } from './seams/s.js';"),
    ...Array.from({ length: MAX_FOLDER_FILES + 1 }, (_, i) => parse(`runtime/crowded/f${i}.ts`, 'export {};')),
    ...Array.from({ length: MAX_FOLDER_FILES + 1 }, (_, i) => parse(`tools/rl_${i}.ts`, "import { z } from '@modelcontextprotocol/server';")),
  ];
  assert.deepEqual(sdkImportsOutsideMcp(planted), ['runtime/runs/a.ts:1 imports @modelcontextprotocol/server']);
  assert.deepEqual(upwardImports(planted), [
    'runtime/runs/b.ts:2 (services) imports runtime/wiring/runtime.ts (wiring)',
    'core/c.ts:1 (core) imports runtime/runs/a.ts (services)',
  ]);
  assert.deepEqual(importCycles(planted), ['runtime/runs/a.ts -> runtime/runs/b.ts -> runtime/runs/a.ts']);
  assert.deepEqual(mutualFolders(planted), [
    'src/runtime/runs <-> src/runtime/runs/seams: runtime/runs/d.ts:1 imports runtime/runs/seams/s.ts; runtime/runs/seams/s.ts:1 imports runtime/runs/a.ts',
  ]);
  assert.deepEqual(crowdedFolders(planted), [`src/runtime/crowded: ${MAX_FOLDER_FILES + 1} files`]);
  assert.deepEqual(oversized([parse('core/long.ts', `export function f(): void {\n${'  void 0;\n'.repeat(MAX_FUNCTION_LINES)}}\n`)]), [`core/long.ts:1 f: ${MAX_FUNCTION_LINES + 2} lines`]);
  assert.throws(() => layerOf('mcp/server.ts'), /outside the known folders/);
  assert.deepEqual(zodNamedImports([parse('tools/t.ts', "import type { z } from 'zod';\nimport { z } from 'zod';")]), ["tools/t.ts:2 import { z } from 'zod';"]);
  assert.deepEqual(startLoadedBuiltins([parse('runtime/p.ts', "import type { IncomingMessage } from 'node:http';\nimport { request } from 'node:https';"), parse('core/onDemand.ts', "import { spawn } from 'node:child_process';")]), [
    'runtime/p.ts:2 imports node:https',
  ]);
  assert.deepEqual(freshLeaves([parse('tools/t.ts', 'const a = z.string().max(3);\nconst b = z\n  .number();\nconst c = zInt.min(0);'), parse('core/schemaLeaves.ts', 'export const zInt = z.int();')]), ['tools/t.ts:1 z.string()', 'tools/t.ts:2 z\n  .number()']);
});
