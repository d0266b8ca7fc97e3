/** Where the package's own files are, found from this file in src/ or dist/ (both one level down). */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root: holds `examples/`, `python/`, `ui/` and package.json. */
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BUNDLED_EXAMPLES_ROOT = join(PACKAGE_ROOT, 'examples');
export const PYTHON_HELPERS_DIR = join(PACKAGE_ROOT, 'python');
/** Starts launch_training.py with its inference server on the port a run was given. */
export const RUN_TRAINER_SCRIPT = join(PYTHON_HELPERS_DIR, 'run_trainer.py');
/** The dashboard view (MCP Apps): one self-contained HTML file, read as it is shipped. */
export const DASHBOARD_HTML = join(PACKAGE_ROOT, 'ui', 'dashboard.html');
