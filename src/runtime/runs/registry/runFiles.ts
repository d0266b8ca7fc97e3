/**
 * A read-only view of the run directories (RL_HOME/runs/<run_id>/) straight from the
 * filesystem, so runs written by any server process sharing RL_HOME can be listed and served.
 * A damaged or missing run.json makes that run `unknown` with the reason; it never throws.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { UserError } from '../../../core/errors.js';
import { readSlice } from '../../../core/files/logTail.js';
import { isMissing, namedSubdirs, NotFoundError, realChildDir, realFileOfChild } from '../../../core/files/safePath.js';
import { RUN_ID_PATTERN, runsRoot, RUN_FILES } from '../../../core/files/home.js';
import { statSignature } from '../../../core/files/watch.js';
import { damagedRun, isDamaged, parseRunRecord, type RegistryEntry, type RunStatus } from '../seams/record.js';


/** run.json is a few KiB; anything past this is not a run record. */
const MAX_RUN_JSON_BYTES = 1024 * 1024;

export interface RunJson {
  text: string;
  entry: RegistryEntry;
}

export interface RunSummary {
  run_id: string;
  /** `unknown` when run.json is missing or damaged. */
  status: RunStatus;
  phase?: string;
  environment?: string;
  created_at?: string;
  damaged?: string;
  /** Newest first: created_at, else run.json's modification time. */
  sortKey: number;
}

export function assertRunId(runId: string): string {
  if (!RUN_ID_PATTERN.test(runId)) {
    throw new UserError(`'${runId.slice(0, 100)}' is not a run id: run ids are 8 lowercase hex characters (e.g. 3fa2b91c). List runs with rl_list_runs.`, {
      expected: RUN_ID_PATTERN.source,
    });
  }
  return runId;
}

/** Reads run `runId`'s run.json (bounded) with the record parser; never throws on bad content. */
export async function readRunJson(path: string, runId: string): Promise<RunJson> {
  const slice = await readSlice(path, 0, MAX_RUN_JSON_BYTES);
  if (slice.size > MAX_RUN_JSON_BYTES) return { text: '', entry: damagedRun(runId, `run.json is ${slice.size} bytes, more than a run record can be`) };
  return { text: slice.text, entry: parseRunRecord(slice.text, runId) };
}

export class RunFiles {
  /** RL_HOME/runs */
  readonly root: string;
  /** Summaries keyed by run id, reused while run.json keeps its inode, size and mtime. */
  private readonly summaries = new Map<string, { key: string; summary: RunSummary }>();

  constructor(home: string) {
    this.root = runsRoot(home);
  }

  dir(runId: string): string {
    return join(this.root, assertRunId(runId));
  }

  /** The ids of every run directory. */
  ids(): Promise<string[]> {
    return namedSubdirs(this.root, RUN_ID_PATTERN);
  }

  /** The run's status as its run.json says; cheap (one stat) while run.json is unchanged. */
  async summary(runId: string): Promise<RunSummary> {
    const path = join(this.dir(runId), RUN_FILES.record);
    let info;
    try {
      info = await stat(path);
    } catch (err) {
      if (!isMissing(err)) throw err;
      this.summaries.delete(runId);
      return { run_id: runId, status: 'unknown', damaged: 'run.json is missing', sortKey: 0 };
    }
    const key = statSignature(info);
    const cached = this.summaries.get(runId);
    if (cached?.key === key) return cached.summary;
    const summary = await this.summarize(runId, info.mtimeMs);
    this.summaries.set(runId, { key, summary });
    return summary;
  }

  private async summarize(runId: string, mtimeMs: number): Promise<RunSummary> {
    const { entry } = await this.readRecord(runId);
    if (isDamaged(entry)) return { run_id: runId, status: 'unknown', damaged: entry.damaged, sortKey: mtimeMs };
    const createdMs = Date.parse(entry.created_at);
    return {
      run_id: runId,
      status: entry.status,
      phase: entry.phase,
      environment: entry.environment,
      created_at: entry.created_at,
      sortKey: Number.isNaN(createdMs) ? mtimeMs : createdMs,
    };
  }

  /** Up to `limit` runs whose id starts with `prefix`, newest first. */
  async recent(limit: number, prefix = ''): Promise<RunSummary[]> {
    const all = await this.ids();
    const live = new Set(all);
    for (const id of this.summaries.keys()) if (!live.has(id)) this.summaries.delete(id);
    const summaries = await Promise.all(all.filter((id) => id.startsWith(prefix)).map((id) => this.summary(id)));
    return summaries.sort((a, b) => b.sortKey - a.sortKey || a.run_id.localeCompare(b.run_id)).slice(0, limit);
  }

  /** The run's run.json read (bounded), a damaged run saying why it cannot be (refused as the one rule says, or missing); never throws on content. */
  async readRecord(runId: string): Promise<RunJson> {
    try {
      const path = await this.existingFile(runId, RUN_FILES.record);
      return path === undefined ? { text: '', entry: damagedRun(runId, 'run.json is missing') } : await readRunJson(path, runId);
    } catch (err) {
      if (err instanceof UserError && !(err instanceof NotFoundError)) return { text: '', entry: damagedRun(runId, err.message) };
      throw err;
    }
  }

  /** The run directory's real path; NotFoundError when the run does not exist. */
  async realRunDir(runId: string): Promise<string> {
    const realRun = realChildDir(this.root, assertRunId(runId), 'run');
    if (realRun === undefined) throw new NotFoundError(`Run '${runId}' not found in ${this.root}. List runs with rl_list_runs (or resources/list).`, { run_id: runId });
    return realRun;
  }

  /**
   * The real path of a file of the run (`name` is one of the fixed file names), refused when a
   * symlink leads out of the run directory; undefined when it does not exist (yet).
   */
  async existingFile(runId: string, name: string): Promise<string | undefined> {
    await this.realRunDir(runId);
    return realFileOfChild(this.root, runId, name, 'run');
  }

  /** existingFile(), with a NotFoundError saying what to do when the file is missing. */
  async file(runId: string, name: string): Promise<string> {
    const real = await this.existingFile(runId, name);
    if (real === undefined) {
      const { status, phase } = await this.summary(runId);
      throw new NotFoundError(
        `${name} of run '${runId}' does not exist yet (status: ${status}${phase ? `, phase: ${phase}` : ''}). ` +
          'Its process may not have started: check with rl_check_status, or subscribe to this resource to be told when it appears.',
        { run_id: runId, status },
      );
    }
    return real;
  }
}
