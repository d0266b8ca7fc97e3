/**
 * A random key kept in a private (0600) file: made by whichever server process needs it first, then
 * read by every process sharing the directory, so what one signs another can check, also after a
 * restart. The file appears whole or not at all (written aside, then hard-linked into place, which
 * fails when another process got there first).
 */
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

const KEY_BYTES = 32;

export function persistentKey(path: string): Buffer {
  const existing = readKey(path);
  if (existing !== undefined) return existing;
  mkdirSync(dirname(path), { recursive: true });
  const aside = `${path}.${process.pid}.tmp`;
  writeFileSync(aside, randomBytes(KEY_BYTES), { mode: 0o600 });
  try {
    linkSync(aside, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(aside);
  }
  return readKey(path)!;
}

function readKey(path: string): Buffer | undefined {
  try {
    const key = readFileSync(path);
    if (key.length !== KEY_BYTES) throw new Error(`${path} is not a key of ${KEY_BYTES} bytes: remove it (the ids it signed stop being valid)`);
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
