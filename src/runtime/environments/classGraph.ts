/**
 * Which parsed classes are environments: a class is one when a base leads to `BaseEnv` through
 * classes defined in the scanned files. Base expressions are resolved the way Python binds names:
 * a class defined earlier in the same file, an import alias (`BaseEnv as B`, `import a.b as c`),
 * a dotted path through an imported module, a relative import, a star import, and re-exports
 * (a scanned file importing a name another scanned file imports from it).
 *
 * Modules are identified by their file path written as a dotted key (`/a/b/env.py` -> `a.b.env`);
 * an import `x.y` names the scanned file whose key ends with `x.y`, the nearest one on a tie, so
 * no package layout or sys.path has to be guessed.
 */
import type { ParsedClass, ParsedModule } from './pythonReader.js';

export interface ClassRef {
  path: string;
  cls: ParsedClass;
}

interface Module {
  path: string;
  parsed: ParsedModule;
  classes: Map<string, ParsedClass[]>;
}

const BASE_ENV = Symbol('BaseEnv');
type Target = ClassRef | typeof BASE_ENV | undefined;
/** Bounds alias and re-export chains, so an import cycle between files ends. */
const MAX_HOPS = 32;

/** `/a/b/env.py` -> `a.b.env`: the same key python/discover.py anchors relative imports at. */
export function moduleKey(path: string): string {
  return path
    .replace(/\.py$/, '')
    .split('/')
    .filter((p) => p !== '')
    .join('.');
}

