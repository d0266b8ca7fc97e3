/**
 * An RL_HOME whose file system can be filled and freed during a test. As root (CI runs as root):
 * a small tmpfs mounted for the test and filled with a filler file until ENOSPC, the real thing.
 * Otherwise the server loads `enospc.mjs`, which fails its writes under RL_HOME the same way
 * while a marker file exists. Either way the test runs; it is never skipped.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, closeSync, mkdtempSync, openSync, rmdirSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT, tempDir } from './tmp.js';

export interface FullDisk {
  kind: 'tmpfs' | 'injected';
  home: string;
  /** Settings the server needs for it (the injector, when there is no tmpfs). */
  env: Record<string, string>;
  fill(): void;
  free(): void;
}

const TMPFS_BYTES = 32 * 1024 * 1024;

/**
 * tmpfs gives space by pages: a file's last page has room left after the disk is full. The log's
 * is filled with a line of padding (an empty JSON object, like its other lines), so its next line needs a page.
 */
function padToPage(log: string): void {
  const page = 4096;
  const pad = (page - (statSync(log).size % page)) % page;
  appendFileSync(log, pad >= 3 ? `{${' '.repeat(pad - 3)}}\n` : '\n'.repeat(pad));
}

function tmpfs(t: TestContext): FullDisk {
  // Not tempDir(): its removal at the end of the file would fail on a mount point still mounted.
  const mountPoint = mkdtempSync(join(tmpdir(), 'rlmcp-disk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_BYTES}`, 'tmpfs', mountPoint]);
  t.after(() => {
    execFileSync('umount', ['-l', mountPoint]);
    rmdirSync(mountPoint);
  });
  const filler = join(mountPoint, 'filler');
  const home = join(mountPoint, 'rl_training');
  return {
    kind: 'tmpfs',
    home,
    env: {},
    fill() {
      const fd = openSync(filler, 'w');
      const chunk = Buffer.alloc(1024 * 1024, 120);
      try {
        // Whole MiB, then smaller writes down to single bytes: not one byte is left.
        for (let size = chunk.length; size >= 1; ) {
          try {
            writeSync(fd, chunk, 0, size);
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
            size = Math.floor(size / 2);
          }
        }
      } finally {
        closeSync(fd);
      }
      padToPage(join(home, 'server.log'));
    },
    free: () => rmSync(filler),
  };
}

function injected(): FullDisk {
  const dir = tempDir('rlmcp-disk-');
  const marker = join(dir, 'disk-is-full');
  return {
    kind: 'injected',
    home: join(dir, 'rl_training'),
    env: { NODE_OPTIONS: `--import ${pathToFileURL(join(REPO_ROOT, 'test', 'helpers', 'enospc.mjs')).href}`, RL_TEST_FULL_MARKER: marker },
    fill: () => writeFileSync(marker, ''),
    free: () => rmSync(marker),
  };
}

export function fullDisk(t: TestContext): FullDisk {
  return process.getuid?.() === 0 && process.env.RL_TEST_DISK !== 'injected' ? tmpfs(t) : injected();
}
