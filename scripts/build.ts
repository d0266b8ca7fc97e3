/**
 * `npm run build`: type-checks the sources, then bundles the server into minified ESM: the entry
 * dist/index.js and a run's keeper dist/keeper.js (the runs' code without the MCP layer), each one
 * file, so a start reads and compiles one file instead of loading hundreds of modules.
 * execa and yaml are left out, loaded on first use from the installed dependencies
 * (src/core/onDemand.ts), so a start does not compile them. The entry's `#!/usr/bin/env node`
 * line is kept. Each file is replaced by a rename, so a server starting meanwhile (a test, `npm
 * pack` during the tests) reads the old bundle or the new one, never half of one.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { BUNDLE_OPTIONS } from './bundling.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist');

execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.json'), '--noEmit'], { stdio: 'inherit' });
const result = await build({
  entryPoints: [join(root, 'src', 'index.ts'), join(root, 'src', 'keeper.ts')],
  outdir,
  ...BUNDLE_OPTIONS,
  sourcemap: 'linked',
  external: ['execa', 'yaml'],
  logLevel: 'warning',
  write: false,
});

mkdirSync(outdir, { recursive: true });
const files = result.outputFiles;
const written = new Set(files.map((file) => file.path));
// The maps first: the entry that names its map replaces the old one last.
const entries = new Set([join(outdir, 'index.js'), join(outdir, 'keeper.js')]);
for (const file of files.sort((a, b) => Number(entries.has(a.path)) - Number(entries.has(b.path)))) {
  const temporary = `${file.path}.${process.pid}.tmp`;
  writeFileSync(temporary, file.contents, { mode: file.path.endsWith('.js') ? 0o755 : 0o644 });
  renameSync(temporary, file.path);
}
// What an earlier build left (another build's files) would be packed with the bundle.
for (const name of readdirSync(outdir)) {
  if (!written.has(join(outdir, name)) && !name.endsWith('.tmp')) rmSync(join(outdir, name), { recursive: true, force: true });
}
