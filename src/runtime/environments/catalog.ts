/**
 * Environment discovery: the Atropos environments below the tinker-atropos
 * environments folder and every RL_ENVIRONMENTS_DIRS entry, found by reading source with Python's
 * `ast` (never importing it). A listing stats the files; only new or changed ones are parsed, and
 * when nothing changed the previous report is returned as is.
 */
import { join } from 'node:path';
import { ParseCache } from './parseCache.js';
import { discoveryCachePath } from '../../core/files/home.js';
import { readPythonSources } from './pythonReader.js';
import { buildReport, EnvironmentSelectors, type DiscoveredEnvironment, type DiscoveryReport } from './report.js';
import { findSourceFiles } from './sourceFiles.js';
import { UserError } from '../../core/errors.js';
import type { CoreServices } from '../../core/services.js';
import type { Settings } from '../../core/settings.js';

export type { DiscoveredEnvironment };

/** The directories scanned, in order: the checkout's environments folder, then RL_ENVIRONMENTS_DIRS. */
export function environmentDirs(settings: Settings): string[] {
  return [join(settings.root, 'tinker_atropos', 'environments'), ...settings.environmentsDirs];
}

const MAX_AVAILABLE = 50;

/** The names to offer for an unknown one: all of them, or the related ones first when there are many. */
function availableHints(environments: readonly DiscoveredEnvironment[], wanted: string): Record<string, unknown> {
  const names = [...new Set(environments.map((e) => e.name))];
  if (names.length <= MAX_AVAILABLE) return { available: names };
  const w = wanted.toLowerCase();
  const related = (n: string): boolean => n.toLowerCase().includes(w) || w.includes(n.toLowerCase());
  return { available: [...names.filter(related), ...names.filter((n) => !related(n))].slice(0, MAX_AVAILABLE), available_total: names.length };
}

export interface CatalogOptions {
  /** Upper bound on parallel helper processes (default: one per core, at most 4). */
  maxProcesses?: number;
}

export class EnvironmentCatalog {
  private readonly cache: ParseCache;
  private last?: DiscoveryReport;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly core: CoreServices,
    private readonly options: CatalogOptions = {},
  ) {
    this.cache = new ParseCache(discoveryCachePath(core.settings.home), core.settings.python, core.logger);
  }

  /** Lists the environments as the files are now. Throws UserError when RL_PYTHON cannot run. */
  scan(): Promise<DiscoveryReport> {
    // One scan at a time: a caller arriving during a scan waits, then finds everything cached.
    const next = this.queue.then(() => this.scanNow());
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** By name; also by class_name (or a dotted `file.Class` tail) when that picks one environment. */
  async resolve(name: string): Promise<DiscoveredEnvironment> {
    const { environments } = await this.scan();
    const selectors = new EnvironmentSelectors(environments);
    const picked = selectors.match(name);
    if (picked.length === 1) return picked[0]!;
    if (picked.length > 1) {
      const candidates = picked.map((e) => ({ name: e.name, class_name: e.class_name, file_path: e.file_path, select_as: selectors.shortest(e) }));
      throw new UserError(`'${name}' matches ${picked.length} environments. Select one by its class_name (the select_as value when class names repeat too).`, {
        available: candidates.map((c) => c.select_as),
        candidates,
      });
    }
    throw new UserError(`Unknown environment '${name}'. Use rl_list_environments to see the environments and their names.`, availableHints(environments, name));
  }

  private async scanNow(): Promise<DiscoveryReport> {
    const started = performance.now();
    const { settings, logger } = this.core;
    await this.cache.load();
    const files = findSourceFiles(environmentDirs(settings));
    const misses = files.filter((f) => this.cache.get(f) === undefined);
    if (this.last !== undefined && misses.length === 0 && this.cache.size === files.length) return this.last;

    const parsed = await readPythonSources(settings, misses, this.options.maxProcesses);
    for (const file of misses) this.cache.set(file, parsed.get(file.path)!);
    this.cache.retain(files);
    const report = buildReport(files.map((f) => ({ path: f.path, result: this.cache.get(f)! })));
    await this.cache.save();
    this.last = report;
    logger.debug({ files: files.length, parsed: misses.length, environments: report.environments.length, ms: Math.round(performance.now() - started) }, 'environments discovered');
    return report;
  }
}
