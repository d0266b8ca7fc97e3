/**
 * The pure rules of a run's life, without a process: the outcome rules (what ends a run, and
 * how), each start-up stage's readiness and how often it is probed, and the supervisor's transition table.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RunProcess } from '../../src/core/files/home.js';
import { canTransition, LIFE_STATES, type LifeState, Lifecycle, TRANSITIONS } from '../../src/runtime/runs/supervision/lifecycle.js';
import { judge, type ProcessEnd, type RunFacts, verdictOf } from '../../src/runtime/runs/atropos/outcome.js';
import { apiReadiness, envReadiness, INFERENCE_GRACE_MS, STAGE_GOAL, trainerReadiness } from '../../src/runtime/runs/atropos/readiness.js';
import type { Readiness, RunFramework, Verdict } from '../../src/runtime/runs/seams/framework.js';
import { atStage } from '../../src/runtime/runs/supervision/stages.js';
import { pauseAfterProbe, probeDelayMs } from '../../src/runtime/runs/supervision/startup.js';
import { Waker } from '../../src/runtime/runs/supervision/polling.js';
import { processOf, type RunRecord } from '../../src/runtime/runs/seams/record.js';
import type { Placement } from '../../src/runtime/runs/seams/placement.js';
import type { RunStore } from '../../src/runtime/runs/registry/store.js';
import type { Settings } from '../../src/core/settings.js';
import { StartUp } from '../../src/runtime/runs/supervision/startup.js';
import { TrackedRun } from '../../src/runtime/runs/supervision/trackedRun.js';
import { pino } from 'pino';
import { tempDir } from '../helpers/tmp.js';

const running: ProcessEnd = { state: 'running', exit_code: null, signal: null };
const exit = (exit_code: number): ProcessEnd => ({ state: 'exited', exit_code, signal: null });
const killed = (signal: string): ProcessEnd => ({ state: 'exited', exit_code: null, signal });
/** An adopted process that ended while the run had no keeper: no code, no signal. */
const unseen: ProcessEnd = { state: 'exited', exit_code: null, signal: null };
const UNKNOWN = 'exit code unknown: it ended while the run had no keeper';

interface Row {
  name: string;
  processes: Partial<Record<RunProcess, ProcessEnd>>;
  log?: Partial<RunFacts['trainerLog']>;
  envLogShowsCrash?: boolean;
  verdict: Verdict | undefined;
}

const failed = (error_process: RunProcess, error: string): Verdict => ({ status: 'failed', error, error_process });

