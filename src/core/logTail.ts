/**
 * Reading the end of log files without loading them whole: run logs grow to gigabytes over a
 * multi-hour run, and a tail is what users and agents need.
 */
import { open } from 'node:fs/promises';

export interface FileSlice {
  text: string;
  /** Byte offset of the first byte returned. */
  offset: number;
  /** Size of the file when it was read. */
  size: number;
  /** True when the slice does not reach the start of the file. */
  truncated: boolean;
}

/** Reads `length` bytes from `offset` (clamped to the file); a missing file reads as empty. */
export async function readSlice(path: string, offset: number, length: number): Promise<FileSlice> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { text: '', offset: 0, size: 0, truncated: false };
    throw err;
  }
  try {
    const { size } = await handle.stat();
    const start = Math.min(Math.max(0, offset), size);
    const count = Math.max(0, Math.min(length, size - start));
    const buffer = Buffer.alloc(count);
    const { bytesRead } = await handle.read(buffer, 0, count, start);
    return { text: buffer.subarray(0, bytesRead).toString('utf8'), offset: start, size, truncated: start > 0 };
  } finally {
    await handle.close();
  }
}

/** The last `maxBytes` of a file, starting at a line boundary when it had to cut. */
export async function readTail(path: string, maxBytes: number): Promise<FileSlice> {
  const probe = await readSlice(path, Number.MAX_SAFE_INTEGER, 0);
  const slice = await readSlice(path, probe.size - maxBytes, maxBytes);
  if (!slice.truncated) return slice;
  const newline = slice.text.indexOf('\n');
  if (newline < 0 || newline === slice.text.length - 1) return slice;
  const dropped = Buffer.byteLength(slice.text.slice(0, newline + 1));
  return { ...slice, text: slice.text.slice(newline + 1), offset: slice.offset + dropped };
}

/** The last `lines` lines of a file (reading at most `maxBytes` from its end). */
export async function tailLines(path: string, lines: number, maxBytes = 64 * 1024): Promise<string[]> {
  const { text } = await readTail(path, maxBytes);
  const all = text.split('\n');
  if (all.at(-1) === '') all.pop();
  return all.slice(-lines);
}
