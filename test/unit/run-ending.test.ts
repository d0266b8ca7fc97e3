/**
 * How a run's ending is written (supervision/ending.ts), as a table: a run that is stopped reads
 * `stopping` while it still trains, one that ended by itself takes its status at once, and the
 * record keeps what the processes logged until they were gone.
 */
import assert from 'node:assert/strict';
import type { RunStatus } from '../../src/core/runWords.js';
import { flushedWhen } from '../../src/runtime/runs/registry/store.js';
import { test } from 'node:test';
import { recordEnded, recordOutcome, recordStopping, stillTraining } from '../../src/runtime/runs/supervision/ending.js';
import type { RunObservations } from '../../src/runtime/runs/seams/record.js';
import { runRecord } from '../helpers/registry.js';

const AT = '2026-11-25T10:00:00.000Z';
const LATER = '2026-11-25T10:00:12.000Z';

function running(live: readonly ('api' | 'trainer' | 'env')[]) {
  const r = runRecord('/home', { runId: 'abcdef01', createdMs: Date.parse('2026-11-25T09:00:00Z'), status: 'running' });
  for (const name of ['api', 'trainer', 'env'] as const) r.processes[name].state = live.includes(name) ? 'running' : 'exited';
  return r;
}

const CASES = [
  { name: 'a budget stop with every process alive', live: ['api', 'trainer', 'env'] as const, verdict: { status: 'stopped' as const, error: 'budget reached' }, now: 'stopping', then: 'stopped' },
  { name: 'a stall stop (RL_STALL_ACTION=stop) of a run that still trains', live: ['api', 'trainer', 'env'] as const, verdict: { status: 'failed' as const, error: 'Stalled', error_process: 'env' as const }, now: 'stopping', then: 'failed' },
  { name: 'an environment that crashed while the trainer trains', live: ['api', 'trainer'] as const, verdict: { status: 'failed' as const, error: 'env died', error_process: 'env' as const }, now: 'stopping', then: 'failed' },
  { name: 'a trainer that failed, its API and environment left', live: ['api', 'env'] as const, verdict: { status: 'failed' as const, error: 'trainer died', error_process: 'trainer' as const }, now: 'failed', then: 'failed' },
  { name: 'a completion with its API and environment left', live: ['api', 'env'] as const, verdict: { status: 'completed' as const }, now: 'completed', then: 'completed' },
];

for (const c of CASES) {
  test(`an outcome: ${c.name} reads ${c.now}, and ${c.then} once the processes are gone`, () => {
    const r = running(c.live);
    recordOutcome(r, c.verdict, { error: c.verdict.error }, AT);
    assert.equal(r.status, c.now);
    assert.equal(r.ended_at === undefined, c.now === 'stopping', 'ended_at only once the run no longer trains');
    if ('error' in c.verdict) assert.equal(r.error, c.verdict.error, 'the reason is there at once');
    for (const p of Object.values(r.processes)) p.state = 'exited';
    assert.equal(stillTraining(r), false);
    const observed: RunObservations = { observed_at: LATER, steps_completed: 11 };
    recordEnded(r, LATER, observed);
    assert.equal(r.status, c.then);
    assert.equal(r.outcome, undefined);
    assert.equal(r.observed?.steps_completed, 11, 'the steps finished during the stop are kept');
    assert.equal(r.ended_at, c.now === 'stopping' ? LATER : AT);
  });
}

test("a user's stop reads stopping, then stopped; a stop of a run whose outcome is pending keeps that outcome", () => {
  const r = running(['api', 'trainer', 'env']);
  recordStopping(r, AT);
  assert.deepEqual([r.status, r.phase, r.stop_requested_at], ['stopping', 'stopping', AT]);
  recordEnded(r, LATER, undefined);
  assert.deepEqual([r.status, r.ended_at], ['stopped', LATER]);

  // A server died while stopping a run it judged stalled: the next one finishes the stop, and the run failed.
  const pending = running(['api', 'trainer', 'env']);
  recordOutcome(pending, { status: 'failed', error: 'Stalled', error_process: 'env' }, {}, AT);
  recordStopping(pending, LATER);
  assert.equal(pending.phase_started_at, AT, 'the stop carries on from when it began');
  recordEnded(pending, LATER, undefined);
  assert.equal(pending.status, 'failed');
});

test('a record is flushed to disk when its run ends, not at each change on the way (table)', () => {
  const rows: Array<[RunStatus, RunStatus, boolean]> = [
    ['starting', 'starting', false],
    ['starting', 'running', false],
    ['running', 'stopping', false],
    ['running', 'completed', true],
    ['stopping', 'stopped', true],
    ['starting', 'failed', true],
    // A stamp on an ended run; a resumed run starting again.
    ['failed', 'failed', false],
    ['failed', 'starting', false],
  ];
  for (const [before, after, flushed] of rows) assert.equal(flushedWhen(before, after), flushed, `${before} -> ${after}`);
});