const ROWS: Row[] = [
  { name: 'all running: the run goes on', processes: {}, verdict: undefined },
  { name: 'still starting: the run goes on', processes: { trainer: { state: 'not_started', exit_code: null, signal: null } }, verdict: undefined },
  { name: 'a running trainer whose log says complete: goes on until it exits', processes: {}, log: { completed: true }, verdict: undefined },
  { name: 'trainer exit 0 with Training complete!: completed', processes: { trainer: exit(0) }, log: { completed: true }, verdict: { status: 'completed' } },
  {
    name: "'Error in step' at exit 0 after Training complete!: failed",
    processes: { trainer: exit(0) },
    log: { completed: true, error_line: 'Error in step 3: boom' },
    verdict: failed('trainer', "The trainer reported 'Error in step 3: boom' and ended (exit code 0)."),
  },
  {
    name: "'Error during training' at exit 0: failed",
    processes: { trainer: exit(0) },
    log: { error_line: 'Error during training' },
    verdict: failed('trainer', "The trainer reported 'Error during training' and ended (exit code 0)."),
  },
  {
    name: 'Training complete! but killed by SIGKILL: failed',
    processes: { trainer: killed('SIGKILL') },
    log: { completed: true },
    verdict: failed('trainer', "The trainer printed 'Training complete!' but then ended abnormally (killed by SIGKILL); its log tail shows why."),
  },
  {
    name: "trainer exit 1 without 'Training complete!': failed",
    processes: { trainer: exit(1) },
    verdict: failed('trainer', "The trainer ended (exit code 1) without printing 'Training complete!'."),
  },
  {
    name: 'trainer exit 0 without Training complete!: failed',
    processes: { trainer: exit(0) },
    verdict: failed('trainer', "The trainer ended (exit code 0) without printing 'Training complete!'."),
  },
  { name: 'adopted trainer, unknown exit, completed log: completed', processes: { trainer: unseen }, log: { completed: true }, verdict: { status: 'completed' } },
  {
    name: 'adopted trainer, unknown exit, no Training complete!: failed',
    processes: { trainer: unseen },
    verdict: failed('trainer', `The trainer ended (${UNKNOWN}) without printing 'Training complete!'.`),
  },
  { name: 'the API exited: failed', processes: { api: exit(1) }, verdict: failed('api', 'The Atropos API server ended (exit code 1) while the run was active.') },
  { name: 'the API exited 0: still failed', processes: { api: exit(0) }, verdict: failed('api', 'The Atropos API server ended (exit code 0) while the run was active.') },
  {
    name: 'trainer and API both ended badly: the API is reported',
    processes: { api: killed('SIGTERM'), trainer: exit(1) },
    verdict: failed('api', 'The Atropos API server ended (killed by SIGTERM) while the run was active.'),
  },
  { name: 'a completed trainer outranks an API that ended after it', processes: { api: exit(1), trainer: exit(0) }, log: { completed: true }, verdict: { status: 'completed' } },
  { name: 'env exit 0: normal, the run goes on', processes: { env: exit(0) }, verdict: undefined },
  { name: 'env exit 1: failed', processes: { env: exit(1) }, verdict: failed('env', 'The environment ended (exit code 1).') },
  { name: 'env killed by a signal: failed', processes: { env: killed('SIGKILL') }, verdict: failed('env', 'The environment ended (killed by SIGKILL).') },
  { name: 'env unknown exit with a traceback: failed', processes: { env: unseen }, envLogShowsCrash: true, verdict: failed('env', `The environment ended (${UNKNOWN}).`) },
  { name: 'env unknown exit without a traceback: the run goes on', processes: { env: unseen }, verdict: undefined },
  { name: 'env exit 0 and a completed trainer: completed', processes: { env: exit(0), trainer: exit(0) }, log: { completed: true }, verdict: { status: 'completed' } },
];

for (const row of ROWS) {
  test(`outcome: ${row.name}`, () => {
    const facts: RunFacts = {
      processes: { api: running, trainer: running, env: running, ...row.processes },
      trainerLog: { completed: false, error_line: null, ...row.log },
      envLogShowsCrash: row.envLogShowsCrash ?? false,
    };
    assert.deepEqual(verdictOf(facts), row.verdict);
  });
}

test('judge reads the trainer log and the tail of an environment log that ended unseen', async () => {
  const dir = tempDir('rlmcp-outcome-');
  const logs = { api: join(dir, 'api.log'), trainer: join(dir, 'trainer.log'), env: join(dir, 'env.log') };
  writeFileSync(logs.trainer, 'Step 1/2\nStep 2/2\nTraining complete!\n');
  writeFileSync(logs.env, 'Traceback (most recent call last)\n  File "env.py"\nValueError: bad\n');
  const record = (processes: Partial<Record<RunProcess, ProcessEnd>>): RunRecord => ({ logs, processes: { api: running, trainer: running, env: running, ...processes } }) as unknown as RunRecord;
  assert.deepEqual(await judge(record({ trainer: exit(0) })), { status: 'completed' });
  assert.deepEqual(await judge(record({ env: unseen })), failed('env', `The environment ended (${UNKNOWN}).`));
  writeFileSync(logs.env, 'INFO all good\n');
  assert.equal(await judge(record({ env: unseen })), undefined);
});

