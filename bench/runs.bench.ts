/**
 * Training runs: start-up to `running` with processes that are ready at once (the fake Atropos
 * API, trainer and environment), beside the seed's fixed 135 s schedule (sleeps of 5 + 30 + 90
 * + 10 s before it called a run running); the latency of rl_stop_training for three
 * well-behaved processes (SIGTERM, each exits at once); and four runs asked to start at once until
 * all four are running, beside one start measured in the same run.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDamaged } from '../src/runtime/runs/seams/record.js';
import { Runtime } from '../src/runtime/wiring/runtime.js';
import { makeFakeInstall } from '../test/helpers/fakeInstall.js';
import { fakeRunSettings } from './runSettings.js';
import type { BenchFigure } from './run.js';

const ROUNDS = 5;
const CONCURRENT = 4;
const SEED_SCHEDULE_S = 5 + 30 + 90 + 10;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export default async function runsBench(): Promise<BenchFigure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'rlmcp-bench-runs-'));
  const { root, python, trainerControl } = await makeFakeInstall({ dir });
  // A long step: the run stays in training until the bench stops it.
  trainerControl({ step_seconds: 5 });
  // The fake Tinker service the trainer saves its checkpoints to and the start asks for its live models.
  mkdirSync(join(dir, 'tinker'));
  const runtime = new Runtime(await fakeRunSettings(dir, { root, python }));
  const status = (id: string): string => {
    const entry = runtime.runs.get(id);
    return isDamaged(entry) ? 'unknown' : entry.status;
  };
  const until = async (id: string, wanted: string): Promise<void> => {
    const deadline = Date.now() + 120_000;
    while (status(id) !== wanted) {
      if (Date.now() > deadline || ['failed', 'completed'].includes(status(id))) throw new Error(`run ${id} is ${status(id)}, not ${wanted}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  const startups: number[] = [];
  const stops: number[] = [];
  /** When each process was seen gone, from the start of the stop (last round). */
  let exits = '';
  let fourAtOnce = 0;
  try {
    const { config } = await runtime.selection.select('gsm8k');
    for (let round = 0; round < ROUNDS; round++) {
      const started = performance.now();
      const { record } = await runtime.runs.start(config);
      await until(record.run_id, 'running');
      startups.push((performance.now() - started) / 1000);
      const stopping = performance.now();
      const answer = await runtime.runs.stop(record.run_id);
      if (answer.status !== 'stopped') throw new Error(`stop answered ${JSON.stringify(answer)}`);
      stops.push(performance.now() - stopping);
      const stopped = runtime.runs.get(record.run_id);
      if (!isDamaged(stopped)) {
        const from = Date.parse(stopped.stop_requested_at!);
        exits = (['env', 'trainer', 'api'] as const).map((p) => `${p} +${Date.parse(stopped.processes[p]!.ended_at!) - from} ms`).join(', ');
      }
    }
    const started = performance.now();
    // Four starts asked at once, as four agents (or one agent's parallel calls) would ask them.
    const ids = (await Promise.all(Array.from({ length: CONCURRENT }, () => runtime.runs.start(config)))).map((s) => s.record.run_id);
    await Promise.all(ids.map((id) => until(id, 'running')));
    fourAtOnce = (performance.now() - started) / 1000;
    await Promise.all(ids.map((id) => runtime.runs.stop(id)));
  } finally {
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return [
    {
      name: `rl_start_training to status running, processes ready at once (median of ${ROUNDS})`,
      value: median(startups),
      unit: 's',
      baseline: { name: "the seed's fixed schedule (sleeps 5 + 30 + 90 + 10 s)", value: SEED_SCHEDULE_S, unit: 's' },
      target: '< 3 s',
      note: `all rounds: ${startups.map((s) => s.toFixed(2)).join(', ')} s`,
    },
    {
      name: `rl_stop_training latency, env + trainer + API exiting on SIGTERM (median of ${ROUNDS})`,
      value: median(stops),
      unit: 'ms',
      target: '< 1 s',
      note: `all rounds: ${stops.map((s) => s.toFixed(0)).join(', ')} ms; exits in the last round: ${exits} (the fake run-api ends its serve_forever loop on a 0.05 s poll)`,
    },
    {
      name: `${CONCURRENT} runs asked to start at once, until all ${CONCURRENT} are running (each on its own ports)`,
      value: fourAtOnce,
      unit: 's',
      baseline: { name: 'one start to running, median above', value: median(startups), unit: 's' },
      target: '<= 1.5x one start',
      note: `${(fourAtOnce / median(startups)).toFixed(2)}x one start; their checks run concurrently, only the layout and creation are serialized by the start lock, start-ups overlap`,
    },
  ];
}
