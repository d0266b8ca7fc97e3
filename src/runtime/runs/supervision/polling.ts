/**
 * Waiting by polling, without wasting the poll: a Waker ends a pause early when something happens
 * (a process exits, a log is written, the supervisor's state changes), and a LogCursor reads only
 * what a log gained since the last poll.
 */
import { open, stat } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';

/** Wakes waiters on events; a wait also ends at its timeout. */
export class Waker {
  private readonly waiters = new Set<() => void>();

  notify(): void {
    for (const wake of [...this.waiters]) wake();
  }

  /** Resolves after `ms`, or at the next notify: true when a notify woke it. */
  sleep(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (woken: boolean): void => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve(woken);
      };
      const wake = (): void => done(true);
      const timer = setTimeout(() => done(false), Math.max(0, ms));
      this.waiters.add(wake);
    });
  }
}

/** Reads what a log gained since the last read (whole UTF-8 characters only). */
export class LogCursor {
  private offset = 0;
  private readonly decoder = new StringDecoder('utf8');

  constructor(private readonly path: string) {}

  /** Skips what the log holds now: the next read returns only what is written after this. */
  async skipToEnd(): Promise<void> {
    try {
      this.offset = (await stat(this.path)).size;
    } catch {
      // No log yet: nothing to skip.
    }
  }

  async read(maxBytes = 1024 * 1024): Promise<string> {
    let handle;
    try {
      handle = await open(this.path, 'r');
    } catch {
      return '';
    }
    try {
      const { size } = await handle.stat();
      const length = Math.min(maxBytes, size - this.offset);
      if (length <= 0) return '';
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, this.offset);
      this.offset += bytesRead;
      return this.decoder.write(buffer.subarray(0, bytesRead));
    } finally {
      await handle.close();
    }
  }
}
