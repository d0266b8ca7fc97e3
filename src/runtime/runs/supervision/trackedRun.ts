/**
 * What a supervisor knows of its run: the record, written to run.json before anything acts on it
 * (a keeper that dies at any point leaves a registry the next one can carry on from), and the
 * exit of each process it watches: its own children, and processes adopted from a keeper that died.
 */
import type { Logger } from '../../../core/logger.js';
import type { RunProcess } from '../../../core/files/home.js';
import type { ExitInfo, Placement } from '../seams/placement.js';
import { processOf, type RunRecord } from '../seams/record.js';
import type { RunStore } from '../registry/store.js';

export const now = (): string => new Date().toISOString();

export class TrackedRun {
  private current: RunRecord;
  /** Exit of each process watched (own children and adopted ones). */
  private readonly exits = new Map<RunProcess, Promise<ExitInfo>>();
  private readonly adopted = new Map<RunProcess, { stop(): void }>();

  constructor(
    private readonly store: RunStore,
    private readonly logger: Logger,
    private readonly placement: Placement,
    record: RunRecord,
    private readonly onExit: (name: RunProcess, info: ExitInfo) => void,
  ) {
    this.current = record;
  }

  get record(): RunRecord {
    return this.current;
  }

  get runId(): string {
    return this.current.run_id;
  }

  update(mutate: (r: RunRecord) => void): void {
    this.current = this.store.update(this.runId, mutate);
  }

  /** Watches a child this keeper started: its exit event carries the exit code. */
  watchChild(name: RunProcess, exited: Promise<ExitInfo>): void {
    this.follow(name, exited);
  }

  /** Watches a process a keeper that died started, polled every `pollMs`: its exit code cannot be known. */
  watchAdopted(name: RunProcess, pollMs: number): void {
    const watcher = this.placement.watchAdopted(processOf(this.current, name), pollMs);
    this.adopted.set(name, watcher);
    this.follow(name, watcher.exited);
  }

  private follow(name: RunProcess, exited: Promise<ExitInfo>): void {
    this.exits.set(name, exited);
    void exited.then((info) => this.onExit(name, info));
  }

  isAdopted(name: RunProcess): boolean {
    return this.adopted.has(name);
  }

  exitOf(name: RunProcess): Promise<ExitInfo> | undefined {
    return this.exits.get(name);
  }

  /** Ends the polling of adopted processes. */
  stopWatching(): void {
    for (const watcher of this.adopted.values()) watcher.stop();
  }

  /** Records an exit once. `runGoesOn`: no outcome or stop yet, so an environment's exit 0 is worth a note. */
  markExited(name: RunProcess, info: ExitInfo, runGoesOn: boolean): void {
    if (processOf(this.current, name).state === 'exited') return;
    const normalEnvEnd = name === 'env' && info.exit_code === 0 && runGoesOn;
    this.update((r) => {
      Object.assign(processOf(r, name), { state: 'exited', exit_code: info.exit_code, signal: info.signal, ended_at: now(), ...(info.ended_by ? { ended_by: info.ended_by } : {}) });
      if (normalEnvEnd) {
        (r.notes ??= []).push('The environment exited with code 0 (it stops once it has queued enough data); the run goes on until the trainer ends.');
      }
    });
    this.logger.info({ run_id: this.runId, process: name, exit_code: info.exit_code, signal: info.signal, ended_by: info.ended_by?.reason }, 'process exited');
  }
}
