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
  const { bytes, size, start } = await readSliceBytes(path, offset, length);
  return { text: bytes.toString('utf8'), offset: start, size, truncated: start > 0 };
}

/**
 * The last `maxBytes` of a file, starting at a line boundary when it had to cut (`atLineStart`),
 * unless that would leave nothing: the end of one long line.
 */
export async function readTail(path: string, maxBytes: number): Promise<FileSlice & { atLineStart: boolean }> {
  const probe = await readSlice(path, Number.MAX_SAFE_INTEGER, 0);
  const slice = await readSlice(path, probe.size - maxBytes, maxBytes);
  if (!slice.truncated) return { ...slice, atLineStart: true };
  const newline = slice.text.indexOf('\n');
  if (newline < 0 || newline === slice.text.length - 1) return { ...slice, atLineStart: false };
  const dropped = Buffer.byteLength(slice.text.slice(0, newline + 1));
  return { ...slice, text: slice.text.slice(newline + 1), offset: slice.offset + dropped, atLineStart: true };
}

/**
 * The last `lines` whole lines of a file (reading at most `maxBytes` from its end). A line longer
 * than the read is left out: its start may be inside a key, which no redaction could then recognise.
 */
export async function tailLines(path: string, lines: number, maxBytes = 64 * 1024): Promise<string[]> {
  const tail = await readTail(path, maxBytes);
  const all = tail.text.split('\n');
  if (all.at(-1) === '') all.pop();
  if (tail.truncated && !tail.atLineStart) all.shift();
  return all.slice(-lines);
}

/** One whole line of a file and the byte offset where it starts. */
export interface FileLine {
  text: string;
  offset: number;
}

const CHUNK_BYTES = 64 * 1024;

/**
 * Whole lines from byte `offset` forward, read in chunks, at most `scanBytes` of the file. A line
 * still being written (no newline yet) is not returned: reading again from `next` gets it whole.
 * `take` decides per line whether to stop (false) after it.
 */
export async function scanForward(path: string, offset: number, scanBytes: number, take: (line: FileLine) => boolean): Promise<{ next: number; size: number }> {
  let at = Math.max(0, offset);
  let carry = Buffer.alloc(0);
  let lineStart = at;
  let size = 0;
  while (at - offset < scanBytes) {
    const slice = await readSliceBytes(path, at, Math.min(CHUNK_BYTES, scanBytes - (at - offset)));
    size = slice.size;
    if (slice.bytes.length === 0) break;
    let buffer = Buffer.concat([carry, slice.bytes]);
    at += slice.bytes.length;
    let newline: number;
    while ((newline = buffer.indexOf(0x0a)) >= 0) {
      const line = { text: buffer.subarray(0, newline).toString('utf8').replace(/\r$/, ''), offset: lineStart };
      lineStart += newline + 1;
      buffer = buffer.subarray(newline + 1);
      if (!take(line)) return { next: lineStart, size };
    }
    carry = buffer;
  }
  return { next: lineStart, size };
}

/**
 * Whole lines backward from the end of the file, newest first, reading at most `scanBytes`. The
 * last line counts even without its newline: a tail shows what is there.
 */
export async function scanBackward(path: string, scanBytes: number, take: (line: FileLine) => boolean): Promise<{ size: number }> {
  const { size } = await readSliceBytes(path, 0, 0);
  let end = size;
  let carry = Buffer.alloc(0);
  const floor = Math.max(0, size - scanBytes);
  while (end > floor) {
    const start = Math.max(floor, end - CHUNK_BYTES);
    const { bytes } = await readSliceBytes(path, start, end - start);
    let buffer = Buffer.concat([bytes, carry]);
    // The file's own final newline ends the last line; it does not start an empty one.
    if (end === size && buffer.at(-1) === 0x0a) buffer = buffer.subarray(0, -1);
    end = start;
    let newline: number;
    while ((newline = buffer.lastIndexOf(0x0a)) >= 0) {
      const line = { text: buffer.subarray(newline + 1).toString('utf8').replace(/\r$/, ''), offset: start + newline + 1 };
      buffer = buffer.subarray(0, newline);
      if (!take(line)) return { size };
    }
    carry = buffer;
  }
  // What is left reaches the start of the file (a first line), or the scan's floor (cut: not a whole line).
  if (floor === 0 && carry.length > 0) take({ text: carry.toString('utf8').replace(/\r$/, ''), offset: 0 });
  return { size };
}

async function readSliceBytes(path: string, offset: number, length: number): Promise<{ bytes: Buffer; size: number; start: number }> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { bytes: Buffer.alloc(0), size: 0, start: 0 };
    throw err;
  }
  try {
    const { size } = await handle.stat();
    const start = Math.min(Math.max(0, offset), size);
    const count = Math.max(0, Math.min(length, size - start));
    const buffer = Buffer.alloc(count);
    const { bytesRead } = await handle.read(buffer, 0, count, start);
    return { bytes: buffer.subarray(0, bytesRead), size, start };
  } finally {
    await handle.close();
  }
}
