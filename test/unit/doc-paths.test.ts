/**
 * Paths named in prose stay true: README, docs/ and the comments of the code name only files and
 * folders the repository has. Moving a file without updating what names it fails here. And no
 * file cites a document the repository does not have (a numbered section of a specification or
 * of reference notes kept elsewhere): a reader has only the repository and upstream's sources.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { REPO_ROOT } from '../helpers/tmp.js';

/** The repository's own top-level folders; a path in prose that starts with one is checked. */
const ROOTS = ['src', 'test', 'python', 'docs', 'scripts', 'bench', 'examples', 'ui', 'clients'];
const PATH = new RegExp(String.raw`(?<![\w./-])((?:${ROOTS.join('|')})/[\w.*/{},-]*[\w*}])`, 'g');

/** Every path a piece of prose names; `a/{b,c}.ts` names two, `*` matches within one name. */
export function namedPaths(prose: string): string[] {
  return [...prose.matchAll(PATH)]
    .filter((m) => prose[m.index + m[0].length] !== '<' && !isAppsMethod(m[1]!))
    .flatMap((m) => expandBraces(m[1]!.replace(/\.$/, '')));
}

/** MCP Apps' method and `_meta` names (`ui/initialize`, `ui/resourceUri`) share the ui/ folder's prefix; its files have extensions. */
function isAppsMethod(path: string): boolean {
  return path.startsWith('ui/') && !/\.\w+$/.test(path);
}

function expandBraces(path: string): string[] {
  const m = /\{([^{}]*)\}/.exec(path);
  if (!m) return [path];
  return m[1]!.split(',').flatMap((alt) => expandBraces(path.slice(0, m.index) + alt + path.slice(m.index + m[0].length)));
}

