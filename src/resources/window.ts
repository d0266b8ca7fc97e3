/**
 * A window onto a text file that may be gigabytes long: by default its last 256 KiB (cut at a
 * line start), or the page `?offset=N&length=M` asks for. Only the window is read. When the
 * window is not the whole file, a first line says so and gives the URIs of the neighbouring
 * pages, so a client (or a model) can page back to the start.
 */
import * as z from 'zod';
import { UserError } from '../core/errors.js';
import { redactFileWindow } from '../core/files/fileWindow.js';
import { readSlice, readTail } from '../core/files/logTail.js';
import type { SecretRedactor } from '../core/redact.js';
import type { Page } from '../core/resourceUris.js';

export const DEFAULT_WINDOW_BYTES = 256 * 1024;
export const MAX_WINDOW_BYTES = 1024 * 1024;

const pageQuery = z
  .object({
    offset: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    length: z.coerce.number().int().min(1).max(MAX_WINDOW_BYTES).default(DEFAULT_WINDOW_BYTES),
  })
  .strict();

/** The page a URI's query asks for; undefined for the default tail. */
export function requestedPage(uri: URL): Page | undefined {
  if (uri.search === '') return undefined;
  const parsed = pageQuery.safeParse(Object.fromEntries(uri.searchParams));
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || 'query'}: ${i.message}`).join('; ');
    throw new UserError(`Bad page in ${uri.href}: ${issues}. Use ?offset=<byte offset>&length=<1..${MAX_WINDOW_BYTES}>, or no query for the last ${DEFAULT_WINDOW_BYTES} bytes.`, {
      expected: `?offset=N&length=M (M <= ${MAX_WINDOW_BYTES})`,
    });
  }
  return parsed.data;
}

export interface TextWindow {
  text: string;
  /** Byte range [offset, end) of the file shown, and the file size when read. */
  meta: { offset: number; end: number; size: number };
}

/** Reads the window; `pageUri` names another page of the same resource for the note. */
export async function readWindow(path: string, page: Page | undefined, pageUri: (page: Page) => string, redactor: SecretRedactor): Promise<TextWindow> {
  if (page === undefined) {
    const tail = await readTail(path, DEFAULT_WINDOW_BYTES);
    const meta = { offset: tail.offset, end: tail.size, size: tail.size };
    const shown = await redactFileWindow(path, tail.offset, tail.text, redactor);
    if (!tail.truncated) return { text: shown, meta };
    const before = { offset: Math.max(0, tail.offset - DEFAULT_WINDOW_BYTES), length: DEFAULT_WINDOW_BYTES };
    const note =
      `[... ${tail.offset} bytes before this point not shown (the file has ${tail.size} bytes); ` +
      `read ${pageUri({ offset: 0, length: DEFAULT_WINDOW_BYTES })} to page from the start, ` +
      `or ${pageUri(before)} for the part just before ...]\n`;
    return { text: note + shown, meta };
  }
  const slice = await readSlice(path, page.offset, page.length);
  let text = slice.text;
  let end = slice.offset + Math.min(page.length, slice.size - slice.offset);
  // Pages end at a line end, so that the next one starts on a fresh line and no character is split.
  if (end < slice.size) {
    const lastNewline = text.lastIndexOf('\n');
    if (lastNewline >= 0) {
      text = text.slice(0, lastNewline + 1);
      end = slice.offset + Buffer.byteLength(text);
    }
  }
  const meta = { offset: slice.offset, end, size: slice.size };
  const shown = await redactFileWindow(path, slice.offset, text, redactor);
  if (slice.offset === 0 && end === slice.size) return { text: shown, meta };
  const links = [
    slice.offset > 0 ? `previous page: ${pageUri({ offset: Math.max(0, slice.offset - page.length), length: page.length })}` : 'start of file',
    end < slice.size ? `next page: ${pageUri({ offset: end, length: page.length })}` : 'end of file',
  ];
  return { text: `[bytes ${slice.offset}-${end} of ${slice.size}; ${links.join('; ')}]\n` + shown, meta };
}
