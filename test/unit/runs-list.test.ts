/**
 * rl_list_runs over many runs: paging by cursor (every run once, none skipped, a run started
 * between pages shifts nothing), filters, damaged records, and the run index behind it: unchanged
 * records are not parsed again, a record rewritten by hand is noticed by its stat, and a restarted
 * server reads the persisted index instead of every record. And the ids themselves: none reads as
 * a JSON number.
 */
import assert from 'node:assert/strict';
import { rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { UserError } from '../../src/core/errors.js';
import { newId, RUN_ID_PATTERN } from '../../src/core/files/home.js';
import { type ListedRun, listRuns, type RunPage, type RunQuery } from '../../src/runtime/runs/listing.js';
import type { RunIndex } from '../../src/runtime/runs/registry/runIndex.js';
import { RunStore } from '../../src/runtime/runs/registry/store.js';
import { connectInMemory } from '../helpers/client.js';
import { runIndexOver, runRecord, writeRunDir, writeRunDirs } from '../helpers/registry.js';
import { tempDir } from '../helpers/tmp.js';

test('a new id is 8 hex characters that never read as a JSON number (12345678 or 5e123456 would, to a client parsing arguments as JSON first)', () => {
  // About one random id in twenty is digits and at most one e.
  for (let i = 0; i < 20_000; i++) {
    const id = newId();
    assert.match(id, RUN_ID_PATTERN);
    assert.throws(() => JSON.parse(id), SyntaxError, id);
  }
});

const list = (index: RunIndex, query: Partial<RunQuery> = {}): RunPage => listRuns(index, { limit: 50, ...query }, Date.now(), () => 'none');
const listedRun = (page: RunPage, runId: string): ListedRun => page.runs.find((r) => r.run_id === runId) ?? assert.fail(`${runId} is not listed`);

/** Every page of a listing, following next_cursor; `between` runs after each page. */
function allPages(index: RunIndex, query: Partial<RunQuery>, between: (page: number) => void = () => undefined): string[] {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let n = 0; ; n++) {
    const page = list(index, { ...query, ...(cursor ? { cursor } : {}) });
    assert.equal(page.count, page.runs.length);
    ids.push(...page.runs.map((r) => r.run_id));
    if (page.next_cursor === undefined) return ids;
    cursor = page.next_cursor;
    between(n);
  }
}

const home = (): string => join(tempDir('rlmcp-list-'), 'rl_training');

test('pages chain by cursor: every run once, newest first, runs started between pages shift nothing', () => {
  const h = home();
  const ids = writeRunDirs(h, 25);
  // Two runs created in the same millisecond: the run id orders them.
  writeRunDir(h, { runId: 'ffff0001', createdMs: Date.parse('2026-01-01T00:10:00Z') });
  writeRunDir(h, { runId: 'ffff0000', createdMs: Date.parse('2026-01-01T00:10:00Z') });
  const index = runIndexOver(h);
  const expected = new RunStore(h).list().map((e) => e.run_id);
  assert.equal(expected.length, 27);

  const first = list(index, { limit: 10 });
  assert.deepEqual([first.count, first.total], [10, 27]);
  assert.deepEqual(first.runs.map((r) => r.run_id), expected.slice(0, 10));
  assert.equal(first.runs[0]!.run_id, ids.at(-1));

  let added = 0;
  const paged = allPages(index, { limit: 10 }, () => writeRunDir(h, { runId: `aaaa000${added++}`, createdMs: Date.now() }));
  assert.ok(added >= 2);
  assert.deepEqual(paged, expected, 'no run twice, none missed, in order');
  assert.ok(expected.indexOf('ffff0000') < expected.indexOf('ffff0001'));

  const fresh = list(index, { limit: 200 });
  assert.equal(fresh.total, 27 + added);
  assert.equal(fresh.next_cursor, undefined);
  assert.deepEqual(fresh.runs.slice(0, added).map((r) => r.run_id).sort(), Array.from({ length: added }, (_, i) => `aaaa000${i}`));
});

