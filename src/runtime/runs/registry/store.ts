/**
 * The run registry on disk: one directory per run under RL_HOME/runs, its run.json replaced
 * atomically (temp file, rename) so a reader never sees half a record, and flushed to disk first
 * when the run is created and when it ends. Every server
 * sharing RL_HOME writes through `update`, a read-modify-write under a short lock file, so the
 * supervisor's status changes and another server's rate-limit stamp never overwrite each other.
 * Each write also brings the run's spend to the spend ledger (ledger/ledger.ts).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../../core/errors.js';
import { writeAtomically } from '../../../core/files/atomicFile.js';
import { isDiskFull } from '../../../core/files/diskFull.js';
import { realFileOfChild } from '../../../core/files/safePath.js';
import { newId, recordLockFile, RUN_FILES, RUN_ID_PATTERN, runLogFile, type RunProcess, runsRoot } from '../../../core/files/home.js';
import { FileLock } from '../../../core/os/fileLock.js';
import { isEnded, type RunStatus } from '../../../core/runWords.js';
import { ledgerOf } from '../../ledger/ledger.js';
import { holdSpend, recordRunSpend } from '../watching/runCost.js';
import { damagedRun, type DamagedRun, isDamaged, parseRunRecord, type RegistryEntry, type RunRecord } from '../seams/record.js';

/** The guarded section is a read and a rename: anything longer means a stuck holder. */
const WRITE_LOCK_TIMEOUT_MS = 5_000;

/**
 * Whether a record's change is flushed to disk before its rename: when the run ends (its outcome,
 * spend, final metrics). A status, phase, pid or observation on the way may be lost to a power
 * cut, which the processes they describe do not survive either (creation is always flushed).
 */
export const flushedWhen = (before: RunStatus, after: RunStatus): boolean => isEnded(after) && !isEnded(before);

export class RunStore {
  /** RL_HOME/runs */
  readonly root: string;

  constructor(private readonly home: string) {
    this.root = runsRoot(home);
  }

  dir(runId: string): string {
    return join(this.root, runId);
  }

  /** The lock naming the one server that supervises the run. */
  supervisorLockPath(runId: string): string {
    return join(this.dir(runId), RUN_FILES.supervisorLock);
  }

  /** The run's supervisor lock (a lease its keeper renews), its history kept beside it; `token` names one handed over. */
  supervisorLock(runId: string, token?: string): FileLock {
    return new FileLock(this.supervisorLockPath(runId), token, { history: join(this.dir(runId), RUN_FILES.keeperHistory) });
  }

  ensureRoot(): void {
    mkdirSync(this.root, { recursive: true });
  }

  logPath(runId: string, process: RunProcess): string {
    return join(this.dir(runId), runLogFile(process));
  }

