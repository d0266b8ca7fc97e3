/**
 * How the server is bundled (scripts/build.ts), shared with the bench's floor of a server on SDK v2
 * (bench/server.bench.ts), a one-tool server with nothing of ours bundled the same way. CommonJS
 * dependencies call `require` for Node's own modules, which an ES module does not have: the
 * banner provides one.
 */
import type { BuildOptions } from 'esbuild';

export const BUNDLE_OPTIONS = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  minify: true,
  legalComments: 'none',
  banner: { js: "import { createRequire as __rlCreateRequire } from 'node:module';\nconst require = __rlCreateRequire(import.meta.url);" },
} satisfies BuildOptions;
