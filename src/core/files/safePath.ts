/**
 * Turning names that arrive from clients (URI path segments) into files without leaving the
 * directory they belong to. URL parsing has already resolved literal and `%2e` dot segments
 * by the time a name reaches here; what can still arrive is encoded separators (`%2f`, `%5c`),
 * NUL bytes, empty segments (an absolute path after `//`) and symlinks leading elsewhere.
 * Each is refused with the reason, as a UserError: the server keeps answering.
 */
import { realpathSync, statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { UserError } from '../errors.js';

/** The thing asked for does not exist (yet): callers say what to do next. */
export class NotFoundError extends UserError {}

const MAX_PATH_CHARS = 1024;

function refused(what: string, raw: string, reason: string): UserError {
  return new UserError(`Refused ${what} '${raw.slice(0, 200)}': ${reason}.`, { refused: raw.slice(0, 200), reason });
}

/** Splits a client-given relative path into decoded segments, refusing anything that could leave its directory. */
export function safeSegments(raw: string, what: string): string[] {
  if (raw.length === 0) throw refused(what, raw, 'it is empty');
  if (raw.length > MAX_PATH_CHARS) throw refused(what, raw, `it is longer than ${MAX_PATH_CHARS} characters`);
  if (raw.startsWith('/')) throw refused(what, raw, 'absolute paths are not served');
  return raw.split('/').map((segment) => {
    let name: string;
    try {
      name = decodeURIComponent(segment);
    } catch {
      throw refused(what, raw, 'it holds a malformed %-escape');
    }
    if (name === '') throw refused(what, raw, 'it holds an empty path segment');
    if (name === '.' || name === '..') throw refused(what, raw, "'.' and '..' segments are not allowed");
    if (name.includes('\0')) throw refused(what, raw, 'it holds a NUL byte');
    if (name.includes('/') || name.includes('\\')) throw refused(what, raw, 'it holds an encoded path separator (absolute or traversing paths are not served)');
    return name;
  });
}

/** One decoded path segment (an id or a name), refused unless it matches `pattern`. */
export function safeName(raw: string, what: string, pattern: RegExp, expected: string): string {
  const segments = safeSegments(raw, what);
  if (segments.length !== 1 || !pattern.test(segments[0]!)) throw refused(what, raw, `expected ${expected}`);
  return segments[0]!;
}

/*
 * The one rule for every reader of RL_HOME (resources, tools, the run registry): what resolves
 * outside the directory it belongs to is refused, in the words below, and never read. Sync: a
 * realpath and a stat are cheap, and the run registry reads synchronously.
 */

/**
 * The real path of the directory `root/child`, refused when `child` is a symlink leading out of
 * `root` (its files could then live anywhere); undefined when it does not exist.
 */
export function realChildDir(root: string, child: string, what: string): string | undefined {
  const realRoot = realPath(root);
  const real = realRoot && realPath(join(root, child));
  if (real === undefined) return undefined;
  if (real !== join(realRoot!, child)) throw refused(what, child, `its directory is a symlink leading outside ${root}`);
  return real;
}

function realPath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
}

/**
 * The real path of the regular file `path`, which must lie inside `realAnchor` (a real path)
 * once symlinks are followed; undefined when it does not exist. FIFOs and devices are refused
 * because opening one would block or read without end.
 */
export function realFileWithin(realAnchor: string, path: string, what: string): string | undefined {
  const real = realPath(path);
  if (real === undefined) return undefined;
  if (!real.startsWith(realAnchor + sep)) throw refused(what, path, `it is a symlink leading outside ${realAnchor}`);
  if (!statSync(real).isFile()) throw refused(what, path, 'it is not a regular file');
  return real;
}

/** The file `name` of the directory `root/child`, both held to the rule above; undefined when either is missing. */
export function realFileOfChild(root: string, child: string, name: string, what: string): string | undefined {
  const realChild = realChildDir(root, child, what);
  return realChild === undefined ? undefined : realFileWithin(realChild, join(root, child, name), `${name} of ${what} ${child}`);
}

/** Names of the subdirectories of `root` that match `pattern` (ids of runs, tests); none when `root` is missing. */
export async function namedSubdirs(root: string, pattern: RegExp): Promise<string[]> {
  try {
    const entries = await readdir(root, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory() && pattern.test(e.name)).map((e) => e.name);
  } catch (err) {
    if (isMissing(err)) return [];
    throw err;
  }
}

export function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