const READINESS: { name: string; got: Readiness; want: Readiness | 'failed' }[] = [
  { name: 'API answers and runs', got: apiReadiness({ answers: true, running: true }), want: 'ready' },
  { name: 'API answered but exited meanwhile', got: apiReadiness({ answers: true, running: false }), want: 'waiting' },
  { name: 'API silent', got: apiReadiness({ answers: false, running: true }), want: 'waiting' },
  { name: 'trainer not registered', got: trainerReadiness({ registered: false, inferenceAnswers: false, registeredForMs: 0, inferencePort: 8001 }), want: 'waiting' },
  { name: 'trainer registered, inference answers', got: trainerReadiness({ registered: true, inferenceAnswers: true, registeredForMs: 0, inferencePort: 8001 }), want: 'ready' },
  { name: 'trainer registered, inference silent within the grace', got: trainerReadiness({ registered: true, inferenceAnswers: false, registeredForMs: INFERENCE_GRACE_MS - 1, inferencePort: 8001 }), want: 'waiting' },
  { name: 'trainer registered, inference silent past the grace', got: trainerReadiness({ registered: true, inferenceAnswers: false, registeredForMs: INFERENCE_GRACE_MS, inferencePort: 8123 }), want: 'failed' },
  { name: 'env not started', got: envReadiness({ state: 'not_started', aliveMs: Number.NaN, dataFlowing: false }), want: 'waiting' },
  { name: 'env young without data', got: envReadiness({ state: 'running', aliveMs: 1_000, dataFlowing: false }), want: 'waiting' },
  { name: 'env young with data', got: envReadiness({ state: 'running', aliveMs: 1_000, dataFlowing: true }), want: 'ready' },
  { name: 'env settled without data', got: envReadiness({ state: 'running', aliveMs: 10_000, dataFlowing: false }), want: 'ready' },
  { name: 'env already exited (exit 0 did not fail the run)', got: envReadiness({ state: 'exited', aliveMs: 1_000, dataFlowing: false }), want: 'ready' },
];

for (const row of READINESS) {
  test(`readiness: ${row.name}`, () => {
    if (row.want !== 'failed') assert.equal(row.got, row.want);
    else assert.ok(typeof row.got === 'object' && row.got.status === 'failed' && row.got.error_process === 'trainer' && /port 8123/.test(row.got.error!), JSON.stringify(row.got));
  });
}

test('a stage probes its readiness at a tenth of its wait so far, every 50 to 250 ms (table)', () => {
  const rows: Array<[number, number]> = [
    [0, 50],
    [300, 50],
    [500, 50],
    [1_000, 100],
    [2_000, 200],
    [2_500, 250],
    [600_000, 250],
  ];
  for (const [waited, delay] of rows) assert.equal(probeDelayMs(waited), delay, `after ${waited} ms`);
});

test('events bring a probe forward, never within 50 ms of the last one; a change of state ends the pause at once', async () => {
  const waker = new Waker();
  // A trainer printing its imports: a write every 2 ms.
  const probedAt = Date.now();
  const writes = setInterval(() => waker.notify(), 2);
  try {
    await pauseAfterProbe(waker, probedAt, 10_000, () => true);
    const paused = Date.now() - probedAt;
    assert.ok(paused >= 50 && paused < 10_000, `paused ${paused} ms`);
    // Nothing happens: the probe is due after its delay.
    clearInterval(writes);
    const quietAt = Date.now();
    await pauseAfterProbe(waker, quietAt, 120, () => true);
    assert.ok(Date.now() - quietAt >= 120);
  } finally {
    clearInterval(writes);
  }
  // A stop during start-up: the supervisor leaves `starting`, the pause ends at its notice.
  let starting = true;
  const pause = pauseAfterProbe(waker, Date.now(), 10_000, () => starting);
  starting = false;
  waker.notify();
  await pause;
});

test('a start-up failure names its stage; a completion is left alone', () => {
  assert.match(atStage('trainer', STAGE_GOAL.trainer, failed('trainer', 'boom')).error!, /^Start-up failed at stage 'trainer' \(waiting for the trainer to register .*\): boom$/);
  assert.deepEqual(atStage('env', STAGE_GOAL.env, { status: 'completed' }), { status: 'completed' });
});

/** A lifecycle brought to `state` along allowed transitions (the shortest way from `created`). */
function lifecycleAt(state: LifeState): { life: Lifecycle; seen: [LifeState, LifeState][] } {
  const seen: [LifeState, LifeState][] = [];
  const life = new Lifecycle((from, to) => seen.push([from, to]));
  const path: LifeState[] = [];
  const previous = new Map<LifeState, LifeState>();
  const queue: LifeState[] = ['created'];
  while (queue.length > 0) {
    const at = queue.shift()!;
    for (const next of TRANSITIONS[at]) if (next !== 'created' && !previous.has(next)) (previous.set(next, at), queue.push(next));
  }
  for (let at = state; at !== 'created'; at = previous.get(at)!) path.unshift(at);
  for (const step of path) life.change(step);
  assert.equal(life.state, state);
  return { life, seen };
}

