/**
 * The discovery report built from parsed files: trainable environments, abstract bases left out,
 * ambiguous names, unparseable files. Also how a user's selector (a name, a class name or a dotted
 * `file.Class` path) picks one environment.
 */
import { basename } from 'node:path';
import { append, ClassGraph, moduleKey, type ClassRef } from './classGraph.js';
import type { ParsedModule, ParseResult, StaticServerConfigs } from './pythonReader.js';
import { SourceFacts } from './sourceFacts.js';
import type { FrameworkName } from '../../core/runWords.js';

export interface DiscoveredEnvironment {
  name: string;
  class_name: string;
  /** Absolute. */
  file_path: string;
  description: string;
  /** `env_config_cls` (own or inherited), else "BaseEnvConfig". */
  config_class: string;
  /** Its classes, or modules their files import, call `managed_server` (needed to train on Tinker). */
  managed_server: boolean;
  /** What its config_init returns as server configs, as far as the source tells. */
  server_configs: StaticServerConfigs;
  /** The framework that trains it; absent: Atropos (every environment found in source folders). */
  framework?: FrameworkName;
  /** A cookbook environment's recipe (`math_rl`; `verifiers_rl` for a verifiers environment). */
  recipe?: string;
  /** A verifiers environment's id, as `verifiers_rl` loads it. */
  vf_env_id?: string;
  /** The batches a recipe's dataset holds where its source says so (math_rl's env=arithmetic: 100): it trains min(max_steps, those). */
  dataset_batches?: DatasetBatches[];
  /** A cookbook recipe's imports RL_PYTHON cannot resolve (an optional extra not installed), and how to install them. */
  lacks?: RecipeLacks;
  /** Why its recipe cannot train in the installed cookbook version (read from its source: verifiers_rl at v0.5.x). */
  cannot_train?: string;
}

export interface RecipeLacks {
  modules: string[];
  /** The tinker_cookbook extras that bring them. */
  extras?: string[];
  /** A start itself fails (a module imported as the recipe loads); else only code that runs later does. */
  at_start: boolean;
  /** What a start would do and the command that fixes it. */
  install: string;
}

export interface DatasetBatches {
  field: string;
  value: string;
  batches: number;
}

/** The framework of a discovered environment. */
export const frameworkOfEnvironment = (env: Pick<DiscoveredEnvironment, 'framework'>): FrameworkName => env.framework ?? 'atropos';

export interface DiscoveryReport {
  /** Trainable environments, sorted by name. */
  environments: DiscoveredEnvironment[];
  /** Files that could not be read or parsed. */
  skipped: { file_path: string; reason: string }[];
  /** Names used by more than one environment; `select_as[i]` picks the one in `file_paths[i]`. */
  duplicates: { name: string; file_paths: string[]; select_as: string[] }[];
  /** Environment classes without a `name` that other environments subclass: bases, not trainable. */
  abstract: { class_name: string; file_path: string }[];
  /** Where RL_PYTHON's tinker_cookbook is, or why it has none (catalog.ts joins it in). */
  cookbook?: { dir?: string; missing?: string };
}

const DEFAULT_CONFIG_CLASS = 'BaseEnvConfig';

function stem(path: string): string {
  return basename(path).replace(/\.py$/, '');
}

/** `_x.py`: a helper module. Read for what its classes and functions give others, never offered itself. */
function isPrivate(path: string): boolean {
  return basename(path).startsWith('_');
}

function toEnvironment(graph: ClassGraph, facts: SourceFacts, ref: ClassRef, moduleDoc: string | undefined): DiscoveredEnvironment {
  return {
    name: ref.cls.env_name ?? stem(ref.path),
    class_name: ref.cls.name,
    file_path: ref.path,
    description: ref.cls.doc ?? moduleDoc ?? `Environment from ${basename(ref.path)}`,
    config_class: graph.configClass(ref)?.split('.').at(-1) ?? DEFAULT_CONFIG_CLASS,
    ...facts.of(ref),
  };
}

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export function buildReport(files: Iterable<{ path: string; result: ParseResult }>): DiscoveryReport {
  const skipped: DiscoveryReport['skipped'] = [];
  const parsed: { path: string; parsed: ParsedModule }[] = [];
  for (const { path, result } of files) {
    if ('error' in result) skipped.push({ file_path: path, reason: result.error });
    else parsed.push({ path, parsed: result });
  }
  const moduleDocs = new Map(parsed.map((f) => [f.path, f.parsed.doc]));
  const graph = new ClassGraph(parsed);
  const environments = [...graph.classes()].filter((ref) => graph.isEnvironment(ref));
  const subclassed = new Set(environments.flatMap((ref) => graph.parents(ref).map((p) => p.cls)));
  const isAbstract = (ref: ClassRef): boolean => ref.cls.env_name === undefined && subclassed.has(ref.cls);

  const facts = new SourceFacts(graph);
  const trainable = environments
    .filter((ref) => !isAbstract(ref) && !isPrivate(ref.path))
    .map((ref) => toEnvironment(graph, facts, ref, moduleDocs.get(ref.path)))
    .sort((a, b) => byText(a.name, b.name) || byText(a.file_path, b.file_path) || byText(a.class_name, b.class_name));
  return {
    environments: trainable,
    skipped: skipped.sort((a, b) => byText(a.file_path, b.file_path)),
    duplicates: duplicatesOf(trainable),
    abstract: environments.filter(isAbstract).map((ref) => ({ class_name: ref.cls.name, file_path: ref.path })),
  };
}

