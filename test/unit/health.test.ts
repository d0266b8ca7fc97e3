/** Health verdicts and log signals as tables: pure functions over a record and log lines, no processes. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assessHealth, FIRST_STEP_ALLOWANCE, type HealthVerdict } from '../../src/runtime/runs/watching/health.js';
import { addEnvSignals, envSignalOf, firstCause } from '../../src/runtime/runs/atropos/logSignals.js';
import { emptyProcess, type EnvLogSignals, type RunObservations, type RunRecord } from '../../src/runtime/runs/seams/record.js';
import type { FullRecord } from '../helpers/runs.js';
import { TrainerLogScanner } from '../../src/runtime/runs/atropos/trainerLog.js';
import { nextObservations } from '../../src/runtime/runs/atropos/observer.js';

const T0 = Date.parse('2026-11-23T10:00:00.000Z');
const at = (seconds: number): string => new Date(T0 + seconds * 1000).toISOString();
const STALL = 100;

function record(status: RunRecord['status'], observed?: Partial<RunObservations>, extra: Partial<RunRecord> = {}): FullRecord {
  const processes = { api: emptyProcess([]), trainer: emptyProcess([]), env: emptyProcess([]) };
  for (const p of Object.values(processes)) p.state = 'running';
  return {
    version: 1,
    run_id: 'abcdef01',
    framework: 'atropos',
    placement: 'local',
    environment: 'gsm8k',
    environment_file: '/x/gsm8k.py',
    status,
    phase: status === 'running' ? 'training' : status === 'starting' ? 'starting_env' : 'done',
    phase_started_at: at(0),
    created_at: at(0),
    started_at: at(0),
    running_at: at(0),
    wandb_project: 'p',
    wandb_run_name: 'n',
    trainer_wandb_run_name: 't',
    wandb_run_suffix: 'mcp',
    wandb_group: 'abcdef01',
    wandb_name: 'w',
    use_wandb: false,
    config_path: '/x/config.yaml',
    logs: { api: '/x/api.log', trainer: '/x/trainer.log', env: '/x/env.log' },
    ports: { api: 1, inference: 2 },
    processes,
    ...(observed ? { observed: { observed_at: at(0), steps_completed: 0, ...observed } } : {}),
    ...extra,
  } as FullRecord;
}

const connection = { line: 'Error in collect_trajectories: RetryError[<Future at 0x7f state=finished raised ClientConnectorError>]', count: 12 };

const cases: { name: string; run: RunRecord; now: number; verdict: HealthVerdict; codes?: string[]; idle?: number | null }[] = [
  { name: 'starting', run: record('starting'), now: 5, verdict: 'starting', idle: null },
  { name: 'no data yet, inside the first-step allowance', run: record('running', {}), now: STALL * FIRST_STEP_ALLOWANCE - 1, verdict: 'waiting_for_data', codes: ['waiting_for_data'], idle: STALL * FIRST_STEP_ALLOWANCE - 1 },
  { name: 'no data past the first-step allowance: stalled', run: record('running', {}), now: STALL * FIRST_STEP_ALLOWANCE + 1, verdict: 'stalled', codes: ['stalled'] },
  {
    name: 'no data, connection errors: stalled with the environment error as evidence',
    run: record('running', { env: { connection_errors: { ...connection, at: at(150) } } }),
    now: 250,
    verdict: 'stalled',
    codes: ['stalled', 'env_connection_errors'],
  },
  {
    name: 'no data yet but connection errors, inside the allowance: waiting, the errors named',
    run: record('running', { env: { connection_errors: { ...connection, at: at(20) } } }),
    now: 30,
    verdict: 'waiting_for_data',
    codes: ['waiting_for_data', 'env_connection_errors'],
  },
  { name: 'data flowing, no step yet', run: record('running', { data_first_at: at(10), data_last_at: at(150) }), now: 160, verdict: 'healthy', idle: 10 },
  { name: 'steps completing', run: record('running', { steps_completed: 3, step_completed_at: at(400), data_first_at: at(10), data_last_at: at(390) }), now: 450, verdict: 'healthy', idle: 50 },
  { name: 'after the first step the limit is RL_STALL_SECONDS', run: record('running', { steps_completed: 3, step_completed_at: at(400), data_first_at: at(10), data_last_at: at(390) }), now: 400 + STALL + 1, verdict: 'stalled' },
  {
    name: 'connection errors since the last data: degraded',
    run: record('running', { steps_completed: 1, step_completed_at: at(50), data_first_at: at(10), data_last_at: at(40), env: { connection_errors: { ...connection, at: at(60) } } }),
    now: 70,
    verdict: 'degraded',
    codes: ['env_connection_errors'],
  },
  {
    name: 'old connection errors, data since: healthy, the errors still named',
    run: record('running', { steps_completed: 1, step_completed_at: at(50), data_first_at: at(10), data_last_at: at(65), env: { connection_errors: { ...connection, at: at(60) } } }),
    now: 70,
    verdict: 'healthy',
    codes: ['env_connection_errors'],
  },
  {
    name: 'the environment exited 0 while training goes on: healthy, and said',
    run: (() => {
      const r = record('running', { steps_completed: 1, step_completed_at: at(50), data_first_at: at(10), data_last_at: at(40) });
      Object.assign(r.processes.env, { state: 'exited', exit_code: 0, ended_at: at(45) });
      return r;
    })(),
    now: 60,
    verdict: 'healthy',
    codes: ['env_finished'],
  },
  { name: 'failed: the error is the reason', run: record('failed', undefined, { error: 'The trainer ended (exit code 1).', error_process: 'trainer', ended_at: at(9) }), now: 10, verdict: 'failed', codes: ['failed'] },
  { name: 'completed', run: record('completed', { steps_completed: 5, step_completed_at: at(90) }, { ended_at: at(95) }), now: 100, verdict: 'completed', codes: [] },
  { name: 'stopping', run: record('stopping'), now: 10, verdict: 'stopping', codes: ['stopping'] },
];

for (const c of cases) {
  test(`health: ${c.name}`, () => {
    const health = assessHealth(c.run, T0 + c.now * 1000, { stallSeconds: STALL });
    assert.equal(health.verdict, c.verdict, JSON.stringify(health));
    if (c.codes) assert.deepEqual(health.reasons.map((r) => r.code), c.codes);
    if (c.idle !== undefined) assert.equal(health.seconds_since_progress, c.idle);
  });
}

test('health: a stall names the time of the last progress and the limit', () => {
  const h = assessHealth(record('running', { steps_completed: 2, step_completed_at: at(10), data_first_at: at(5), data_last_at: at(8) }), T0 + 200_000, { stallSeconds: STALL });
  assert.equal(h.reasons[0]!.evidence?.at, at(10));
  assert.match(h.reasons[0]!.message, /for 190 s, more than 100 s \(RL_STALL_SECONDS\)/);
  assert.equal(h.last_step, 2);
  assert.equal(h.last_step_at, at(10));
});

test('log signals: which environment lines count as what', () => {
  const table: [string, ReturnType<typeof envSignalOf>][] = [
    ['Error in collect_trajectories: RetryError[<Future at 0x7f state=finished raised ClientConnectorError>]', 'connection_errors'],
    ["aiohttp.client_exceptions.ClientConnectorError: Cannot connect to host localhost:9004 ssl:default [Connect call failed ('127.0.0.1', 9004)]", 'connection_errors'],
    ['Failed to process group, retrying...', 'dropped_groups'],
    ['Scores are the same in a group, skipping...', 'dropped_groups'],
    ['Error in scoring: {...}', 'errors'],
    ['Failed to send single ScoredDataGroup after retries: timeout', 'errors'],
    ['ERROR:root:Error in scoring: {...}', 'errors'],
    ['WARNING:atroposlib.envs.base:Failed to process group, retrying...', 'dropped_groups'],
    ['INFO:root:Sent 16 rollouts', undefined],
  ];
  for (const [line, kind] of table) assert.equal(envSignalOf(line), kind, line);
  const signals: EnvLogSignals = {};
  assert.equal(addEnvSignals(signals, ['nothing', 'Failed to process group, retrying...', 'Failed to process group, retrying...'], at(3)), true);
  assert.deepEqual(signals.dropped_groups, { line: 'Failed to process group, retrying...', count: 2, at: at(3) });
  assert.equal(addEnvSignals(signals, ['nothing'], at(4)), false);
});

test('a quoted log line cut at its length limit never ends inside a key', () => {
  const key = 'tk-quoted-0123456789abcdef0123456789abcdef';
  const line = `Error in scoring: ${'w '.repeat(125)}Authorization: Bearer ${key} and more`;
  const signals: EnvLogSignals = {};
  addEnvSignals(signals, [line], at(1));
  const quoted = signals.errors!.line;
  assert.ok(quoted.length <= 303 && quoted.endsWith('...'), quoted);
  for (let i = 0; i + 4 <= key.length; i++) assert.ok(!quoted.includes(key.slice(i, i + 4)), `${quoted} shows part of the key`);
  assert.equal(firstCause([`ModuleNotFoundError: ${'w '.repeat(132)}token=${key}`])?.includes(key.slice(0, 4)), false);
});

test('first cause: the line under the wrapper, not the wrapper', () => {
  const tenacity = [
    'Traceback (most recent call last):',
    '  File "x.py", line 1, in <module>',
    "openai.AuthenticationError: Error code: 401 - {'error': {'message': 'Invalid API key'}}",
    '',
    'The above exception was the direct cause of the following exception:',
    '',
    'Traceback (most recent call last):',
    'tenacity.RetryError: RetryError[<Future at 0x7f0 state=finished raised AuthenticationError>]',
  ];
  assert.match(firstCause(tenacity)!, /^openai\.AuthenticationError: Error code: 401/);
  const wandb = ['Registered as trainer: abc', 'Error initializing wandb: 401 Unauthorized: invalid API key', 'Traceback (most recent call last):', "AttributeError: property 'use_wandb' of 'Trainer' object has no setter"];
  assert.equal(firstCause(wandb), 'Error initializing wandb: 401 Unauthorized: invalid API key');
  assert.equal(firstCause(['Traceback (most recent call last):', '  File "env.py", line 17', "ModuleNotFoundError: No module named 'tinker_atropos'"]), "ModuleNotFoundError: No module named 'tinker_atropos'");
  assert.equal(firstCause(['Traceback (most recent call last):', '  File "a.py"', 'ValueError: bad config']), 'ValueError: bad config');
  assert.equal(firstCause(['all fine', 'Step 1/10']), undefined);
});

test('trainer log markers count when another writer spliced text in before their newline', () => {
  const scanner = new TrainerLogScanner();
  scanner.feed('Sampling client updated: tinker://abc:train:0/sampler_weights/step_3INFO:     127.0.0.1:5 - "POST /generate HTTP/1.1" 200 OK\n');
  scanner.feed('Step 2/3INFO:     127.0.0.1:5 - "POST /generate HTTP/1.1" 200 OK\nStep 2 complete - Loss: 0.5\nTraining complete!INFO:     127.0.0.1:5 - "POST /generate HTTP/1.1" 200 OK\nTraining completed successfully!\n');
  const s = scanner.end();
  assert.deepEqual([s.step, s.total_steps, s.steps_completed, s.completed, s.latest], [2, 3, 3, true, 'tinker://abc:train:0/sampler_weights/step_3']);
  // The uvicorn thread's start-up line can land inside a step's values, too.
  const INFO = 'INFO:     Uvicorn running on http://0.0.0.0:8001 (Press CTRL+C to quit)\n';
  const values = new TrainerLogScanner({ series: true });
  values.feed(`Step 0/2\nGot 32 Datum objects${INFO}\nLoss: 0.7${INFO}\nReward/mean: 0.5000${INFO}\nStep 0 complete - Loss: 0.7\n`);
  values.feed(`Step 1/2\nGot 16 Datum objects\nLoss: 1.5e-05\nReward/mean: -inf${INFO}\nStep 1 complete - Loss: 1.5e-05\n`);
  const v = values.end();
  assert.deepEqual(v.series, { reward: [[0, 0.5], [1, -Infinity]], loss: [[0, 0.7], [1, 1.5e-5]] });
  assert.equal(v.sequences_trained, 48);
  const other = new TrainerLogScanner();
  other.feed('Training completed successfully!\n');
  assert.equal(other.end().completed, false, "only upstream's own 'Training complete!' line counts");
});

test('a trainer whose steps train nothing (every group skipped for zero advantages) is degraded: no learning signal, until a step trains again', () => {
  const step = (k: number, datums: number): string =>
    `Step ${k}/9\nFetching data from Atropos...\n${datums === 0 ? 'Skipped 2 groups with zero advantages\n' : ''}Got ${datums} Datum objects\nLoss: ${datums ? 0.5 : 0.0}\nReward/mean: 1.0000\nStep ${k} complete - Loss: ${datums ? 0.5 : 0.0}\n`;
  const scanner = new TrainerLogScanner();
  const lookAt = (seconds: number, previous?: RunObservations) => {
    const { steps_completed, total_steps, recent_rewards, last_loss, sequences_trained, untrained_steps } = scanner.summary;
    return nextObservations(previous, { trainer: { steps_completed, total_steps, recent_rewards, last_loss, sequences_trained, untrained_steps }, api: { queue_size: 0, current_step: steps_completed }, envLines: [] }, at(seconds)).next;
  };
  scanner.feed(step(0, 4) + step(1, 0) + step(2, 0));
  const seen = lookAt(10);
  const health = assessHealth(record('running', { ...seen, data_first_at: at(1) }), T0 + 11_000, { stallSeconds: STALL });
  assert.equal(health.verdict, 'degraded');
  const reason = health.reasons.find((r) => r.code === 'no_learning_signal');
  assert.ok(reason, JSON.stringify(health));
  assert.match(reason.message, /^The trainer's last 2 steps trained nothing: every group of their batches scored alike/);
  assert.deepEqual(reason.evidence, { line: 'Skipped 2 groups with zero advantages', count: 2, process: 'trainer' });

  scanner.feed(step(3, 4));
  const again = assessHealth(record('running', { ...lookAt(20, seen), data_first_at: at(1) }), T0 + 21_000, { stallSeconds: STALL });
  assert.equal(again.verdict, 'healthy', JSON.stringify(again));
});