test('filters by status, active or ended, and environment, with the total of matches', () => {
  const h = home();
  writeRunDirs(h, 12); // completed, failed, stopped in turn; gsm8k and letter_counting in turn
  writeRunDir(h, { runId: 'bbbb0001', createdMs: Date.now() - 5000, status: 'running' });
  writeRunDir(h, { runId: 'bbbb0002', createdMs: Date.now() - 4000, status: 'starting', environment: 'letter_counting' });
  const index = runIndexOver(h);
  const statuses = (page: RunPage): string[] => [...new Set(page.runs.map((r) => r.status))].sort();

  assert.deepEqual([list(index).total, list(index, { status: 'active' }).total, list(index, { status: 'ended' }).total], [14, 2, 12]);
  assert.deepEqual(statuses(list(index, { status: 'active' })), ['running', 'starting']);
  const failed = list(index, { status: 'failed' });
  assert.deepEqual([failed.total, statuses(failed)], [4, ['failed']]);
  const letters = list(index, { environment: 'letter_counting' });
  assert.equal(letters.total, 7);
  assert.ok(letters.runs.every((r) => r.environment === 'letter_counting'));
  assert.equal(list(index, { status: 'active', environment: 'letter_counting' }).runs[0]!.run_id, 'bbbb0002');
  assert.equal(list(index, { environment: 'nope' }).total, 0);

  // Health is on every listed run: judged now for an active one, kept from the record for an ended one.
  const running = list(index, { status: 'running' }).runs[0]!;
  assert.equal(running.health?.verdict, 'waiting_for_data');
  assert.deepEqual(failed.runs[0]!.health?.reasons.map((r) => r.code), ['failed']);

  // A filtered listing pages under its filter; the cursor carries it, and may not be given another.
  assert.equal(allPages(index, { limit: 3, status: 'ended', environment: 'gsm8k' }).length, 6);
  const cursor = list(index, { limit: 3, status: 'ended' }).next_cursor!;
  assert.equal(list(index, { limit: 3, cursor }).runs.every((r) => ['completed', 'failed', 'stopped'].includes(r.status)), true);
  assert.throws(() => list(index, { cursor, status: 'failed' }), (err: unknown) => err instanceof UserError && /status=ended/.test(err.message));
  assert.throws(() => list(index, { cursor: 'not-a-cursor' }), (err: unknown) => err instanceof UserError && /next_cursor/.test(err.message));
});

test('a damaged or missing run.json is listed as unknown with the reason, without hiding the others', () => {
  const h = home();
  writeRunDirs(h, 3);
  writeFileSync(join(h, 'runs', '00000001', 'run.json'), '{"run_id": "trunc');
  mkdirSync(join(h, 'runs', 'cccc0000'));
  const index = runIndexOver(h);
  const page = list(index);
  assert.equal(page.total, 4);
  assert.equal(listedRun(page, '00000001').status, 'unknown');
  assert.match(listedRun(page, '00000001').error!, /not valid JSON/);
  assert.deepEqual([listedRun(page, 'cccc0000').status, listedRun(page, 'cccc0000').error], ['unknown', 'run.json is missing']);
  assert.equal(list(index, { status: 'unknown' }).total, 2);
  // The missing record appears (a run being created): the run is listed as it is.
  writeRunDir(h, { runId: 'cccc0000', createdMs: Date.now() });
  assert.equal(listedRun(list(index), 'cccc0000').status, 'completed');
});

