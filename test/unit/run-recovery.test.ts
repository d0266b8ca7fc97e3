/**
 * Unattended recovery as a table: which endings a run's keeper resumes (RL_AUTO_RESUME), with
 * which cause, after how long, and which it never retries.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FIRST_WAIT_MS, recovery } from '../../src/runtime/runs/keeper/recovery.js';
import type { RunRecord } from '../../src/runtime/runs/seams/record.js';

type Ending = Pick<RunRecord, 'status' | 'error' | 'error_cause' | 'processes' | 'resumes'>;

const exited = (signal: string | null = null, exit_code: number | null = 1) => ({ trainer: { state: 'exited', pid: 1, pgid: 1, start_time: null, exit_code, signal, command: [], started_at: null } }) as unknown as RunRecord['processes'];
const failed = (cause: string | undefined, more: Partial<Ending> = {}): Ending => ({
  status: 'failed',
  error: `The recipe ended without its final checkpoint (exit code 1)${cause ? `: ${cause}` : '.'}`,
  ...(cause !== undefined ? { error_cause: cause } : {}),
  processes: exited(),
  ...more,
});
const automatic = (n: number): RunRecord['resumes'] => Array.from({ length: n }, (_, i) => ({ at: `2026-11-27T10:0${i}:00Z`, from_step: i, state_path: 'tinker://s:train:0/weights/000001', after: { status: 'failed' as const }, automatic: { cause: 'Tinker answered 5xx' } }));

const CASES: { name: string; ending: Ending; limit?: number; resume: false | { cause: RegExp; attempt: number; waitMs: number } }[] = [
  { name: 'Tinker 503 after the SDK retries', ending: failed("tinker.InternalServerError: Error code: 503 - {'detail': 'Service Unavailable'}"), resume: { cause: /^Tinker answered 5xx: tinker\.InternalServerError: Error code: 503/, attempt: 1, waitMs: FIRST_WAIT_MS } },
  { name: 'a connection reset', ending: failed('tinker.APIConnectionError: Connection error.'), resume: { cause: /^the connection to Tinker was reset/, attempt: 1, waitMs: FIRST_WAIT_MS } },
  { name: '429 once the SDK stopped retrying', ending: failed("tinker.RateLimitError: Error code: 429 - {'detail': 'Too Many Requests'}"), resume: { cause: /^Tinker answered 429 after its retries/, attempt: 1, waitMs: FIRST_WAIT_MS } },
  { name: 'a trainer killed with no error of its own', ending: { ...failed(undefined), error: 'The recipe ended without its final checkpoint (killed by SIGKILL).', processes: exited('SIGKILL', null) }, resume: { cause: /^the trainer was killed by SIGKILL with no error of its own$/, attempt: 1, waitMs: FIRST_WAIT_MS } },
  { name: 'the second attempt waits twice as long', ending: failed("tinker.InternalServerError: Error code: 502 - {'detail': 'Bad Gateway'}", { resumes: automatic(1) }), resume: { cause: /5xx/, attempt: 2, waitMs: 2 * FIRST_WAIT_MS } },
  { name: 'attempts used up', ending: failed("tinker.InternalServerError: Error code: 503 - {'detail': 'x'}", { resumes: automatic(2) }), resume: false },
  { name: 'RL_AUTO_RESUME=0', ending: failed("tinker.InternalServerError: Error code: 503 - {'detail': 'x'}"), limit: 0, resume: false },
  { name: 'a configuration error', ending: failed('tinker_cookbook.exceptions.ConfigurationError: Unknown model: acme/x'), resume: false },
  { name: 'a 402 billing pause', ending: failed("tinker.APIStatusError: Error code: 402 - {'detail': 'payment required'}"), resume: false },
  { name: 'the billing pause said in the log', ending: failed('The job is paused due to billing status. Error: organization balance exhausted'), resume: false },
  { name: 'a refused key', ending: failed("tinker.AuthenticationError: Error code: 401 - {'detail': 'Invalid API key'}"), resume: false },
  { name: 'a retired model', ending: failed("tinker.NotFoundError: Error code: 404 - {'detail': 'model not found'}"), resume: false },
  { name: 'a stall', ending: { ...failed(undefined), error: 'Stalled: no new metrics row for 30 s' }, resume: false },
  { name: 'a start-up failure', ending: { ...failed(undefined), error: "Start-up failed at stage 'trainer': x" }, resume: false },
  { name: "the recipe's own bug", ending: failed('RuntimeError: simulated failure in batch 3'), resume: false },
  { name: 'a budget stop', ending: { ...failed(undefined), status: 'stopped', error: 'budget reached: estimated spend $1 reached RL_MAX_RUN_COST_USD=$1' }, resume: false },
  { name: "a user's stop", ending: { ...failed(undefined), status: 'stopped', error: undefined }, resume: false },
  { name: 'completed', ending: { ...failed(undefined), status: 'completed', error: undefined }, resume: false },
];

for (const c of CASES) {
  test(`recovery: ${c.name}`, () => {
    const decision = recovery(c.ending, c.limit ?? 2);
    if (c.resume === false) {
      assert.equal(decision.resume, false, JSON.stringify(decision));
      return;
    }
    assert.ok(decision.resume, JSON.stringify(decision));
    assert.match(decision.cause, c.resume.cause);
    assert.deepEqual([decision.attempt, decision.waitMs], [c.resume.attempt, c.resume.waitMs]);
  });
}