function duplicatesOf(environments: readonly DiscoveredEnvironment[]): DiscoveryReport['duplicates'] {
  const byName = new Map<string, DiscoveredEnvironment[]>();
  for (const env of environments) append(byName, env.name, env);
  const ambiguous = [...byName].filter(([, envs]) => envs.length > 1);
  if (ambiguous.length === 0) return [];
  const selectors = new EnvironmentSelectors(environments);
  return ambiguous.map(([name, envs]) => ({ name, file_paths: envs.map((e) => e.file_path), select_as: envs.map((e) => selectors.shortest(e)) }));
}

/**
 * What a user's selector picks: the environments with that name, else those whose class path
 * (`a.b.env.MyEnv` for MyEnv in /a/b/env.py) ends with it: `MyEnv`, `env.MyEnv`, ...
 */
export class EnvironmentSelectors {
  private readonly byName = new Map<string, DiscoveredEnvironment[]>();
  private readonly byTail = new Map<string, DiscoveredEnvironment[]>();
  private readonly paths = new Map<DiscoveredEnvironment, string[]>();

  constructor(environments: readonly DiscoveredEnvironment[]) {
    for (const env of environments) {
      append(this.byName, env.name, env);
      const parts = `${moduleKey(env.file_path)}.${env.class_name}`.split('.');
      this.paths.set(env, parts);
      for (let k = 1; k <= parts.length; k++) append(this.byTail, parts.slice(-k).join('.'), env);
    }
  }

  match(selector: string): readonly DiscoveredEnvironment[] {
    return this.byName.get(selector) ?? this.byTail.get(selector) ?? [];
  }

  /** The shortest selector that picks `env` alone: its class name, else `file.Class`, `dir.file.Class`, ... */
  shortest(env: DiscoveredEnvironment): string {
    const parts = this.paths.get(env)!;
    for (let k = 1; k < parts.length; k++) {
      const selector = parts.slice(-k).join('.');
      const picked = this.match(selector);
      if (picked.length === 1 && picked[0] === env) return selector;
    }
    return parts.join('.');
  }
}

/** What one rl_list_environments answer shows of the environments: a page, bounded in size too. */
export interface EnvironmentPage<T> {
  shown: T[];
  /** Environments matching the search (all of them without one). */
  total: number;
  /** Pass as `offset` for the next page; absent on the last page. */
  next_offset?: number;
}

/** Descriptions are docstrings: the first part says what the environment is. */
export const MAX_DESCRIPTION_CHARS = 300;

/**
 * `limit` environments from `offset` whose name, class or description contains `search`
 * (case-insensitive), fewer when their JSON would pass `maxChars`.
 */
export function environmentPage<T extends { name: string; class_name: string; description: string }>(
  all: readonly T[],
  query: { offset: number; limit: number; search?: string },
  maxChars: number,
): EnvironmentPage<T> {
  const needle = query.search?.toLowerCase();
  const matching = needle === undefined ? all : all.filter((e) => [e.name, e.class_name, e.description].some((s) => s.toLowerCase().includes(needle)));
  const shown: T[] = [];
  let chars = 0;
  for (const env of matching.slice(query.offset, query.offset + query.limit)) {
    const description = env.description.length > MAX_DESCRIPTION_CHARS ? `${env.description.slice(0, MAX_DESCRIPTION_CHARS)}...` : env.description;
    const entry = { ...env, description };
    chars += JSON.stringify(entry).length + 1;
    if (chars > maxChars && shown.length > 0) break;
    shown.push(entry);
  }
  const end = query.offset + shown.length;
  return { shown, total: matching.length, ...(end < matching.length ? { next_offset: end } : {}) };
}
