/**
 * The selection on disk, RL_HOME/selection.json: what rl_select_environment chose and
 * rl_edit_config changed, shared by every server on RL_HOME, so that a restarted server, or a
 * client that starts a server per call, carries on from it. The file is replaced atomically under
 * its lock (an edit is a read-modify-write: two servers editing at once keep both edits), read
 * when the server starts and again only when a stat says it changed. It keeps the fields as they
 * were read, so no server imports the environment again to use it; the environment file's stamp
 * tells when they must be read again.
 */
import { readFileSync, statSync, type Stats } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import * as z from 'zod';
import { zString, zNumber, zInt, zBoolean } from '../../core/schemaLeaves.js';
import { writeAtomically } from '../../core/files/atomicFile.js';
import { diskFullError, isDiskFull } from '../../core/files/diskFull.js';
import { UserError } from '../../core/errors.js';
import { selectionPath } from '../../core/files/home.js';
import type { JsonValue } from '../../core/json.js';
import type { Logger } from '../../core/logger.js';
import { FileLock } from '../../core/os/fileLock.js';
import type { DiscoveredEnvironment } from '../environments/catalog.js';
import type { FieldInfo } from './fields.js';
import { FIELD_JSON, fieldJson, fileStamp, type FileStamp, type Introspection } from './introspection.js';
import { SERVER_CONFIGS_SHAPES, type TinkerFacts } from '../environments/tinkerReadiness.js';
import { FRAMEWORKS } from '../../core/runWords.js';

export interface SelectedConfig {
  environment: DiscoveredEnvironment;
  introspection: 'import' | 'static';
  /** Why the environment could not be imported, when `introspection` is static. */
  import_error?: string;
  /** type(config_init()[0]) (import), or what the source says it is (static). */
  config_class: string;
  /** Every field of the environment's config class. */
  fields: FieldInfo[];
  /** From the import when it worked, else what discovery read from the source. */
  tinker: TinkerFacts;
  /** Current values of the NON-locked env fields (null = unset); wandb_name always set. */
  values: Record<string, JsonValue>;
  /** Run-level: the W&B project of the run; default settings.wandb.project. */
  wandbProject: string;
  /** When rl_select_environment chose it (ISO 8601). */
  selectedAt: string;
  /** The environment file `fields` were read from: when it changes, they are read again. */
  source: FileStamp;
}

const SAVED = z.object({
  format: z.literal(1),
  selected_at: z.iso.datetime(),
  environment: z.object({
    name: zString,
    class_name: zString,
    file_path: zString,
    description: zString,
    config_class: zString,
    managed_server: zBoolean,
    server_configs: z.enum(SERVER_CONFIGS_SHAPES).exclude(['baseline']),
    framework: z.enum(FRAMEWORKS).optional(),
    recipe: zString.optional(),
    vf_env_id: zString.optional(),
    dataset_batches: z.array(z.object({ field: zString, value: zString, batches: zInt })).optional(),
  }),
  tinker: z.object({ managed_server: zBoolean, server_configs: z.enum(SERVER_CONFIGS_SHAPES) }),
  environment_file: z.object({ mtime_ms: zNumber, size: zNumber }),
  introspection: z.enum(['import', 'static']),
  import_error: zString.optional(),
  config_class: zString,
  fields: z.array(FIELD_JSON),
  values: z.record(zString, z.json()),
  wandb_project: zString.min(1),
});

function toJson(s: SelectedConfig): z.input<typeof SAVED> {
  return {
    format: 1,
    selected_at: s.selectedAt,
    environment: s.environment,
    environment_file: s.source,
    introspection: s.introspection,
    ...(s.import_error !== undefined ? { import_error: s.import_error } : {}),
    config_class: s.config_class,
    fields: s.fields.map(fieldJson),
    tinker: s.tinker,
    values: s.values,
    wandb_project: s.wandbProject,
  };
}

/** The file's content, or why it cannot be used; undefined when there is no file. */
type Loaded = { saved: SelectedConfig } | { damaged: string } | undefined;

function parseSaved(text: string): Loaded {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { damaged: 'it is not JSON' };
  }
  const parsed = SAVED.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { damaged: `${issue.path.join('.') || 'the file'}: ${issue.message}` };
  }
  const d = parsed.data;
  const stray = Object.keys(d.values).find((name) => !d.fields.some((f) => f.name === name));
  if (stray !== undefined) return { damaged: `values.${stray} is not a field of ${d.config_class}` };
  const { format: _format, selected_at, environment_file, wandb_project, ...rest } = d;
  return { saved: { ...rest, selectedAt: selected_at, source: environment_file, wandbProject: wandb_project } };
}

/** How the fields read now differ from the saved ones, by name; undefined when they are the same. */
function fieldChanges(saved: FieldInfo[], now: FieldInfo[]): { added: string[]; removed: string[]; changed: string[] } | undefined {
  // Compared as JSON: the saved fields came back through it (no undefined members, another key order).
  const plain = (f: FieldInfo): unknown => JSON.parse(JSON.stringify(f));
  const before = new Map(saved.map((f) => [f.name, f]));
  const after = new Map(now.map((f) => [f.name, f]));
  const added = now.filter((f) => !before.has(f.name)).map((f) => f.name);
  const removed = saved.filter((f) => !after.has(f.name)).map((f) => f.name);
  const changed = now.filter((f) => before.has(f.name) && !isDeepStrictEqual(plain(f), plain(before.get(f.name)!))).map((f) => f.name);
  return added.length + removed.length + changed.length > 0 ? { added, removed, changed } : undefined;
}

