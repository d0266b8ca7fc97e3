/**
 * Part of a file, redacted as the whole file would be: a window may start or end anywhere, even
 * inside a key, and the part of a key it shows is not a secret redact() can recognise alone. The
 * bytes on each side of the window show the whole key, so the part is hidden too.
 */
import type { SecretRedactor } from '../redact.js';
import { readSlice, type FileSlice } from './logTail.js';

/** Secrets are far shorter: this much of the file on each side of a window shows any secret its edges cut. */
export const SECRET_CONTEXT_BYTES = 4096;

/** The bytes of the file just before `offset` (at most SECRET_CONTEXT_BYTES). */
export async function textBefore(path: string, offset: number): Promise<string> {
  return (await readSlice(path, offset - SECRET_CONTEXT_BYTES, Math.min(offset, SECRET_CONTEXT_BYTES))).text;
}

/** `text`, bytes [offset, end) of the file (end: where `text` ends by default), redacted with the file around it. */
export async function redactFileWindow(path: string, offset: number, text: string, redactor: SecretRedactor, end = offset + Buffer.byteLength(text)): Promise<string> {
  const [before, after] = await Promise.all([textBefore(path, offset), readSlice(path, end, SECRET_CONTEXT_BYTES)]);
  return redactor.redactWindow(before, text, after.text);
}

/** readSlice(), its text redacted with the file around it. */
export async function readRedactedSlice(path: string, offset: number, length: number, redactor: SecretRedactor): Promise<FileSlice> {
  const slice = await readSlice(path, offset, length);
  const end = slice.offset + Math.max(0, Math.min(length, slice.size - slice.offset));
  return { ...slice, text: await redactFileWindow(path, slice.offset, slice.text, redactor, end) };
}
