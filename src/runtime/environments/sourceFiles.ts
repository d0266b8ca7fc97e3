/**
 * The files discovery reads: every `*.py` below the scanned directories, without dunder files
 * (`__init__.py`), hidden entries, virtualenvs and vendored or cache folders, each with the
 * (mtime, size) pair the parse cache is keyed by. Private modules (`_rollouts.py`) are read for
 * what they give the environments that import them, but never offered as environments.
 *
 * Synchronous on purpose: a stat takes microseconds, less than a round trip through libuv's thread
 * pool, so a tree of 1000 files is listed in ~8 ms this way against ~20 ms with fs/promises.
 */
import { readdirSync, realpathSync, statSync, type Dirent, type Stats } from 'node:fs';
import { join } from 'node:path';

export interface SourceFile {
  path: string;
  mtimeMs: number;
  size: number;
}

const SKIPPED_DIRS = new Set(['node_modules', 'venv', 'site-packages', 'dist-packages', '__pycache__', '_vendor', 'vendor']);
/** Deep enough for any real layout; stops a misconfigured root (e.g. `/`) from walking forever. */
const MAX_DEPTH = 12;

function entriesOf(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    // A missing or unreadable directory holds no environments; it never fails the listing.
    return [];
  }
}

function statOf(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined; // vanished or unreadable: not a candidate
  }
}

function kindOf(dir: string, entry: Dirent): 'dir' | 'file' | undefined {
  if (entry.isDirectory()) return 'dir';
  if (entry.isFile()) return 'file';
  if (!entry.isSymbolicLink()) return undefined;
  const target = statOf(join(dir, entry.name));
  return target?.isDirectory() ? 'dir' : target?.isFile() ? 'file' : undefined;
}

function realDir(dir: string): string | undefined {
  try {
    return realpathSync(dir);
  } catch {
    return undefined;
  }
}

function collect(dir: string, depth: number, out: Set<string>, visited: Set<string>): void {
  // By real path, so a symlink loop or two roots sharing a folder are walked once.
  const real = realDir(dir);
  if (real === undefined || visited.has(real)) return;
  visited.add(real);
  const entries = entriesOf(dir);
  if (entries.some((e) => e.name === 'pyvenv.cfg')) return; // a virtualenv, whatever its name
  for (const entry of entries) {
    const name = entry.name;
    if (name.startsWith('.')) continue;
    const kind = kindOf(dir, entry);
    if (kind === 'file' && name.endsWith('.py') && !name.startsWith('__')) out.add(join(dir, name));
    else if (kind === 'dir' && !SKIPPED_DIRS.has(name) && depth < MAX_DEPTH) collect(join(dir, name), depth + 1, out, visited);
  }
}

/** The `.py` files below `dirs`, sorted by path; files that vanish while being listed are left out. */
export function findSourceFiles(dirs: readonly string[]): SourceFile[] {
  const paths = new Set<string>();
  const visited = new Set<string>();
  for (const dir of dirs) collect(dir, 0, paths, visited);
  const files: SourceFile[] = [];
  for (const path of [...paths].sort()) {
    const st = statOf(path);
    if (st?.isFile()) files.push({ path, mtimeMs: st.mtimeMs, size: st.size });
  }
  return files;
}
