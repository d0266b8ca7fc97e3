/**
 * What the source says about an environment's fitness for Tinker, joined across files: each file's
 * facts come from python/discover.py (and are cached per file); the class graph ties them to one
 * environment. Resolving here, at every report, keeps a fact taken from another file (a base
 * class, a `_rollouts.py` helper) current when only that other file changes.
 */
import type { ClassGraph, ClassRef } from './classGraph.js';
import type { StaticServerConfigs } from './pythonReader.js';

export interface SourceTinkerFacts {
  managed_server: boolean;
  server_configs: StaticServerConfigs;
}

export class SourceFacts {
  /** The files in which some code names managed_server. */
  private readonly users: ReadonlySet<string>;
  /** By file: it imports one of `users`. */
  private readonly importsUser = new Map<string, boolean>();

  constructor(private readonly graph: ClassGraph) {
    const names = (path: string): boolean => {
      const parsed = graph.parsed(path);
      return parsed.managed_server === true || parsed.classes.some((c) => c.managed_server === true);
    };
    this.users = new Set([...graph.paths()].filter(names));
  }

  of(ref: ClassRef): SourceTinkerFacts {
    const chain = this.graph.chain(ref);
    return { managed_server: this.managedServer(chain), server_configs: this.serverConfigs(chain) };
  }

  /** Its classes, the helper functions beside them, or a scanned module their files import. */
  private managedServer(chain: readonly ClassRef[]): boolean {
    if (chain.some((r) => r.cls.managed_server === true)) return true;
    if (this.users.size === 0) return false; // spares resolving imports in trees that never name it
    return [...new Set(chain.map((r) => r.path))].some((path) => this.graph.parsed(path).managed_server === true || this.importsOneOfUsers(path));
  }

  private importsOneOfUsers(path: string): boolean {
    let found = this.importsUser.get(path);
    if (found === undefined) {
      found = this.graph.importedFiles(path).some((imported) => this.users.has(imported));
      this.importsUser.set(path, found);
    }
    return found;
  }

  /** From the nearest config_init in the chain; none means BaseEnv's, which returns a bare ServerBaseline(). */
  private serverConfigs(chain: readonly ClassRef[]): StaticServerConfigs {
    const owner = chain.find((r) => r.cls.server_configs !== undefined || r.cls.server_configs_call !== undefined);
    if (owner === undefined) return 'single';
    const { server_configs, server_configs_call } = owner.cls;
    return server_configs ?? this.graph.functionReturn(owner.path, server_configs_call!) ?? 'unknown';
  }
}
