/**
 * Lines of a log as an answer a model can read: the last N (or N from a byte offset), optionally
 * only those containing a substring, each line redacted and capped, the whole bounded in size,
 * with the offset to read on from. Only a bounded part of the file is ever read.
 */
import { UserError } from '../errors.js';
import type { SecretRedactor } from '../redact.js';
import { textBefore } from './fileWindow.js';
import { scanBackward, scanForward, type FileLine } from './logTail.js';

export const DEFAULT_LOG_LINES = 100;
export const MAX_LOG_LINES = 500;
/** Lines are cut past this many characters (a pasted JSON blob, a progress bar without newlines). */
export const MAX_LINE_CHARS = 1000;
/** The JSON of the returned lines stays under this: about 7k tokens at 4 characters a token. */
export const MAX_LINES_JSON_CHARS = 28_000;
/** How much of the file one call reads, looking for lines (matching `grep`). */
export const MAX_SCAN_BYTES = 8 * 1024 * 1024;

export interface LogLinesRequest {
  /** Read forward from this byte offset (a `next_offset` from before); absent: the end of the file. */
  offset?: number;
  lines: number;
  /** Only lines containing this, case-insensitively (after redaction). */
  grep?: string;
}

export interface LogLines {
  lines: string[];
  /** Byte offset of the first line returned (of the file's end when none). */
  first_offset: number;
  /** Where to read on with `offset`: after the last line read (forward), or the end of the file (tail). */
  next_offset: number;
  size: number;
  /** True when lines were left out: earlier ones (tail), later ones (forward), or past the size bound. */
  truncated: boolean;
  /** Bytes of the file looked at. */
  scanned_bytes: number;
  /** The scan stopped at MAX_SCAN_BYTES before finding `lines` lines. */
  scan_limited: boolean;
}

function capped(text: string): string {
  return text.length <= MAX_LINE_CHARS ? text : `${text.slice(0, MAX_LINE_CHARS)}... [${text.length - MAX_LINE_CHARS} more characters]`;
}

/** Collects lines under the count and size bounds; `add` answers whether to go on. */
function collector(request: LogLinesRequest, redact: (line: FileLine) => string) {
  const needle = request.grep?.toLowerCase();
  const taken: FileLine[] = [];
  let chars = 0;
  let full = false;
  return {
    taken,
    full: () => full,
    add(line: FileLine): boolean {
      const text = redact(line);
      // Matched after redaction: a grep for a secret's value finds nothing, so it cannot probe for one.
      if (needle !== undefined && !text.toLowerCase().includes(needle)) return true;
      const shown = capped(text);
      chars += JSON.stringify(shown).length + 1;
      if (chars > MAX_LINES_JSON_CHARS && taken.length > 0) {
        full = true;
        return false;
      }
      taken.push({ text: shown, offset: line.offset });
      if (taken.length >= request.lines) full = true;
      return !full;
    },
  };
}

export async function readLogLines(path: string, request: LogLinesRequest, redactor: SecretRedactor): Promise<LogLines> {
  if (request.offset === undefined) {
    const c = collector(request, (line) => redactor.redact(line.text));
    let lowest = Number.POSITIVE_INFINITY;
    const { size } = await scanBackward(path, MAX_SCAN_BYTES, (line) => {
      lowest = line.offset;
      return c.add(line);
    });
    const lines = c.taken.reverse();
    const scanned = size - Math.min(lowest, size);
    const first = lines[0]?.offset ?? size;
    const limited = !c.full() && scanned >= MAX_SCAN_BYTES;
    return { lines: lines.map((l) => l.text), first_offset: first, next_offset: size, size, truncated: first > 0 && (c.full() || limited), scanned_bytes: scanned, scan_limited: limited };
  }
  // An offset may fall inside a line, even inside a key: the line it starts is redacted with what precedes it.
  const before = request.offset > 0 ? await textBefore(path, request.offset) : '';
  const start = request.offset;
  const c = collector(request, (line) => (line.offset === start ? redactor.redactWindow(before, line.text, '') : redactor.redact(line.text)));
  let refusedAt: number | undefined;
  const { next, size } = await scanForward(path, request.offset, MAX_SCAN_BYTES, (line) => {
    const goOn = c.add(line);
    // A line refused for size is not consumed: the next call starts with it.
    if (!goOn && c.taken.at(-1)?.offset !== line.offset) refusedAt = line.offset;
    return goOn;
  });
  if (request.offset > size) {
    throw new UserError(`offset ${request.offset} is past the end of the log (${size} bytes): it was truncated or replaced. Read its tail (no offset), or from offset 0.`, {
      field: 'offset',
      expected: `a byte offset of at most ${size}`,
    });
  }
  const nextOffset = refusedAt ?? next;
  return {
    lines: c.taken.map((l) => l.text),
    first_offset: c.taken[0]?.offset ?? nextOffset,
    next_offset: nextOffset,
    size,
    truncated: nextOffset < size,
    scanned_bytes: nextOffset - request.offset,
    scan_limited: !c.full() && next - request.offset >= MAX_SCAN_BYTES,
  };
}