  /**
   * Creates the run directory (failing if the id is taken), lets `prepare` fill it, then writes
   * the first run.json: the record is the commit point. A failed `prepare` leaves nothing behind.
   */
  create(record: RunRecord, prepare: (dir: string) => void = () => undefined): void {
    const dir = this.dir(record.run_id);
    this.ensureRoot();
    mkdirSync(dir);
    try {
      prepare(dir);
      writeAtomically(join(dir, RUN_FILES.record), JSON.stringify(record, null, 1));
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** A new run id no run directory has (creating the directory fails if one takes it meanwhile). */
  unusedRunId(): string {
    let runId = newId();
    while (this.exists(runId)) runId = newId();
    return runId;
  }

  exists(runId: string): boolean {
    return statSync(this.dir(runId), { throwIfNoEntry: false })?.isDirectory() === true;
  }

  ids(): string[] {
    try {
      return readdirSync(this.root, { withFileTypes: true })
        .filter((e) => e.isDirectory() && RUN_ID_PATTERN.test(e.name))
        .map((e) => e.name);
    } catch {
      return [];
    }
  }

  /** The run's record, a DamagedRun when run.json cannot be used, undefined when there is no such run. */
  read(runId: string): RegistryEntry | undefined {
    if (!RUN_ID_PATTERN.test(runId) || !this.exists(runId)) return undefined;
    let text: string;
    try {
      const path = this.recordPath(runId);
      if (typeof path !== 'string') return path;
      text = readFileSync(path, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      return this.damaged(runId, code === 'ENOENT' ? 'run.json is missing' : `run.json cannot be read (${code})`);
    }
    const entry = parseRunRecord(text, runId);
    return isDamaged(entry) ? this.damaged(runId, entry.damaged) : entry;
  }

  /**
   * The real path of the run's run.json, or the run as damaged by the refusal of the one rule for
   * readers of RL_HOME (core/files/safePath.ts): a run directory or run.json that is a symlink
   * leading out of it is never read, nor written, in the same words the resources use.
   */
  private recordPath(runId: string): string | DamagedRun {
    try {
      return realFileOfChild(this.root, runId, RUN_FILES.record, 'run') ?? this.damaged(runId, 'run.json is missing');
    } catch (err) {
      if (err instanceof UserError) return this.damaged(runId, err.message);
      throw err;
    }
  }

  /** Every run, newest first. */
  list(): RegistryEntry[] {
    const created = (e: RegistryEntry): number => Date.parse(e.created_at ?? '') || 0;
    return this.ids()
      .map((id) => this.read(id))
      .filter((e): e is RegistryEntry => e !== undefined)
      .sort((a, b) => created(b) - created(a) || a.run_id.localeCompare(b.run_id));
  }

  /**
   * Applies `mutate` to the current run.json and writes the result atomically, under the run's
   * write lock. `mutate` may return false to skip the write. Throws when the run is missing or damaged.
   */
  update(runId: string, mutate: (record: RunRecord) => boolean | void): RunRecord {
    const entry = this.modify(runId, mutate, true);
    if (entry === undefined) throw new Error(`run ${runId} does not exist`);
    if (isDamaged(entry)) throw new Error(`run ${runId} cannot be updated: ${entry.damaged}`);
    return entry;
  }

  /**
   * update(), answering undefined for a missing run and a damaged one as it is (nothing written).
   * What it writes is a stamp a reader adds (rl_check_status' last_full_check_at): on a full disk
   * the stamp is lost and the record read is answered, so reading a run never needs free space.
   */
  tryUpdate(runId: string, mutate: (record: RunRecord) => boolean | void): RegistryEntry | undefined {
    return this.modify(runId, mutate, false);
  }

  private modify(runId: string, mutate: (record: RunRecord) => boolean | void, mustWrite: boolean): RegistryEntry | undefined {
    if (!RUN_ID_PATTERN.test(runId) || !this.exists(runId)) return undefined;
    // Refused before the lock is taken: its file would be created wherever the link leads.
    const path = this.recordPath(runId);
    if (typeof path !== 'string') return path;
    const lock = new FileLock(join(this.dir(runId), recordLockFile));
    // On a full disk (taking the lock writes its file) a stamp is left out; the record is still read.
    const held = this.whenRoom(mustWrite, () => lock.acquireBlocking(WRITE_LOCK_TIMEOUT_MS));
    try {
      const entry = this.read(runId);
      const before = entry === undefined || isDamaged(entry) ? undefined : entry.status;
      if (entry !== undefined && !isDamaged(entry) && mutate(entry) !== false && held) {
        holdSpend(entry);
        this.whenRoom(mustWrite, () => writeAtomically(join(this.dir(runId), RUN_FILES.record), JSON.stringify(entry, null, 1), flushedWhen(before!, entry.status)));
        // Every change of a run's spend (a step, a billed figure, its end) passes here, whoever writes it.
        recordRunSpend(ledgerOf(this.home), entry);
      }
      return entry;
    } finally {
      if (held) lock.release();
    }
  }

  /** Runs `write`; false when the disk is full and the write may be left out (not `mustWrite`). */
  private whenRoom(mustWrite: boolean, write: () => void): boolean {
    try {
      write();
      return true;
    } catch (err) {
      if (mustWrite || !isDiskFull(err)) throw err;
      return false;
    }
  }

  /**
   * A damaged run is dated by its files, the only date it still has: the oldest of its entries'
   * times. The directory's own time moves whenever a file in it is replaced or a lock removed,
   * which may come after a newer run was created.
   */
  private damaged(runId: string, reason: string): DamagedRun {
    const dir = this.dir(runId);
    const times = [dir, ...readdirSafe(dir).map((name) => join(dir, name))].flatMap((path) => {
      const stat = statSync(path, { throwIfNoEntry: false });
      return stat === undefined ? [] : [stat.mtimeMs];
    });
    return damagedRun(runId, reason, times.length > 0 ? new Date(Math.min(...times)).toISOString() : undefined);
  }
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
