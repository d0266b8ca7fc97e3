/**
 * Environment discovery: the Atropos environments below the tinker-atropos
 * environments folder and every RL_ENVIRONMENTS_DIRS entry, found by reading source with Python's
 * `ast` (never importing it), and the cookbook's RL recipes and verifiers environments RL_PYTHON
 * has installed (cookbook.ts). A listing stats the files; only new or changed ones are parsed, and
 * when nothing changed the previous report is returned as is. A name two frameworks both use is
 * picked with its framework in front: `atropos:gsm8k`, `cookbook:gsm8k`.
 */
import { join } from 'node:path';
import { ParseCache } from './parseCache.js';
import { discoveryCachePath } from '../../core/files/home.js';
import { readPythonSources } from './pythonReader.js';
import { buildReport, EnvironmentSelectors, frameworkOfEnvironment, type DiscoveredEnvironment, type DiscoveryReport } from './report.js';
import { CookbookCatalog } from './cookbook.js';
import { FRAMEWORKS, type FrameworkName } from '../../core/runWords.js';
import { findSourceFiles } from './sourceFiles.js';
import { UserError } from '../../core/errors.js';
import type { CoreServices } from '../../core/services.js';
import type { Settings } from '../../core/settings.js';

export type { DiscoveredEnvironment };

/** `cookbook:gsm8k` -> the framework and the name; a selector without a known framework in front is a name. */
export function splitSelector(selector: string): { framework?: FrameworkName; name: string } {
  const colon = selector.indexOf(':');
  const head = selector.slice(0, colon);
  return colon > 0 && (FRAMEWORKS as readonly string[]).includes(head) ? { framework: head as FrameworkName, name: selector.slice(colon + 1) } : { name: selector };
}

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The Atropos report joined with the cookbook's environments: sorted by name (Atropos first on a
 * tie), and a name used by both frameworks listed in `duplicates` with the framework-qualified
 * selectors that pick each.
 */
export function joinReports(atropos: DiscoveryReport, cookbook: readonly DiscoveredEnvironment[]): DiscoveryReport {
  const environments = [...atropos.environments, ...cookbook].sort((a, b) => byText(a.name, b.name) || byText(frameworkOfEnvironment(a), frameworkOfEnvironment(b)));
  const atroposNames = new Set(atropos.environments.map((e) => e.name));
  const selectors = new EnvironmentSelectors(atropos.environments);
  const clashes = [...new Set(cookbook.map((e) => e.name).filter((n) => atroposNames.has(n)))].map((name) => {
    const both = environments.filter((e) => e.name === name);
    const select_as = both.map((e) => {
      if (e.framework === 'cookbook') return `cookbook:${name}`;
      return atropos.environments.filter((a) => a.name === name).length === 1 ? `atropos:${name}` : selectors.shortest(e);
    });
    return { name, file_paths: both.map((e) => e.file_path), select_as };
  });
  return { ...atropos, environments, duplicates: [...atropos.duplicates.filter((d) => !atroposNames.has(d.name) || !cookbook.some((c) => c.name === d.name)), ...clashes] };
}
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
  readonly cookbook: CookbookCatalog;
  private readonly cache: ParseCache;
  private last?: DiscoveryReport;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly core: CoreServices,
    private readonly options: CatalogOptions = {},
  ) {
    this.cache = new ParseCache(discoveryCachePath(core.settings.home), core.settings.python, core.logger);
    this.cookbook = new CookbookCatalog(core.settings, core.logger);
  }

  /** Lists the environments as the files are now. Throws UserError when RL_PYTHON cannot run. */
  async scan(): Promise<DiscoveryReport> {
    const [atropos, cookbook] = await Promise.all([this.scanAtropos(), this.cookbook.scan()]);
    return {
      ...joinReports(atropos, cookbook.offered),
      cookbook: cookbook.dir !== undefined ? { dir: cookbook.dir } : { missing: cookbook.missing ?? 'tinker_cookbook is not installed' },
    };
  }

  private scanAtropos(): Promise<DiscoveryReport> {
    // One scan at a time: a caller arriving during a scan waits, then finds everything cached.
    const next = this.queue.then(() => this.scanNow());
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** By name; also by class_name (or a dotted `file.Class` tail) when that picks one environment. */
  async resolve(selector: string): Promise<DiscoveredEnvironment> {
    const { environments: all } = await this.scan();
    const { framework, name } = splitSelector(selector);
    const environments = framework === undefined ? all : all.filter((e) => frameworkOfEnvironment(e) === framework);
    const selectors = new EnvironmentSelectors(environments);
    const picked = selectors.match(name);
    if (picked.length === 1) return picked[0]!;
    if (picked.length > 1) {
      const frameworks = new Set(picked.map(frameworkOfEnvironment));
      const selectAs = (e: DiscoveredEnvironment): string => (frameworks.size > 1 && picked.filter((p) => frameworkOfEnvironment(p) === frameworkOfEnvironment(e)).length === 1 ? `${frameworkOfEnvironment(e)}:${e.name}` : selectors.shortest(e));
      const candidates = picked.map((e) => ({ name: e.name, framework: frameworkOfEnvironment(e), class_name: e.class_name, file_path: e.file_path, select_as: selectAs(e) }));
      throw new UserError(`'${name}' matches ${picked.length} environments. Select one by its select_as value (its framework in front when two frameworks use the name, else its class_name).`, {
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
