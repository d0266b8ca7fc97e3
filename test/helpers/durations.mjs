/**
 * A node:test reporter (scripts/test.ts adds it beside the usual one): at the end of a run it
 * prints each test file's time (its top-level tests' durations summed), longest first, with their sum, and keeps them in
 * node_modules/.cache/rl-training-mcp/test-durations.json, from which the next run starts the
 * longest files first (so the last file to finish is a short one).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DURATIONS_FILE = join(ROOT, 'node_modules', '.cache', 'rl-training-mcp', 'test-durations.json');

export default async function* durations(source) {
  const files = {};
  for await (const event of source) {
    // A file's time: its top-level tests' and suites' (module-level set-up is not counted).
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0 && event.data.file) {
      const file = relative(ROOT, event.data.file);
      files[file] = (files[file] ?? 0) + event.data.details.duration_ms / 1000;
    }
  }
  const rows = Object.entries(files).sort((a, b) => b[1] - a[1]);
  if (rows.length === 0) return;
  // Merged with what earlier runs timed: a run of one tier leaves the other's times.
  let earlier = {};
  try {
    earlier = JSON.parse(readFileSync(DURATIONS_FILE, 'utf8'));
  } catch {
    // The first run.
  }
  mkdirSync(dirname(DURATIONS_FILE), { recursive: true });
  writeFileSync(DURATIONS_FILE, JSON.stringify({ ...earlier, ...Object.fromEntries(rows) }, null, 1));
  const sum = rows.reduce((total, [, seconds]) => total + seconds, 0);
  yield `\nTime per test file (s), longest first; summed ${sum.toFixed(0)} s over ${rows.length} files:\n`;
  for (const [file, seconds] of rows) yield `${seconds.toFixed(1).padStart(8)}  ${file}\n`;
}