/** Whether the repository has this path; `*` in a name matches any characters of one name. */
export function exists(root: string, path: string): boolean {
  if (!path.includes('*')) return existsSync(join(root, path));
  const parts = path.split('/');
  const walk = (dir: string, i: number): boolean => {
    if (i === parts.length) return true;
    const part = parts[i]!;
    if (!part.includes('*')) return existsSync(join(dir, part)) && walk(join(dir, part), i + 1);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) return false;
    const re = new RegExp(`^${part.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
    return readdirSync(dir).some((name) => re.test(name) && walk(join(dir, name), i + 1));
  };
  return walk(root, 0);
}

/** The text of every comment in a TypeScript file. */
function tsComments(file: string, text: string): string {
  const ast = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const seen = new Set<number>();
  const out: string[] = [];
  const collect = (ranges: readonly ts.CommentRange[] | undefined): void => {
    for (const r of ranges ?? []) if (!seen.has(r.pos)) (seen.add(r.pos), out.push(text.slice(r.pos, r.end)));
  };
  const visit = (node: ts.Node): void => {
    collect(ts.getLeadingCommentRanges(text, node.getFullStart()));
    collect(ts.getTrailingCommentRanges(text, node.getEnd()));
    ts.forEachChild(node, visit);
  };
  visit(ast);
  return out.join('\n');
}

function filesUnder(dir: string, ext: RegExp): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules' || name === '__pycache__' || name.startsWith('.')) return [];
    return statSync(path).isDirectory() ? filesUnder(path, ext) : ext.test(name) ? [path] : [];
  });
}

function prose(): { file: string; text: string }[] {
  const docs = [join(REPO_ROOT, 'README.md'), ...filesUnder(join(REPO_ROOT, 'docs'), /\.md$/)].map((file) => ({ file, text: readFileSync(file, 'utf8') }));
  const code = ['src', 'test', 'scripts', 'bench'].flatMap((d) => filesUnder(join(REPO_ROOT, d), /\.ts$/)).map((file) => ({ file, text: tsComments(file, readFileSync(file, 'utf8')) }));
  const python = ['python', 'examples', join('test', 'fakes')].flatMap((d) => filesUnder(join(REPO_ROOT, d), /\.py$/)).map((file) => ({ file, text: readFileSync(file, 'utf8') }));
  return [...docs, ...code, ...python];
}

test('README, docs and comments name only paths that exist', () => {
  const missing = prose().flatMap(({ file, text }) => namedPaths(text).filter((p) => !exists(REPO_ROOT, p)).map((p) => `${relative(REPO_ROOT, file)}: ${p}`));
  assert.deepEqual([...new Set(missing)], []);
});

/** Every file of the repository (not node_modules, dist or dot-folders), `/`-separated from its root. */
function repositoryFiles(): string[] {
  return filesUnder(REPO_ROOT, /./).map((file) => relative(REPO_ROOT, file)).filter((file) => !file.startsWith('dist/'));
}

/** Source file names README and docs/ give in backticks, a folder or two before them or not: `runs/manager.ts`, `outcome.ts`. */
export function namedSourceFiles(prose: string): string[] {
  return [...prose.matchAll(/`((?:[\w.-]+\/)*[\w.-]+\.(?:ts|mjs|py|html))`/g)].map((m) => m[1]!);
}

test('README and docs/ name only source files the repository has, by their name or the end of their path', () => {
  const files = repositoryFiles();
  const docs = [join(REPO_ROOT, 'README.md'), ...filesUnder(join(REPO_ROOT, 'docs'), /\.md$/)];
  const unknown = docs.flatMap((doc) =>
    namedSourceFiles(readFileSync(doc, 'utf8'))
      .filter((name) => !files.some((file) => file === name || file.endsWith(`/${name}`)))
      .map((name) => `${relative(REPO_ROOT, doc)}: ${name}`),
  );
  assert.deepEqual([...new Set(unknown)], []);
  assert.deepEqual(namedSourceFiles('`runs/manager.ts`, `outcome.ts` and `ui/dashboard.html`, not `run.json`'), ['runs/manager.ts', 'outcome.ts', 'ui/dashboard.html']);
  assert.equal(files.some((file) => file.endsWith('/supervision/outcome.ts')), false, 'a name in the wrong folder is caught');
});

/** Identifiers docs/architecture.md gives in backticks: camelCase or PascalCase, maybe `Type.member` or `call()`; each part one name. */
export function namedIdentifiers(prose: string): string[] {
  return [...prose.matchAll(/`([A-Za-z]*[a-z][A-Za-z]*[A-Z][A-Za-z]*|[A-Z][a-z][A-Za-z]*)(?:\.([a-z][A-Za-z]*))?(?:\(\))?`/g)].flatMap((m) => (m[2] ? [m[1]!, m[2]] : [m[1]!]));
}

test('the names of code docs/architecture.md gives are names in the code', () => {
  const code = ['src', 'test', 'scripts', 'ui'].flatMap((d) => filesUnder(join(REPO_ROOT, d), /\.(ts|mjs|html)$/)).map((file) => readFileSync(file, 'utf8')).join('\n');
  const words = new Set(code.match(/[A-Za-z_$][\w$]*/g));
  const named = namedIdentifiers(readFileSync(join(REPO_ROOT, 'docs', 'architecture.md'), 'utf8'));
  assert.deepEqual([...new Set(named.filter((name) => !words.has(name)))], []);
  assert.deepEqual(namedIdentifiers('`RunManager.start`, `verdictOf`, `runTool()`, `ResourceKind`, not `running` or `RL_HOME`'), ['RunManager', 'start', 'verdictOf', 'runTool', 'ResourceKind']);
});

/**
 * Citations of documents outside the repository: any section mark (the repository's own documents
 * are named by path), or a path into the folder of shared notes or its specification file. Spelt
 * in pieces, so this file does not cite them itself.
 */
const OUTSIDE = new RegExp(['\u00a7', ['shared', '(reference|seeds)'].join('/'), ['SPEC', 'md'].join('\\.')].join('|'));

/** Every file of the repository's own text a reader gets: README, docs, and the sources of src/, test/, scripts/, bench/, python/, examples/. */
function ownFiles(): string[] {
  const roots = ['src', 'test', 'scripts', 'bench', 'python', 'examples'].flatMap((d) => filesUnder(join(REPO_ROOT, d), /\.(ts|mjs|py|sh|md|json|yaml)$/));
  return [join(REPO_ROOT, 'README.md'), ...filesUnder(join(REPO_ROOT, 'docs'), /\.md$/), ...roots];
}

test('no file cites a document outside the repository', () => {
  const citing = ownFiles().filter((file) => OUTSIDE.test(readFileSync(file, 'utf8'))).map((file) => relative(REPO_ROOT, file));
  assert.deepEqual(citing, []);
  for (const cite of [`SPEC \u00a74.4`, `(tinker-atropos.md \u00a71.5)`, `${'shared'}/reference/upstream-behaviour.md`, `see ${'SPEC'}.md`]) assert.match(cite, OUTSIDE, cite);
  assert.doesNotMatch('see docs/architecture.md and atroposlib/api/server.py', OUTSIDE);
});

test('the check can fail: a moved file, a brace list and a wildcard are read as paths', () => {
  assert.deepEqual(namedPaths('see `src/mcp/tools/define.ts`, src/tools/{define,registry}.ts, src/tools/rl_<name>.ts, ui/initialize and src/tools/rl_*.ts.'), [
    'src/mcp/tools/define.ts',
    'src/tools/define.ts',
    'src/tools/registry.ts',
    'src/tools/rl_*.ts',
  ]);
  assert.equal(exists(REPO_ROOT, 'src/mcp/tools/define.ts'), false);
  assert.equal(exists(REPO_ROOT, 'src/tools/rl_*.ts'), true);
  assert.equal(exists(REPO_ROOT, 'src/tools/zz_*.ts'), false);
});
