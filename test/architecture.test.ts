/**
 * The house rules of src/, checked by machine (docs/architecture.md explains them): the layers a
 * folder name shows, no import cycles (type-only imports included), the SDK only in the MCP layer,
 * and functions and files small enough to read in one sitting.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { REPO_ROOT } from './helpers/tmp.js';

const SRC = join(REPO_ROOT, 'src');
const MAX_FUNCTION_LINES = 60;
const MAX_FILE_LINES = 350;

/** Lower layers first; a file may import its own layer and the layers below it. */
const LAYERS = ['core', 'domain', 'app', 'mcp', 'entry'] as const;
type Layer = (typeof LAYERS)[number];

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
  const top = path.split('/')[0]!;
  if (path === 'index.ts') return 'entry';
  assert.ok((LAYERS as readonly string[]).includes(top), `${path} is outside the known layers (${LAYERS.join(', ')})`);
  return top as Layer;
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

function load(): SourceFile[] {
  return walk(SRC).map((file) => {
    const text = readFileSync(file, 'utf8');
    const ast = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const path = relative(SRC, file).split('\\').join('/');
    const imports: SourceFile['imports'] = [];
    const packages: SourceFile['packages'] = [];
    for (const { spec, line } of moduleSpecifiers(ast)) {
      if (spec.startsWith('.')) imports.push({ target: relative(SRC, resolve(dirname(file), spec)).replace(/\.js$/, '.ts'), line });
      else packages.push({ name: spec, line });
    }
    return { path, text, ast, imports, packages };
  });
}

const files = load();

test('only the MCP layer imports the MCP SDK', () => {
  const offenders = files.flatMap((f) =>
    layerOf(f.path) === 'mcp' ? [] : f.packages.filter((p) => p.name.startsWith('@modelcontextprotocol/')).map((p) => `${f.path}:${p.line} imports ${p.name}`),
  );
  assert.deepEqual(offenders, []);
});

test('each layer imports only itself and the layers below it', () => {
  const offenders: string[] = [];
  for (const f of files) {
    const from = LAYERS.indexOf(layerOf(f.path));
    for (const { target, line } of f.imports) {
      const to = LAYERS.indexOf(layerOf(target));
      if (to > from) offenders.push(`${f.path}:${line} (${LAYERS[from]}) imports ${target} (${LAYERS[to]})`);
    }
  }
  assert.deepEqual(offenders, []);
});

test('there is no import cycle, type-only imports included', () => {
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
  assert.deepEqual(cycles, []);
});

test(`no function over ${MAX_FUNCTION_LINES} lines, no file over ${MAX_FILE_LINES} lines`, () => {
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
  assert.deepEqual(offenders, []);
});

test('comments point only at what a reader of the repository has', () => {
  const offenders = files.filter((f) => /SPEC §|reference §|shared\/reference|shared\/seeds/.test(f.text)).map((f) => f.path);
  assert.deepEqual(offenders, []);
});

test('the rules can fail: a planted cycle and a planted SDK import are caught', () => {
  const ast = ts.createSourceFile('x.ts', "import type { A } from './a.js';\nexport const f = (): Promise<unknown> => import('@modelcontextprotocol/sdk/types.js');", ts.ScriptTarget.Latest, true);
  assert.deepEqual(
    moduleSpecifiers(ast).map((s) => s.spec),
    ['./a.js', '@modelcontextprotocol/sdk/types.js'],
  );
  assert.equal(layerOf('core/x.ts'), 'core');
  assert.equal(layerOf('index.ts'), 'entry');
});
