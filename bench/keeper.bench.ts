/**
 * A run's keeper (src/runtime/runs/keeper/): what keeping each run in a process of its own costs.
 * - start to `running`, a keeper per run beside the same supervision kept in the server's own
 *   process (as before the keeper), alternating rounds in the same run (a server's first start,
 *   which also boots its keeper, is the keeper's first round);
 * - the keeper's memory (VmRSS, VmHWM) while its run trains;
 * - how long after a stall's limit the keeper has stopped the run, with no server alive;
 * - four runs asked to start at once until all four run, beside a floor measured in the same run
 *   (alternating rounds, medians):
 *   the same twelve fake processes started by hand, four runs at once, each process started once
 *   the one before it is ready (the probes the keeper waits on, polled every 50 ms), nothing of ours
 *   in between. On 2 cores the processes' own CPU is most of it.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RUN_FILES, runsRoot } from '../src/core/files/home.js';
import { createLogger } from '../src/core/logger.js';
import { SecretRedactor } from '../src/core/redact.js';
import type { Settings } from '../src/core/settings.js';
import { frameworkOf } from '../src/runtime/runs/choice/frameworks.js';
import { keepRun } from '../src/runtime/runs/keeper/keeper.js';
import type { KeeperLauncher } from '../src/runtime/runs/keeperSpawn.js';
import { RunManager } from '../src/runtime/runs/manager.js';
import { isDamaged, processOf, type RunRecord } from '../src/runtime/runs/seams/record.js';
import { groupMembers, processStartTime } from '../src/core/os/processTable.js';
import { Runtime } from '../src/runtime/wiring/runtime.js';
import { makeFakeInstall } from '../test/helpers/fakeInstall.js';
import type { BenchFigure } from './run.js';
import { fakeRunSettings } from './runSettings.js';

/**
 * Rounds of each comparison, alternating with its baseline. One round moves by a tenth or more
 * on a shared host, and a stage's end is seen on a 50 ms probe tick: with 9 single starts the
 * ratio moved from 1.00x to 1.11x between runs of the same code, so more rounds make the medians.
 */
const ROUNDS = 15;
const CONCURRENT = 4;
/** Four starts at once, and their floor, are measured this many times, alternating. */
const CONCURRENT_ROUNDS = 11;
const STALL_SECONDS = 2;
const SETTLE_MS = 3_500;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The supervision kept in this process, as a server kept it before each run had a keeper: the baseline. */
const inThisProcess: KeeperLauncher = {
  launch(settings, runDir, lock) {
    const token = randomBytes(8).toString('hex');
    lock.handTo(process.pid, processStartTime(process.pid) ?? null, token);
    void keepRun(settings, runDir, { token });
    return process.pid;
  },
  close: () => undefined,
};

async function settingsFor(dir: string, name: string, env: Record<string, string> = {}): Promise<{ settings: Settings; install: Awaited<ReturnType<typeof makeFakeInstall>> }> {
  const install = await makeFakeInstall({ dir: join(dir, name) });
  // A long step: a run stays in training until the bench stops it.
  install.trainerControl({ step_seconds: 5 });
  mkdirSync(join(dir, name, 'tinker'));
  return { settings: await fakeRunSettings(join(dir, name), install, env), install };
}

function managerFor(settings: Settings, runtime: Runtime, launcher?: KeeperLauncher): RunManager {
  const redactor = new SecretRedactor([]);
  return new RunManager({ settings, redactor, logger: createLogger({ level: 'warn', home: settings.home, redactor }) }, runtime.runs.usage, launcher);
}

/**
 * The run's record once `done` holds: read when run.json is replaced (by a rename) and at least
 * every 50 ms. Only run.json wakes it: the logs in the same directory are written many times a
 * second while a run starts, and reading the record at each write loaded the host whose CPU the
 * starts share (as would a tighter poll: four runs polled every 5 ms cost about a third of a core).
 */
