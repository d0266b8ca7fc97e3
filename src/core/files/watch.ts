/**
 * Telling subscribers that a file (a log, run.json) or a directory's entries changed, cheaply
 * and at most about once a second each.
 *
 * Directories are watched, not files: run.json is replaced by rename (a watch on the file would
 * die with the old inode) and logs may not exist yet when the watch starts. fs.watch (inotify)
 * costs nothing while nothing happens, so it is preferred; but it can be unavailable (inotify
 * watch limit, a directory that does not exist yet) and silent (network filesystems, writes from
 * another host). So: fs.watch plus a slow safety poll, and a poll at the throttle interval when
 * fs.watch cannot be used. An event only schedules a check of the watched thing's signature
 * (size and mtime, a run's status): at most one check per interval however fast a log grows, and
 * a notification only when the signature really changed.
 */
import { watch as fsWatch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { Logger } from '../logger.js';
import { isMissing } from './safePath.js';

export interface WatchOptions {
  /** Minimum time between two checks (and so two notifications) of one watched thing. */
  throttleMs: number;
  /** Re-check interval while fs.watch works (covers events it cannot see). */
  safetyPollMs: number;
  /** Set false to use polling only. */
  useFsWatch: boolean;
}

export const DEFAULT_WATCH_OPTIONS: WatchOptions = { throttleMs: 1000, safetyPollMs: 5000, useFsWatch: true };

export interface WatchSpec {
  dir: string;
  /** Only events for this entry of `dir` matter; every entry when undefined. */
  file?: string;
  /** A cheap fingerprint of what is watched; a change of value is a change. */
  signature(): Promise<string>;
  onChange(): void;
}

type Listener = (filename: string | null) => void;

/** One fs.watch (or poll) per directory, shared by every watch inside it. */
class DirectoryEvents {
  private watcher?: FSWatcher;
  private timer?: NodeJS.Timeout;
  readonly listeners = new Set<Listener>();

  constructor(
    private readonly dir: string,
    private readonly options: WatchOptions,
    private readonly logger: Logger,
  ) {
    if (options.useFsWatch) {
      try {
        this.watcher = fsWatch(this.dir, { persistent: false }, (_event, filename) => this.emit(filename));
        this.watcher.on('error', (err) => this.fallBack(err));
      } catch (err) {
        this.fallBack(err);
        return;
      }
    }
    this.poll(this.watcher ? options.safetyPollMs : options.throttleMs);
  }

  private emit(filename: string | null): void {
    for (const listener of this.listeners) listener(filename);
  }

  private poll(intervalMs: number): void {
    clearInterval(this.timer);
    this.timer = setInterval(() => this.emit(null), intervalMs);
    this.timer.unref();
  }

  private fallBack(err: unknown): void {
    this.logger.debug({ dir: this.dir, err: (err as Error).message }, 'fs.watch unavailable; polling');
    this.watcher?.close();
    this.watcher = undefined;
    this.poll(this.options.throttleMs);
  }

  close(): void {
    this.watcher?.close();
    clearInterval(this.timer);
  }
}

/** Re-checks a signature when poked, at most once per interval (the first poke after a quiet period at once). */
class ThrottledCheck {
  private last?: string;
  private lastCheckAt = -Infinity;
  private timer?: NodeJS.Timeout;
  private running: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly spec: WatchSpec,
    private readonly throttleMs: number,
    private readonly logger: Logger,
  ) {
    // The baseline: only changes after the watch starts are reported.
    this.running = this.check(false);
  }

  /** Resolves once the baseline is taken: a change after that is reported. */
  get settled(): Promise<void> {
    return this.running;
  }

  poke(): void {
    if (this.timer || this.closed) return;
    const wait = Math.max(0, this.lastCheckAt + this.throttleMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.running.then(() => this.check(true));
    }, wait);
    this.timer.unref();
  }

  private async check(report: boolean): Promise<void> {
    if (this.closed) return;
    this.lastCheckAt = Date.now();
    let signature: string;
    try {
      signature = await this.spec.signature();
    } catch (err) {
      signature = `error: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
    }
    if (signature === this.last || this.closed) return;
    this.last = signature;
    if (!report) return;
    try {
      this.spec.onChange();
    } catch (err) {
      this.logger.error({ err, dir: this.spec.dir, file: this.spec.file }, 'change listener failed');
    }
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }
}

export class ChangeWatcher {
  private readonly directories = new Map<string, DirectoryEvents>();
  private readonly stops = new Set<() => void>();
  private readonly options: WatchOptions;
  private closed = false;

  constructor(
    private readonly logger: Logger,
    options: Partial<WatchOptions> = {},
  ) {
    this.options = { ...DEFAULT_WATCH_OPTIONS, ...options };
  }

  /** Starts watching; the returned function stops (idempotent). */
  watch(spec: WatchSpec): () => void {
    return this.start(spec).stop;
  }

  /**
   * As watch(), once the baseline is taken. A subscriber is answered only then: a change it makes
   * right after its answer would otherwise be part of the baseline and never reported.
   */
  async watchSettled(spec: WatchSpec): Promise<() => void> {
    const { stop, settled } = this.start(spec);
    await settled;
    return stop;
  }

  private start(spec: WatchSpec): { stop: () => void; settled: Promise<void> } {
    if (this.closed) return { stop: () => undefined, settled: Promise.resolve() };
    const check = new ThrottledCheck(spec, this.options.throttleMs, this.logger);
    const listener: Listener = (filename) => {
      if (spec.file === undefined || filename === null || filename === spec.file) check.poke();
    };
    let events = this.directories.get(spec.dir);
    if (!events) {
      events = new DirectoryEvents(spec.dir, this.options, this.logger);
      this.directories.set(spec.dir, events);
    }
    events.listeners.add(listener);
    const dirEvents = events;
    const stop = (): void => {
      this.stops.delete(stop);
      check.close();
      if (!dirEvents.listeners.delete(listener) || dirEvents.listeners.size > 0) return;
      dirEvents.close();
      this.directories.delete(spec.dir);
    };
    this.stops.add(stop);
    return { stop, settled: check.settled };
  }

  /** Number of directories being watched (fs.watch handles or poll timers). */
  get watchedDirectories(): number {
    return this.directories.size;
  }

  close(): void {
    this.closed = true;
    for (const stop of [...this.stops]) stop();
  }
}

/**
 * What tells one version of a file from the next without reading it: inode (a file replaced by
 * rename gets a new one), size and modification time.
 */
export const statSignature = (info: { ino: number; size: number; mtimeMs: number }): string => `${info.ino}:${info.size}:${info.mtimeMs}`;

/** A watch on one file that grows or is rewritten: its signature is statSignature(). */
export function fileWatch(path: string): Omit<WatchSpec, 'onChange'> {
  return {
    dir: dirname(path),
    file: basename(path),
    async signature() {
      try {
        return statSignature(await stat(path));
      } catch (err) {
        if (isMissing(err)) return 'missing';
        throw err;
      }
    },
  };
}