test('a second listing parses no unchanged record; an ended record rewritten by hand is noticed by its stat', () => {
  const h = home();
  writeRunDirs(h, 40);
  writeRunDir(h, { runId: 'dddd0000', createdMs: Date.now(), status: 'running' });
  const index = runIndexOver(h);
  list(index, { limit: 5 });
  assert.equal(index.parsed, 41);
  list(index, { limit: 5 });
  list(index, { limit: 5, status: 'ended' });
  assert.equal(index.parsed, 41, 'nothing changed: nothing parsed, not even the active run');

  // A rate-limit stamp through the store: the record is read again once, the listing is the same.
  new RunStore(h).update('00000004', (r) => void (r.last_full_check_at = new Date().toISOString()));
  const before = list(index, { limit: 200 });
  assert.equal(index.parsed, 42);

  // Garbage written over an ended run's record after it was indexed, then a hand edit of another.
  writeFileSync(join(h, 'runs', '00000007', 'run.json'), 'garbage');
  const edited = runRecord(h, { runId: '00000009', createdMs: Date.parse('2026-01-01T00:09:00Z'), status: 'stopped', environment: 'edited_by_hand' });
  writeFileSync(join(h, 'runs', '00000009', 'run.json'), JSON.stringify(edited));
  const after = list(index, { limit: 200 });
  assert.equal(index.parsed, 44);
  assert.equal(listedRun(after, '00000007').status, 'unknown');
  assert.match(listedRun(after, '00000007').error!, /not valid JSON/);
  assert.deepEqual([listedRun(after, '00000009').status, listedRun(after, '00000009').environment], ['stopped', 'edited_by_hand']);
  assert.equal(list(index, { environment: 'edited_by_hand' }).total, 1);
  assert.equal(after.total, before.total);

  // A removed run directory leaves the listing.
  rmSync(join(h, 'runs', '00000003'), { recursive: true });
  assert.equal(list(index, { limit: 200 }).runs.some((r) => r.run_id === '00000003'), false);
});

test('a restarted server reads the persisted index: only active runs and records changed meanwhile are parsed', () => {
  const h = home();
  writeRunDirs(h, 30);
  writeRunDir(h, { runId: 'eeee0000', createdMs: Date.now(), status: 'running', runningPids: [process.pid] });
  const first = runIndexOver(h);
  const listed = list(first, { limit: 200 });
  first.save();

  // While no server runs: one record rewritten, one run created.
  writeFileSync(join(h, 'runs', '00000001', 'run.json'), JSON.stringify(runRecord(h, { runId: '00000001', createdMs: Date.parse('2026-01-01T00:01:00Z'), status: 'stopped' })));
  writeRunDir(h, { runId: 'eeee0001', createdMs: Date.now() + 1000 });

  const restarted = runIndexOver(h);
  const again = list(restarted, { limit: 200 });
  assert.equal(restarted.parsed, 3, 'the active run, the rewritten record and the new run');
  assert.equal(again.total, listed.total + 1);
  assert.equal(listedRun(listed, '00000001').status, 'failed');
  assert.equal(listedRun(again, '00000001').status, 'stopped');
  // What adoption needs is in the index: the processes the record calls running.
  assert.deepEqual(restarted.runs().find((r) => r.run_id === 'eeee0000')!.running, [{ pid: process.pid, start_time: null }]);

  // A damaged index file is only a cache: the records are read again.
  writeFileSync(join(h, 'cache', 'run-index.json'), '{"version": 1, "runs": [');
  const fromScratch = runIndexOver(h);
  assert.equal(list(fromScratch, { limit: 200 }).total, again.total);
  assert.equal(fromScratch.parsed, 32);
});

test('rl_list_runs through the client: defaults, a page, its cursor, and bad arguments named', async () => {
  const h = home();
  writeRunDirs(h, 7);
  const client = await connectInMemory({ RL_HOME: h });
  const all = await client.call('rl_list_runs');
  assert.equal(all.isError, false, JSON.stringify(all.json));
  assert.deepEqual([all.json.count, all.json.total, all.json.next_cursor], [7, 7, undefined]);
  const page = await client.call('rl_list_runs', { limit: 3, status: 'ended' });
  assert.deepEqual([page.json.count, page.json.total], [3, 7]);
  const next = await client.call('rl_list_runs', { limit: 3, cursor: page.json.next_cursor });
  assert.equal(next.json.runs[0].run_id, all.json.runs[3].run_id);
  for (const args of [{ limit: 0 }, { limit: 201 }, { status: 'sleeping' }]) {
    const bad = await client.call('rl_list_runs', args);
    assert.equal(bad.isError, true, JSON.stringify(args));
  }
  const wrongCursor = await client.call('rl_list_runs', { cursor: 'xyz' });
  assert.equal(wrongCursor.isError, true);
  assert.match(wrongCursor.json.error, /next_cursor of the previous rl_list_runs answer/);
});