async function until(runs: RunManager, home: string, id: string, done: (r: RunRecord) => boolean, seconds = 120): Promise<RunRecord> {
  const deadline = Date.now() + seconds * 1000;
  let wake = (): void => undefined;
  const watcher = watch(join(runsRoot(home), id), { persistent: false }, (_event, name) => name === RUN_FILES.record && wake());
  watcher.on('error', () => watcher.close());
  try {
    for (;;) {
      const entry = runs.get(id);
      if (!isDamaged(entry) && done(entry)) return entry;
      if (Date.now() > deadline) throw new Error(`run ${id}: ${JSON.stringify(entry).slice(0, 500)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        wake = () => (clearTimeout(timer), resolve());
      });
    }
  } finally {
    watcher.close();
  }
}

const running = (r: RunRecord): boolean => r.status === 'running';
const gone = (runs: RunManager, id: string) => (r: RunRecord): boolean => ['stopped', 'failed', 'completed'].includes(r.status) && runs.keeperOf(id) === undefined;

/** Kills the floor's process groups and waits until none of their processes is left. */
async function killGroups(groups: number[]): Promise<void> {
  for (const pid of groups) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
  while (groups.some((pid) => groupMembers(pid).length > 0)) await sleep(20);
}

/** Memory of a process in MB, as /proc says. */
function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

async function answers(url: string, ok: (body: any) => boolean = () => true): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
    return res.status === 200 && ok(await res.json().catch(() => ({})));
  } catch {
    return false;
  }
}

/** The floor: the run's three processes started by hand, each once the one before is ready; their groups. */
async function byHand(settings: Settings, r: RunRecord, logDir: string): Promise<number[]> {
  const envs = frameworkOf(r).childEnvironments(settings, r);
  const api = `http://127.0.0.1:${r.ports.api}`;
  const groups: number[] = [];
  const launch = (name: 'api' | 'trainer' | 'env'): { log: string; exited: () => boolean } => {
    const p = processOf(r, name);
    const log = join(logDir, `${r.run_id}-${name}.log`);
    const fd = openSync(log, 'a');
    const child = spawn(p.command[0]!, p.command.slice(1), { cwd: p.cwd ?? settings.root, env: envs[name] ?? {}, detached: true, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    let exited = false;
    child.on('exit', () => (exited = true));
    groups.push(child.pid!);
    return { log, exited: () => exited };
  };
  const poll = async (ready: () => Promise<boolean>): Promise<void> => {
    while (!(await ready())) await sleep(50);
  };
  launch('api');
  await poll(() => answers(`${api}/`));
  const trainer = launch('trainer');
  await poll(async () => readFileSync(trainer.log, 'utf8').includes('Registered as trainer') && (await answers(`http://127.0.0.1:${r.ports.inference}/health`)));
  const env = launch('env');
  await poll(async () => env.exited() || (await answers(`${api}/status`, (b) => b.queue_size > 0 || b.current_step > 0)));
  return groups;
}

export default async function keeperBench(): Promise<BenchFigure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'rlmcp-bench-keeper-'));
  process.setMaxListeners(64);
  const kept = await settingsFor(dir, 'kept');
  const inside = await settingsFor(dir, 'inside');
  const starving = await settingsFor(dir, 'starving', { RL_STALL_SECONDS: String(STALL_SECONDS), RL_STALL_ACTION: 'stop', RL_STOP_GRACE_SECONDS: '2' });
  starving.install.envControl({ exit_after_register: true, exit_code: 0 });
  const runtime = new Runtime(kept.settings);
  const keepers = runtime.runs;
  const baseline = managerFor(inside.settings, runtime, inThisProcess);
  const starvingRuns = managerFor(starving.settings, runtime);
  const withKeeper: number[] = [];
  const inProcess: number[] = [];
  let memory = { rss: NaN, hwm: NaN };
  const fourAtOnce: number[] = [];
  const floors: number[] = [];
  let stall = { latency: NaN, note: '' };
  const floorGroups: number[] = [];
  try {
    const { config } = await runtime.selection.select('gsm8k');
    const startToRunning = async (runs: RunManager, home: string, times: number[]): Promise<string> => {
      // Each start on a quiet host: the last run's processes gone, and the keeper a server keeps
      // waiting after a start booted (it starts 3 s after the start before), as it is for any
      // start but a server's first.
      await sleep(SETTLE_MS);
      const started = performance.now();
      const { record } = await runs.start(config);
      await until(runs, home, record.run_id, running);
      times.push((performance.now() - started) / 1000);
      return record.run_id;
    };
    for (let round = 0; round < ROUNDS; round++) {
      const id = await startToRunning(keepers, kept.settings.home, withKeeper);
      if (round === 0) {
        await sleep(2_000);
        memory = memoryOf(keepers.keeperOf(id)!);
      }
      await keepers.stop(id);
      await until(keepers, kept.settings.home, id, gone(keepers, id));
      const inner = await startToRunning(baseline, inside.settings.home, inProcess);
      await baseline.stop(inner);
      await until(baseline, inside.settings.home, inner, (r) => r.status === 'stopped');
    }

    for (let round = 0; round < CONCURRENT_ROUNDS; round++) {
      await sleep(SETTLE_MS);
      const started = performance.now();
      const ids = (await Promise.all(Array.from({ length: CONCURRENT }, () => keepers.start(config)))).map((s) => s.record.run_id);
      await Promise.all(ids.map((id) => until(keepers, kept.settings.home, id, running)));
      fourAtOnce.push((performance.now() - started) / 1000);
      const records = ids.map((id) => keepers.get(id) as RunRecord);
      await Promise.all(ids.map((id) => keepers.stop(id)));
      await Promise.all(ids.map((id) => until(keepers, kept.settings.home, id, gone(keepers, id))));

      await sleep(SETTLE_MS);
      const logDir = join(dir, `floor-${round}`);
      mkdirSync(logDir);
      const floorStarted = performance.now();
      for (const groups of await Promise.all(records.map((r) => byHand(kept.settings, r, logDir)))) floorGroups.push(...groups);
      floors.push((performance.now() - floorStarted) / 1000);
      // The next round's runs take the same ports.
      await killGroups(floorGroups.splice(0));
    }

    // No server alive: the manager that started the run is closed, the keeper alone stops it.
    const { record } = await starvingRuns.start(config);
    await until(starvingRuns, starving.settings.home, record.run_id, running);
    await starvingRuns.close();
    const ended = await until(starvingRuns, starving.settings.home, record.run_id, gone(starvingRuns, record.run_id), 60);
    const o = ended.observed;
    const lastSign = Math.max(...[ended.running_at, o?.step_completed_at, o?.data_last_at].filter((x): x is string => x !== undefined).map(Date.parse));
    const limit = (o?.steps_completed ? 1 : 2) * STALL_SECONDS;
    stall = { latency: (Date.parse(ended.ended_at!) - lastSign) / 1000 - limit, note: `ended ${ended.status}: ${ended.error?.slice(0, 80)}...; limit ${limit} s (before the first step 2 x RL_STALL_SECONDS=${STALL_SECONDS}); the stop's grace is 2 s (the environment had exited, trainer and API exit on SIGTERM)` };
  } finally {
    await killGroups(floorGroups);
    await baseline.close();
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return [
    {
      name: `rl_start_training to status running with a keeper per run (median of ${ROUNDS})`,
      value: median(withKeeper),
      unit: 's',
      baseline: { name: 'the same supervision kept in the server process (before the keeper), same rounds', value: median(inProcess), unit: 's' },
      target: '<= 1.05x',
      note: `${(median(withKeeper) / median(inProcess)).toFixed(3)}x; keeper rounds ${withKeeper.map((s) => s.toFixed(2)).join(', ')} s; in-process rounds ${inProcess.map((s) => s.toFixed(2)).join(', ')} s`,
    },
    { name: "a keeper's resident memory while its run trains (VmRSS)", value: memory.rss, unit: 'MB', note: `peak (VmHWM) ${memory.hwm.toFixed(1)} MB` },
    { name: 'stall to stopped with no server alive: after the stall limit, until the run is failed and its processes gone', value: stall.latency, unit: 's', note: stall.note },
    {
      name: `${CONCURRENT} runs asked to start at once, until all ${CONCURRENT} are running (a keeper each)`,
      value: median(fourAtOnce),
      unit: 's',
      baseline: { name: `floor: the same ${CONCURRENT * 3} processes started by hand, ${CONCURRENT} runs at once, each once the one before is ready, same rounds`, value: median(floors), unit: 's' },
      target: '<= 1.1x the floor',
      note: `${(median(fourAtOnce) / median(floors)).toFixed(3)}x the floor (medians of ${CONCURRENT_ROUNDS} rounds, each beside its floor); rounds ${fourAtOnce.map((s, i) => `${s.toFixed(2)} s vs ${floors[i]!.toFixed(2)} s`).join(', ')}`,
    },
  ];
}
