/**
 * Runs python/discover.py (static `ast` reading, never an import) over the files that need a
 * parse. Python start-up costs tens of milliseconds and parsing runs at a few MB/s, so large
 * batches are split by size over up to one process per core; small ones use a single process.
 */
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { loadExeca } from '../../core/onDemand.js';
import { childEnv } from '../../core/childEnv.js';
import { UserError } from '../../core/errors.js';
import { PYTHON_HELPERS_DIR } from '../../core/files/paths.js';
import { type Settings } from '../../core/settings.js';
import type { SourceFile } from './sourceFiles.js';
import type { ServerConfigsShape } from './tinkerReadiness.js';

export const DISCOVER_SCRIPT = join(PYTHON_HELPERS_DIR, 'discover.py');

/** What source alone tells of a server configs value: a bare ServerBaseline() is a call like APIServerConfig(). */
export type StaticServerConfigs = Exclude<ServerConfigsShape, 'baseline'>;

export interface ParsedClass {
  name: string;
  /** Dotted base expressions as written (`BaseEnv`, `base.BaseEnv`, `Generic` for `Generic[T]`). */
  bases: string[];
  line: number;
  /** The class attribute `name = "..."`. */
  env_name?: string;
  /** The class attribute `env_config_cls = X`, dotted as written. */
  config_cls?: string;
  doc?: string;
  /** Code in the class body names `managed_server`. */
  managed_server?: true;
  /** What the class's own `config_init` returns as server configs, when it defines one... */
  server_configs?: StaticServerConfigs;
  /** ...or the helper it calls for them, dotted as written (`tinker_server_configs`). */
  server_configs_call?: string;
}

export interface ParsedModule {
  classes: ParsedClass[];
  /** Local alias -> dotted qualified name; relative imports are anchored at the file's directory. */
  imports: Record<string, string>;
  stars?: string[];
  doc?: string;
  /** Code outside the module's classes (its helper functions) names `managed_server`. */
  managed_server?: true;
  /** Module-level functions whose last return is a list of server configs or a single one. */
  returns?: Record<string, 'list' | 'single'>;
}

export type ParseResult = ParsedModule | { error: string };

/** Below this many bytes a second process costs more start-up than it saves. */
const BYTES_PER_PROCESS = 512 * 1024;
const MAX_PROCESSES = 4;

/** Splits files into `n` batches of similar total size (largest first into the lightest batch). */
function batches(files: readonly SourceFile[], n: number): string[][] {
  const out = Array.from({ length: n }, () => ({ bytes: 0, paths: [] as string[] }));
  for (const file of [...files].sort((a, b) => b.size - a.size)) {
    const lightest = out.reduce((a, b) => (b.bytes < a.bytes ? b : a));
    lightest.bytes += file.size;
    lightest.paths.push(file.path);
  }
  return out.map((b) => b.paths).filter((p) => p.length > 0);
}

export function processCountFor(files: readonly SourceFile[], maxProcesses = Math.min(availableParallelism(), MAX_PROCESSES)): number {
  const bytes = files.reduce((sum, f) => sum + f.size, 0);
  return Math.max(1, Math.min(maxProcesses, Math.ceil(bytes / BYTES_PER_PROCESS), files.length));
}

function interpreterError(settings: Settings, reason: string): UserError {
  return new UserError(
    `RL_PYTHON (${settings.python}) cannot run the discovery helper: ${reason}. Set RL_PYTHON to a working Python 3 interpreter ` +
      `(training needs 3.11+, e.g. <tinker-atropos>/.venv/bin/python) in the server's environment or RL_MCP_CONFIG, then restart the server.`,
    { python: settings.python, reason },
  );
}

async function runBatch(settings: Settings, paths: string[], timeoutMs: number): Promise<Map<string, ParseResult>> {
  // -I: ignore PYTHON* variables and the user site; -S: no site-packages, the helper needs only the
  // standard library and starts faster without them.
  const { execa } = await loadExeca();
  const child = await execa(settings.python, ['-I', '-S', DISCOVER_SCRIPT], {
    input: JSON.stringify(paths),
    env: childEnv(settings.processEnv),
    extendEnv: false,
    timeout: timeoutMs,
    reject: false,
    maxBuffer: 256 * 1024 * 1024,
  });
  if (child.failed) {
    const lastStderrLine = child.stderr.trim().split('\n').at(-1);
    const reason = child.timedOut
      ? `no answer within ${Math.round(timeoutMs / 1000)} s`
      : child.code === 'ENOENT'
        ? 'no such interpreter'
        : (child.code ?? (lastStderrLine || `exit code ${child.exitCode ?? child.signal}`));
    throw interpreterError(settings, reason);
  }
  const results = new Map<string, ParseResult>();
  for (const line of child.stdout.split('\n')) {
    if (line === '') continue;
    const { path, ...result } = JSON.parse(line) as ParseResult & { path: string };
    results.set(path, result);
  }
  const missing = paths.find((p) => !results.has(p));
  if (missing !== undefined) throw interpreterError(settings, `no result for ${missing}`);
  return results;
}

/** Parses `files` with RL_PYTHON; throws UserError naming RL_PYTHON when it cannot run. */
export async function readPythonSources(settings: Settings, files: readonly SourceFile[], maxProcesses?: number): Promise<Map<string, ParseResult>> {
  if (files.length === 0) return new Map();
  const timeoutMs = 60_000 + files.length * 20;
  const parts = await Promise.all(batches(files, processCountFor(files, maxProcesses)).map((paths) => runBatch(settings, paths, timeoutMs)));
  return new Map(parts.flatMap((m) => [...m]));
}
