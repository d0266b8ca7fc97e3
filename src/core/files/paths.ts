/**
 * Where the package's own files are. This module runs from `src/core/` (sources run by tsx in
 * tests), from the one-file bundle `dist/index.js`, and from an installed copy of that bundle, so
 * the root is found by walking up to the nearest folder holding package.json, not by a fixed depth.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function packageRootFrom(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`rl-training-mcp: no package.json above ${start}; the package is incomplete`);
  }
}

/** The package root: holds `examples/`, `python/`, `ui/` and package.json. */
export const PACKAGE_ROOT = packageRootFrom(dirname(fileURLToPath(import.meta.url)));
export const BUNDLED_EXAMPLES_ROOT = join(PACKAGE_ROOT, 'examples');
export const PYTHON_HELPERS_DIR = join(PACKAGE_ROOT, 'python');
/** Starts launch_training.py with its inference server on the port a run was given. */
export const RUN_TRAINER_SCRIPT = join(PYTHON_HELPERS_DIR, 'run_trainer.py');
/** The dashboard view (MCP Apps): one self-contained HTML file, read as it is shipped. */
export const DASHBOARD_HTML = join(PACKAGE_ROOT, 'ui', 'dashboard.html');
/** A run's keeper (scripts/build.ts bundles src/keeper.ts): servers spawn it, from the sources too, so tests run the build. */
export const KEEPER_ENTRY = join(PACKAGE_ROOT, 'dist', 'keeper.js');