/** Adds `value` to the list under `key`. */
export function append<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function commonPrefixLength(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

export class ClassGraph {
  private readonly modules = new Map<string, Module>();
  private readonly bySuffix = new Map<string, Module[]>();
  private readonly verdicts = new Map<ParsedClass, boolean>();
  private readonly envParents = new Map<ParsedClass, ClassRef[]>();

  constructor(files: Iterable<{ path: string; parsed: ParsedModule }>) {
    for (const { path, parsed } of files) {
      const classes = new Map<string, ParsedClass[]>();
      for (const cls of parsed.classes) append(classes, cls.name, cls);
      const module: Module = { path, parsed, classes };
      this.modules.set(path, module);
      const parts = moduleKey(path).split('.');
      for (let i = parts.length - 1; i >= 0; i--) {
        append(this.bySuffix, parts.slice(i).join('.'), module);
      }
    }
  }

  /** Every class of every module, in file order. */
  *classes(): Iterable<ClassRef> {
    for (const module of this.modules.values()) for (const cls of module.parsed.classes) yield { path: module.path, cls };
  }

  isEnvironment(ref: ClassRef): boolean {
    const known = this.verdicts.get(ref.cls);
    if (known !== undefined) return known;
    // Provisional answer while the bases are followed: an inheritance cycle leads nowhere.
    this.verdicts.set(ref.cls, false);
    const module = this.modules.get(ref.path)!;
    let result = false;
    const parents: ClassRef[] = [];
    for (const base of ref.cls.bases) {
      const target = this.lookup(module, base.split('.'), ref.cls.line, 0);
      if (target === BASE_ENV) result = true;
      else if (target !== undefined && this.isEnvironment(target)) {
        result = true;
        parents.push(target);
      }
    }
    this.verdicts.set(ref.cls, result);
    this.envParents.set(ref.cls, parents);
    return result;
  }

  /** The environment classes `ref` directly inherits from (after isEnvironment(ref)). */
  parents(ref: ClassRef): readonly ClassRef[] {
    return this.envParents.get(ref.cls) ?? [];
  }

  /** The class and its environment bases, depth first (the order Python's MRO mostly follows). */
  chain(ref: ClassRef): ClassRef[] {
    const out: ClassRef[] = [];
    const visit = (r: ClassRef): void => {
      if (out.some((o) => o.cls === r.cls)) return; // a diamond: each class once
      out.push(r);
      for (const parent of this.parents(r)) visit(parent);
    };
    visit(ref);
    return out;
  }

  /** The parsed files, by path. */
  paths(): Iterable<string> {
    return this.modules.keys();
  }

  /** What python/discover.py read in the file at `path`. */
  parsed(path: string): ParsedModule {
    return this.modules.get(path)!.parsed;
  }

  /** The scanned files the file at `path` imports from (`import a.b`, `from a.b import f`, `from a.b import *`). */
  importedFiles(path: string): string[] {
    const module = this.modules.get(path)!;
    const found = new Set<string>();
    for (const name of [...Object.values(module.parsed.imports), ...(module.parsed.stars ?? [])]) {
      const segs = name.split('.');
      for (let k = segs.length; k >= 1; k--) {
        const target = this.nearest(segs.slice(0, k).join('.'), module);
        if (target === undefined) continue;
        if (target !== module) found.add(target.path);
        break;
      }
    }
    return [...found];
  }

  /** What the module-level function `dotted` (as written in the file at `path`) returns, when its file says. */
  functionReturn(path: string, dotted: string, hops = 0): 'list' | 'single' | undefined {
    const module = this.modules.get(path)!;
    const [head, ...rest] = dotted.split('.') as [string, ...string[]];
    if (rest.length === 0 && module.parsed.returns?.[head] !== undefined) return module.parsed.returns[head];
    if (!Object.hasOwn(module.parsed.imports, head) || hops > MAX_HOPS) return undefined;
    const segs = [...module.parsed.imports[head]!.split('.'), ...rest];
    for (let k = segs.length - 1; k >= 1; k--) {
      const target = this.nearest(segs.slice(0, k).join('.'), module);
      if (target !== undefined && target !== module) return this.functionReturn(target.path, segs.slice(k).join('.'), hops + 1);
    }
    return undefined;
  }

  /** `env_config_cls` of the class or, as Python's MRO would find it, of its environment bases. */
  configClass(ref: ClassRef): string | undefined {
    return ref.cls.config_cls ?? this.parents(ref).map((p) => this.configClass(p)).find((c) => c !== undefined);
  }

  /** What `segs` (a dotted name) means inside `module`; `line` limits local classes to those defined before it. */
  private lookup(module: Module, segs: string[], line: number | undefined, hops: number): Target {
    if (segs.at(-1) === 'BaseEnv') return BASE_ENV;
    if (hops > MAX_HOPS) return undefined;
    const [head, ...rest] = segs as [string, ...string[]];
    if (rest.length === 0) {
      const defs = module.classes.get(head) ?? [];
      const def = (line === undefined ? defs : defs.filter((d) => d.line < line)).at(-1);
      if (def) return { path: module.path, cls: def };
    }
    const imports = module.parsed.imports;
    if (Object.hasOwn(imports, head)) return this.qualified([...imports[head]!.split('.'), ...rest], module, hops + 1);
    if (rest.length === 0) {
      for (const star of module.parsed.stars ?? []) {
        const target = this.qualified([...star.split('.'), head], module, hops + 1);
        if (target !== undefined) return target;
      }
    }
    return undefined;
  }

  /** A fully qualified dotted name: the longest module prefix that is a scanned file, then the rest inside it. */
  private qualified(segs: string[], from: Module, hops: number): Target {
    if (segs.at(-1) === 'BaseEnv') return BASE_ENV;
    for (let k = segs.length - 1; k >= 1; k--) {
      const module = this.nearest(segs.slice(0, k).join('.'), from);
      if (module === undefined) continue;
      const target = this.lookup(module, segs.slice(k), undefined, hops);
      if (target !== undefined) return target;
    }
    return undefined;
  }

  private nearest(dotted: string, from: Module): Module | undefined {
    const candidates = this.bySuffix.get(dotted);
    if (candidates === undefined || candidates.length < 2) return candidates?.[0];
    return candidates.reduce((best, c) => (commonPrefixLength(c.path, from.path) > commonPrefixLength(best.path, from.path) ? c : best));
  }
}