function statOf(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** The guarded section is a read and a rename: anything longer means a stuck holder. */
const WRITE_LOCK_TIMEOUT_MS = 5_000;
const NO_FILE = 'none';

export class SelectionFile {
  readonly path: string;
  /** The last read and the stat it was made at. */
  private last?: { signature: string; loaded: Loaded };

  constructor(
    private readonly home: string,
    private readonly logger: Logger,
  ) {
    this.path = selectionPath(home);
  }

  /** What the file holds; parsed again only when a stat says it changed since the last read. */
  load(): Loaded {
    const signature = this.signature();
    if (this.last?.signature !== signature) {
      const loaded = signature === NO_FILE ? undefined : this.read();
      if (loaded !== undefined && 'damaged' in loaded) this.logger.warn({ file: this.path, reason: loaded.damaged }, 'the saved selection cannot be used');
      this.last = { signature, loaded };
    }
    return this.last.loaded;
  }

  /** The saved selection; a UserError with the fix when there is none or the file is damaged. */
  require(): SelectedConfig {
    const loaded = this.load();
    if (loaded === undefined) throw new UserError('No environment selected. Use rl_select_environment(name) first.');
    if ('damaged' in loaded) {
      throw new UserError(`The saved selection ${this.path} cannot be used (${loaded.damaged}). Select an environment again with rl_select_environment(name): that replaces the file.`, {
        selection_file: this.path,
      });
    }
    return loaded.saved;
  }

  /** Saves a new selection over whatever the file holds. */
  replace(config: SelectedConfig): SelectedConfig {
    return this.locked(() => this.save(config));
  }

  /**
   * Read-modify-write under the lock: `mutate` changes a copy of the selection as the file holds
   * it now and may return false to save nothing; a throw saves nothing either.
   */
  update(mutate: (config: SelectedConfig) => boolean | void): SelectedConfig {
    return this.locked(() => {
      const current = this.require();
      const copy = structuredClone(current);
      return mutate(copy) === false ? current : this.save(copy);
    });
  }

  /**
   * The selection, checked against its environment: a file gone, or fields that differ from the
   * saved ones (the environment was edited or updated since), are refused with the fix. `read`
   * reads the fields again, only when the file changed; when they are the same the edits still
   * fit, and the file's new stamp is saved so that it is not read again.
   */
  async verified(read: (environment: DiscoveredEnvironment) => Promise<Introspection>): Promise<SelectedConfig> {
    const selected = this.require();
    const { environment, selectedAt } = selected;
    const info = statOf(environment.file_path);
    if (!info?.isFile()) {
      throw new UserError(
        `The selected environment '${environment.name}' is gone: ${environment.file_path} no longer exists (selected at ${selectedAt}). Select another with rl_select_environment(name); rl_list_environments lists them.`,
        { selection_file: this.path },
      );
    }
    if (isDeepStrictEqual(fileStamp(info), selected.source)) return selected;
    const found = await read(environment);
    const changes = fieldChanges(selected.fields, found.fields);
    if (changes !== undefined) throw this.staleFields(selected, found, changes);
    return this.update((s) => {
      if (s.selectedAt !== selectedAt || s.environment.file_path !== environment.file_path) return false;
      s.source = found.source;
    });
  }

  private staleFields(selected: SelectedConfig, found: Introspection, changes: NonNullable<ReturnType<typeof fieldChanges>>): UserError {
    const { name, file_path } = selected.environment;
    const listed = Object.entries(changes).flatMap(([how, names]) => (names.length > 0 ? [`${how}: ${names.join(', ')}`] : []));
    const importError = found.introspection === 'static' && selected.introspection === 'import' ? ` It cannot be imported now (${found.import_error}).` : '';
    return new UserError(
      `The config fields of '${name}' changed since it was selected at ${selected.selectedAt} (${file_path} was modified; ${listed.join('; ')}).${importError} ` +
        `Select it again with rl_select_environment('${name}') to load them; that resets the config to its config_init() values, so apply your edits again (saved_config holds them).`,
      { fields_added: changes.added, fields_removed: changes.removed, fields_changed: changes.changed, saved_config: selected.values, selection_file: this.path },
    );
  }

  private locked<T>(work: () => T): T {
    const lock = new FileLock(`${this.path}.lock`);
    lock.acquireBlocking(WRITE_LOCK_TIMEOUT_MS);
    try {
      return work();
    } finally {
      lock.release();
    }
  }

  /** Called under the lock: every writer holds it, so the stat taken after the write is of this write. */
  private save(config: SelectedConfig): SelectedConfig {
    try {
      writeAtomically(this.path, `${JSON.stringify(toJson(config), null, 1)}\n`);
    } catch (err) {
      if (isDiskFull(err)) throw diskFullError(this.home);
      const code = (err as NodeJS.ErrnoException).code ?? String(err);
      throw new UserError(`Cannot save the selection to ${this.path} (${code}): RL_HOME must be writable by the server.`, { selection_file: this.path });
    }
    this.last = { signature: this.signature(), loaded: { saved: config } };
    return config;
  }

  private signature(): string {
    try {
      const info = statSync(this.path, { throwIfNoEntry: false });
      return info === undefined ? NO_FILE : `${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
    } catch (err) {
      // Not stat-able (EACCES, ENOTDIR): the read says why.
      return `unreadable:${(err as NodeJS.ErrnoException).code}`;
    }
  }

  private read(): Loaded {
    try {
      return parseSaved(readFileSync(this.path, 'utf8'));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Removed between the stat and the read: no selection.
      return code === 'ENOENT' ? undefined : { damaged: `it cannot be read (${code ?? String(err)})` };
    }
  }
}
