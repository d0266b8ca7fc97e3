/**
 * Parse results by file, valid while the file's (mtime, size) is unchanged. Kept in memory and
 * persisted under RL_HOME/cache/ so a restarted server lists a large tree without running Python.
 * The file is stamped with a format version, the helper's hash and the interpreter (a newer Python
 * accepts more syntax); a different stamp or a damaged file just means parsing again.
 * An entry holds only what its own file says: whatever depends on another file (a base class, a
 * helper module's use of managed_server) is resolved from these facts for every report, so an
 * edit to that other file alone is enough to change it.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from '../../core/logger.js';
import { DISCOVER_SCRIPT, type ParseResult } from './pythonReader.js';
import type { SourceFile } from './sourceFiles.js';
import { SERVER_CONFIGS_SHAPES } from './tinkerReadiness.js';

const FORMAT_VERSION = 1;

interface Entry {
  mtimeMs: number;
  size: number;
  result: ParseResult;
}

interface Stamp {
  version: number;
  helper: string;
  python: string;
}

type StoredEntry = [path: string, mtimeMs: number, size: number, result: ParseResult];


const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');
const isOptionalString = (v: unknown): boolean => v === undefined || typeof v === 'string';

const isOptionalTrue = (v: unknown): boolean => v === undefined || v === true;
const SHAPES: readonly unknown[] = SERVER_CONFIGS_SHAPES.filter((s) => s !== 'baseline');

function isParsedClass(v: unknown): boolean {
  if (typeof v !== 'object' || v === null) return false;
  const c = v as Record<string, unknown>;
  return (
    typeof c.name === 'string' &&
    isStringArray(c.bases) &&
    typeof c.line === 'number' &&
    isOptionalString(c.env_name) &&
    isOptionalString(c.config_cls) &&
    isOptionalString(c.doc) &&
    isOptionalTrue(c.managed_server) &&
    (c.server_configs === undefined || SHAPES.includes(c.server_configs)) &&
    isOptionalString(c.server_configs_call)
  );
}

function isReturns(v: unknown): boolean {
  return v === undefined || (typeof v === 'object' && v !== null && Object.values(v).every((s) => s === 'list' || s === 'single'));
}

/** Enough shape checking that a hand-edited or foreign file cannot feed the resolver garbage. */
function isParseResult(v: unknown): v is ParseResult {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  if (typeof r.error === 'string') return true;
  return (
    Array.isArray(r.classes) &&
    r.classes.every(isParsedClass) &&
    typeof r.imports === 'object' &&
    r.imports !== null &&
    Object.values(r.imports).every((i) => typeof i === 'string') &&
    (r.stars === undefined || isStringArray(r.stars)) &&
    isOptionalString(r.doc) &&
    isOptionalTrue(r.managed_server) &&
    isReturns(r.returns)
  );
}

function isStoredEntry(v: unknown): v is StoredEntry {
  return Array.isArray(v) && v.length === 4 && typeof v[0] === 'string' && typeof v[1] === 'number' && typeof v[2] === 'number' && isParseResult(v[3]);
}

export class ParseCache {
  private readonly entries = new Map<string, Entry>();
  private loaded = false;
  private dirty = false;
  private stampValue?: Stamp;

  constructor(
    private readonly file: string,
    private readonly python: string,
    private readonly logger: Logger,
  ) {}

  private stamp(): Stamp {
    this.stampValue ??= {
      version: FORMAT_VERSION,
      helper: createHash('sha256').update(readFileSync(DISCOVER_SCRIPT)).digest('hex').slice(0, 16),
      python: this.python,
    };
    return this.stampValue;
  }

  /** Reads the persisted cache once; any problem with it is logged and ignored. */
  async load(): Promise<void> {
    if (this.loaded) return;
    this.loaded = true;
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch {
      return; // first start
    }
    try {
      const doc = JSON.parse(text) as Stamp & { entries: unknown };
      const stamp = this.stamp();
      if (doc.version !== stamp.version || doc.helper !== stamp.helper || doc.python !== stamp.python || !Array.isArray(doc.entries)) return;
      for (const entry of doc.entries) {
        if (isStoredEntry(entry)) this.entries.set(entry[0], { mtimeMs: entry[1], size: entry[2], result: entry[3] });
      }
    } catch (err) {
      this.logger.warn({ file: this.file, err: String(err) }, 'discovery cache unreadable; parsing again');
    }
  }

  get size(): number {
    return this.entries.size;
  }

  get(file: SourceFile): ParseResult | undefined {
    const entry = this.entries.get(file.path);
    return entry && entry.mtimeMs === file.mtimeMs && entry.size === file.size ? entry.result : undefined;
  }

  set(file: SourceFile, result: ParseResult): void {
    this.entries.set(file.path, { mtimeMs: file.mtimeMs, size: file.size, result });
    this.dirty = true;
  }

  /** Drops the entries of files no longer present. */
  retain(files: readonly SourceFile[]): void {
    if (this.entries.size === files.length) return; // every file was looked up, so the keys are these
    const keep = new Set(files.map((f) => f.path));
    for (const path of this.entries.keys()) {
      if (!keep.has(path)) {
        this.entries.delete(path);
        this.dirty = true;
      }
    }
  }

  /** Writes the cache if it changed (temp file + rename, so readers never see half a file). */
  async save(): Promise<void> {
    if (!this.dirty) return;
    this.dirty = false;
    const entries: StoredEntry[] = [...this.entries].map(([path, e]) => [path, e.mtimeMs, e.size, e.result]);
    const temp = `${this.file}.${process.pid}.tmp`;
    try {
      await mkdir(dirname(this.file), { recursive: true });
      await writeFile(temp, JSON.stringify({ ...this.stamp(), entries }));
      await rename(temp, this.file);
    } catch (err) {
      await rm(temp, { force: true });
      this.logger.warn({ file: this.file, err: String(err) }, 'discovery cache not saved; the next server start parses again');
    }
  }
}
