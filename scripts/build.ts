/**
 * `npm run build`: type-checks the sources, then bundles the server into minified ESM: the entry
 * dist/index.js, a run's keeper dist/keeper.js (the runs' code without the MCP layer; chunks both
 * use are shared), and the chunks dist/index.js imports on first use (the tool modules and the code only they
 * use, loaded with the first tools/call), so a start reads and compiles one file instead of
 * loading hundreds of modules. dist/tools.json is the tools/list answer, written from the tool
 * modules here, so a start neither loads them nor converts their schemas (src/tools/catalog.ts).
 * execa and yaml are left out, loaded on first use from the installed dependencies
 * (src/core/onDemand.ts), so a start does not compile them; scripts/bundling.ts says what else
 * is left out. The entry's `#!/usr/bin/env node` line is kept.
 * Each file is replaced by a rename, so a server starting meanwhile (a test, `npm pack` during
 * the tests) reads the old bundle or the new one, never half of one.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import { BUNDLE_OPTIONS } from './bundling.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist');

execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.json'), '--noEmit'], { stdio: 'inherit' });
// Imported once the sources type-check: the tool list as the server would build it.
const { loadAllTools } = await import('../src/tools/index.js');
const { listedTool } = await import('../src/tools/catalog.js');
const { toolListHash } = await import('../src/server/prebuilt.js');
const toolList = JSON.stringify((await loadAllTools()).map(listedTool));
const result = await build({
  entryPoints: [join(root, 'src', 'index.ts'), join(root, 'src', 'keeper.ts')],
  outdir,
  splitting: true,
  chunkNames: 'chunk-[hash]',
  define: { RL_TOOL_LIST_SHA256: JSON.stringify(toolListHash(toolList)) },
  ...BUNDLE_OPTIONS,
  sourcemap: 'linked',
  external: ['execa', 'yaml'],
  logLevel: 'warning',
  write: false,
});

mkdirSync(outdir, { recursive: true });
const files = [...result.outputFiles, { path: join(outdir, 'tools.json'), contents: Buffer.from(toolList) }];
const written = new Set(files.map((file) => file.path));
// The chunks first: the entry that imports them replaces the old one last.
const entries = new Set([join(outdir, 'index.js'), join(outdir, 'keeper.js')]);
for (const file of files.sort((a, b) => Number(entries.has(a.path)) - Number(entries.has(b.path)))) {
  const temporary = `${file.path}.${process.pid}.tmp`;
  writeFileSync(temporary, file.contents, { mode: file.path.endsWith('.js') ? 0o755 : 0o644 });
  renameSync(temporary, file.path);
}
// What an earlier build left (the per-module output of tsc) would be packed with the bundle. The
// handshake goes too: it is recorded again below, from a server that must not answer from the old one.
for (const name of readdirSync(outdir)) {
  if (!written.has(join(outdir, name))) rmSync(join(outdir, name), { recursive: true, force: true });
}

/** The 2026-07-28 version this build's SDK speaks beside the 2025 ones, and the envelope a request of it carries. */
const MODERN_VERSION = '2026-07-28';
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION, 'io.modelcontextprotocol/clientInfo': { name: 'build', version: '0' }, 'io.modelcontextprotocol/clientCapabilities': {} };

/** Asks the built server (no handshake.json exists while it runs, so its SDK answers) each request in turn; the results. */
async function askBuiltServer(requests: Array<{ method: string; params: object }>): Promise<Array<Record<string, unknown>>> {
  const home = mkdtempSync(join(tmpdir(), 'rl-build-handshake-'));
  const child = spawn(process.execPath, [join(outdir, 'index.js')], { env: { PATH: process.env.PATH ?? '', HOME: home, RL_HOME: join(home, 'rl'), LOG_LEVEL: 'error' }, stdio: ['pipe', 'pipe', 'inherit'] });
  try {
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`the built server exited (${code}) before answering`))));
    const results: Array<Record<string, unknown>> = [];
    for (const [i, request] of requests.entries()) {
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: i + 1, ...request })}\n`);
      const { value } = await Promise.race([lines.next(), exited]);
      const answer = JSON.parse(value as string) as { result?: Record<string, unknown> };
      if (answer.result === undefined) throw new Error(`the built server refused ${request.method}: ${String(value)}`);
      results.push(answer.result);
    }
    return results;
  } finally {
    child.kill('SIGKILL');
    rmSync(home, { recursive: true, force: true });
  }
}

/**
 * dist/handshake.json: the first answers of the server just built, as its SDK gives them, with the
 * SDK's protocol versions: the 2025 initialize answer, and for 2026-07-28 the server/discover answer
 * and the fields a tools/list answer carries beside the tools. The front door
 * (src/server/frontDoor.ts) answers a start's first requests from it before the SDK is loaded.
 */
async function recordHandshake(): Promise<string> {
  const [init] = await askBuiltServer([{ method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'build', version: '0' } } }]);
  if (init!.protocolVersion !== LATEST_PROTOCOL_VERSION) throw new Error(`unexpected initialize answer: ${JSON.stringify(init)}`);
  const { protocolVersion: _negotiated, ...answer } = init!;
  const [discover, list] = await askBuiltServer([
    { method: 'server/discover', params: { _meta: ENVELOPE } },
    { method: 'tools/list', params: { _meta: ENVELOPE } },
  ]);
  const versions = discover!.supportedVersions as string[];
  if (!versions.includes(MODERN_VERSION)) throw new Error(`the built server does not speak ${MODERN_VERSION}: ${JSON.stringify(discover)}`);
  const { tools: _tools, ...listFields } = list!;
  const modern = { versions, discover, list: listFields };
  return JSON.stringify({ tool_list_sha256: toolListHash(toolList), supported_versions: SUPPORTED_PROTOCOL_VERSIONS, latest_version: LATEST_PROTOCOL_VERSION, result: answer, modern });
}
const handshake = join(outdir, 'handshake.json');
writeFileSync(`${handshake}.${process.pid}.tmp`, await recordHandshake());
renameSync(`${handshake}.${process.pid}.tmp`, handshake);
