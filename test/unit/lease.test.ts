/**
 * Leases as tables: how a lock's holder is judged from this host or another (process table, or
 * the lease's age on the file system's clock), which holders may be taken over and by whom, a
 * holder's renewal steps; hosts told apart by hostname and boot; a keeper's view of all that.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { FileLock } from '../../src/core/os/fileLock.js';
import { hostRelation, type HostId } from '../../src/core/os/host.js';
import { type HolderFacts, type HolderVerdict, judgeHolder, LEASE, mayTakeOver, renewalStep } from '../../src/core/os/lease.js';
import { livesElsewhere, whereView } from '../../src/runtime/runs/keeping.js';
import type { RunRecord } from '../../src/runtime/runs/seams/record.js';

const limit = LEASE.durationMs + LEASE.graceMs;

test('hosts: the same hostname and boot is here, another boot of it rebooted, another hostname elsewhere; a record without a host is here', () => {
  const here: HostId = { hostname: 'login1', boot_id: 'b-1' };
  const cases: [HostId | undefined, ReturnType<typeof hostRelation>][] = [
    [undefined, 'here'],
    [{ hostname: 'login1', boot_id: 'b-1' }, 'here'],
    [{ hostname: 'login1', boot_id: 'b-0' }, 'rebooted'],
    [{ hostname: 'login2', boot_id: 'b-1' }, 'elsewhere'],
    [{ hostname: 'login2', boot_id: 'b-9' }, 'elsewhere'],
  ];
  for (const [host, relation] of cases) assert.equal(hostRelation(host, here), relation, JSON.stringify(host));
});

test('a holder is judged by the process table on its host, by its lease elsewhere, and is gone after a reboot or once released', () => {
  const facts = (f: Partial<HolderFacts>): HolderFacts => ({ relation: 'here', processAlive: false, released: false, ageMs: 0, ...f });
  const cases: [string, Partial<HolderFacts>, HolderVerdict][] = [
    ['its process lives here', { processAlive: true }, 'alive'],
    ['its process is gone here', { processAlive: false }, 'gone'],
    ['released but its process still lives here (a keeper on its way out)', { processAlive: true, released: true }, 'alive'],
    ['an old lease here does not matter: the process table does', { processAlive: true, ageMs: 10 * limit }, 'alive'],
    ['another host, lease just written', { relation: 'elsewhere', ageMs: 0 }, 'fresh'],
    ['another host, at the end of the lease plus its grace', { relation: 'elsewhere', ageMs: limit }, 'fresh'],
    ['another host, a millisecond past it', { relation: 'elsewhere', ageMs: limit + 1 }, 'expired'],
    ['another host whose clock runs behind: a negative age is fresh', { relation: 'elsewhere', ageMs: -5_000 }, 'fresh'],
    ['another host, released', { relation: 'elsewhere', released: true, ageMs: 0 }, 'gone'],
    ['this host before a reboot', { relation: 'rebooted', processAlive: true, ageMs: 0 }, 'gone'],
  ];
  for (const [name, f, verdict] of cases) assert.equal(judgeHolder(facts(f)), verdict, name);
});

test('who may take a lock over: a holder gone, by anyone; a lease expired, only where what it guards is reachable', () => {
  const cases: [HolderVerdict, boolean, boolean][] = [
    ['alive', true, false],
    ['alive', false, false],
    ['fresh', true, false],
    ['fresh', false, false],
    ['expired', true, true],
    ['expired', false, false],
    ['gone', true, true],
    ['gone', false, true],
  ];
  for (const [verdict, remote, may] of cases) assert.equal(mayTakeOver(verdict, remote), may, `${verdict}, remote ${remote}`);
});

test("a holder's renewal: renewed when due, waits otherwise, lets go once the lock names another, and ends there", () => {
  const cases: [Parameters<typeof renewalStep>, ReturnType<typeof renewalStep>][] = [
    [['held', true, 0], { state: 'held', action: 'wait' }],
    [['held', true, LEASE.renewMs - 1], { state: 'held', action: 'wait' }],
    [['held', true, LEASE.renewMs], { state: 'held', action: 'renew' }],
    [['held', true, 5 * LEASE.durationMs], { state: 'held', action: 'renew' }],
    [['held', false, 0], { state: 'lost', action: 'detach' }],
    [['lost', true, LEASE.renewMs], { state: 'lost', action: 'none' }],
    [['released', true, LEASE.renewMs], { state: 'released', action: 'none' }],
  ];
  for (const [args, step] of cases) assert.deepEqual(renewalStep(...args), step, JSON.stringify(args));
  assert.ok(LEASE.renewMs * 4 <= LEASE.durationMs, 'a lease outlives several missed renewals');
});

test("where a run lives: a local run of another host is said to be out of sight, with its keeper's lease; one of this host or on Slurm is not", () => {
  const other = { hostname: 'elsewhere-host', boot_id: 'x' };
  const record = (r: Partial<RunRecord>): RunRecord => ({ run_id: 'ab12cd34', placement: 'local', ...r }) as RunRecord;
  assert.equal(livesElsewhere(record({ origin: other })), true);
  assert.equal(livesElsewhere(record({})), false, 'a record before hosts were named is this host');
  assert.equal(livesElsewhere(record({ placement: 'slurm', origin: other })), false, "a Slurm run's job is reached from any host");
  const expired = whereView(record({ origin: other }), { state: 'lease_expired', host: 'elsewhere-host', pid: 7, lease_age_seconds: 42, lease_renewed_at: '2026-11-28T10:00:00.000Z' });
  assert.equal(expired.lives_on, 'elsewhere-host');
  assert.match(expired.note!, /cannot see the run's processes: they live on elsewhere-host, nothing there is known to keep them: its keeper's lease expired \(written 42 s ago, last renewed at 2026-11-28T10:00:00.000Z/);
  const fresh = whereView(record({ origin: other }), { state: 'lease_fresh', host: 'elsewhere-host', pid: 7, lease_age_seconds: 1.5 });
  assert.match(fresh.note!, /kept by its keeper there \(pid 7, lease renewed 1\.5 s ago\)/);
  const slurm = whereView(record({ placement: 'slurm', slurm_job_id: '12', host: 'node1', origin: other }), { state: 'lease_fresh', host: 'elsewhere-host', pid: 7, lease_age_seconds: 1 });
  assert.deepEqual([slurm.lives_on, slurm.note], ['Slurm job 12 on node1', undefined]);
});

test("a lock file of another host's holder: held while young, taken once expired only where that is allowed, the taking written to its history", () => {
  const dir = mkdtempSync(join(tmpdir(), 'rlmcp-lease-'));
  try {
    const path = join(dir, 'supervisor.lock');
    const history = join(dir, 'keepers.jsonl');
    writeFileSync(path, JSON.stringify({ pid: 1, start_time: null, token: 'theirs', since: '', host: { hostname: 'elsewhere-host', boot_id: 'b' } }));
    const lock = new FileLock(path, undefined, { history });
    assert.equal(lock.judged()?.verdict, 'fresh');
    assert.equal(lock.tryAcquire(true), false, 'a fresh lease is never taken');
    assert.equal(lock.holder(), 1, "its holder, by its lease: pid 1 of this host's table means nothing here");
    const expiredAt = (Date.now() - LEASE.durationMs - LEASE.graceMs - 5_000) / 1000;
    utimesSync(path, expiredAt, expiredAt);
    assert.equal(lock.judged()?.verdict, 'expired');
    assert.equal(lock.holder(), undefined);
    assert.equal(lock.tryAcquire(false), false, 'not where what it guards lives on that host');
    assert.equal(lock.tryAcquire(true), true);
    assert.deepEqual([lock.judged()?.verdict, lock.isHeld()], ['alive', true]);
    assert.equal(lock.renew(), true);
    assert.equal(lock.renew(true), true);
    const lines = readFileSync(history, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => [l.event, l.detail?.host, l.detail?.verdict]), [['acquired', 'elsewhere-host', 'expired'], ['released', undefined, undefined]]);
    assert.ok(lines[0].detail.lease_age_ms > LEASE.durationMs + LEASE.graceMs);
    writeFileSync(path, JSON.stringify({ pid: 1, start_time: null, token: 'rebooted', since: '', host: { hostname: hostname(), boot_id: 'an-earlier-boot' } }));
    assert.equal(lock.judged()?.verdict, 'gone', 'a holder of an earlier boot of this host');
    assert.equal(lock.tryAcquire(false), true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