test('every transition of the table is allowed, and made', () => {
  let count = 0;
  for (const from of LIFE_STATES) {
    for (const to of TRANSITIONS[from]) {
      const { life, seen } = lifecycleAt(from);
      assert.equal(canTransition(from, to), true);
      life.change(to);
      assert.equal(life.state, to);
      assert.deepEqual(seen.at(-1), [from, to]);
      count++;
    }
  }
  assert.equal(count, 16);
});

test('a transition outside the table is refused and throws, leaving the state as it was', () => {
  const illegal: [LifeState, LifeState][] = [
    ['created', 'ended'],
    ['starting', 'starting'],
    ['watching', 'starting'],
    ['concluding', 'stopping'],
    ['stopping', 'concluding'],
    ['stopping', 'watching'],
    ['ended', 'detached'],
    ['detached', 'watching'],
  ];
  for (const [from, to] of illegal) {
    assert.equal(canTransition(from, to), false, `${from} -> ${to}`);
    const { life } = lifecycleAt(from);
    assert.throws(() => life.change(to), new RegExp(`illegal supervisor state change: ${from} -> ${to}`));
    assert.equal(life.state, from);
  }
});

test('only created, starting and watching go on; only ended and detached are over, and settle `done`', async () => {
  for (const state of LIFE_STATES) {
    const { life } = lifecycleAt(state);
    assert.equal(life.ongoing, ['created', 'starting', 'watching'].includes(state), state);
    assert.equal(life.over, state === 'ended' || state === 'detached', state);
    const settled = await Promise.race([life.done.then(() => true), new Promise((resolve) => setImmediate(() => resolve(false)))]);
    assert.equal(settled, life.over, state);
  }
});

test("a start-up writes each stage with its process, once: the record never names a stage whose process it lacks", async () => {
  const dir = tempDir();
  const stages: RunProcess[] = ['api', 'trainer', 'env'];
  const notStarted = { state: 'not_started', pid: null, pgid: null, start_time: null };
  const at = '2026-11-27T00:00:00.000Z';
  let current = {
    run_id: 'a1b2c3d4', status: 'starting', phase: 'starting_api', phase_started_at: at, framework: 'atropos', placement: 'local',
    processes: Object.fromEntries(stages.map((s) => [s, { ...notStarted, command: ['true'] }])),
    logs: Object.fromEntries(stages.map((s) => [s, join(dir, `${s}.log`)])),
  } as unknown as RunRecord;
  const writes: RunRecord[] = [];
  // The registry as the start-up sees it: each update is one write of run.json.
  const store = {
    update(_id: string, mutate: (r: RunRecord) => void): RunRecord {
      const next = structuredClone(current);
      mutate(next);
      writes.push((current = next));
      return next;
    },
  } as unknown as RunStore;
  const silent = pino({ level: 'silent' });
  const framework = {
    startOrder: stages,
    processName: (s: RunProcess) => s,
    stageGoal: (s: RunProcess) => `${s} is up`,
    startUpProbe: () => ({ wakeOn: () => [], readiness: async () => 'ready' as const }),
    judge: async () => undefined,
  } as unknown as RunFramework;
  let pid = 1000;
  const placement = {
    allocate: async () => 'ready' as const,
    launcher: async () => () => ({ exited: new Promise(() => undefined), identity: { pid: ++pid, pgid: pid, start_time: '1' } }),
  } as unknown as Placement;
  const run = new TrackedRun(store, silent, placement, current, () => undefined);
  const settings = { root: dir, stageTimeouts: { api: 60, trainer: 60, env: 60 } } as unknown as Settings;
  const startUp = new StartUp({ settings, logger: silent, framework, placement, childEnvs: { trainer: { TINKER_API_KEY: 'k' } } }, run, new Waker(), () => true);

  assert.equal(await startUp.proceed(), 'ready');
  assert.deepEqual(
    writes.map((w) => [w.phase, ...stages.map((s) => processOf(w, s).state)]),
    [
      ['starting_api', 'running', 'not_started', 'not_started'],
      ['starting_trainer', 'running', 'running', 'not_started'],
      ['starting_env', 'running', 'running', 'running'],
    ],
  );
  assert.equal(processOf(writes[1]!, 'trainer').started_at, writes[1]!.phase_started_at, "the stage's deadline counts from its process's start");
});
