/**
 * How the server is bundled (scripts/build.ts), shared with the bench's floor of a server on SDK v2
 * (bench/server.bench.ts), a one-tool server with nothing of ours bundled the same way. What the bundle
 * leaves out, and why:
 * - zod's translations of its error messages into other languages: the server speaks English
 *   (zod's default); the other locales were a third of zod's code;
 * - the SDK's Ajv validator at start: the SDK's Node shims are served by src/server/sdkShims.ts,
 *   which loads Ajv on its first use (Ajv was half of the SDK's chunk).
 * CommonJS dependencies call `require` for Node's own modules, which an ES module does not
 * have: the banner provides one.
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildOptions, Plugin } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** zod's index of locales, reduced to the one it configures by default. */
const englishOnly: Plugin = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/](classic|core)[\\/]/.test(args.importer) ? { path: join(dirname(args.importer), '..', 'locales', 'en.js'), namespace: 'zod-en' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-en' }, (args) => ({ contents: `export { default as en } from ${JSON.stringify(args.path)};`, resolveDir: dirname(args.path) }));
  },
};

/** The SDK's Node shims, served by src/server/sdkShims.ts. */
const lazyValidator: Plugin = {
  name: 'sdk-shims-lazy-validator',
  setup(b) {
    b.onResolve({ filter: /^@modelcontextprotocol\/server\/_shims$/ }, () => ({ path: join(root, 'src', 'server', 'sdkShims.ts') }));
  },
};

export const BUNDLE_OPTIONS = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  minify: true,
  legalComments: 'none',
  plugins: [englishOnly, lazyValidator],
  banner: { js: "import { createRequire as __rlCreateRequire } from 'node:module';\nconst require = __rlCreateRequire(import.meta.url);" },
} satisfies BuildOptions;
