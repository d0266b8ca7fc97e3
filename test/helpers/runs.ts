/**
 * Shared set-up of the training-run tests: a fake tinker-atropos install, a server over it on
 * free ports, waiting on a run's record, and finding (and killing) every process a test started,
 * so no test leaves anything running even when it fails.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, type TestContext } from 'node:test';
import { stringify } from 'yaml';
import type { ClientCapabilities } from '@modelcontextprotocol/client';
import type { RunProcess } from '../../src/core/files/home.js';
import type { ProcessRecord, RunRecord } from '../../src/runtime/runs/seams/record.js';
import { isActive, isDamaged } from '../../src/runtime/runs/seams/record.js';
import { connectInMemory, type InMemoryHarness } from './client.js';
import { makeFakeInstall, type FakeInstall } from './fakeInstall.js';
import { makeFakeTinker, type FakeTinker } from './fakeTinker.js';
import { freePort } from './tmp.js';

/** Long and random: finding it anywhere is no accident. `tml-`: the Tinker SDK refuses any other prefix. */
export const TINKER_KEY = `tml-test-${randomBytes(20).toString('hex')}`;
export const WANDB_KEY = `wandb-test-${randomBytes(20).toString('hex')}`;

/**
 * Run homes are removed when the test file ends, not when a test ends: hooks run in the order
 * they were registered, and a home must outlive every server (and supervisor) that writes to it.
 */
const homes: string[] = [];
after(() => {
  for (const dir of homes) rmSync(dir, { recursive: true, force: true });
});

let sharedInstall: Promise<FakeInstall> | undefined;

/**
 * The fake install of this test file's servers that bring none of their own: built once per file
 * (not a virtualenv for each of the suite's hundred servers), removed with the run homes. Its tests
 * run one after another; each leaves it as it found it (runServer clears the switches and kills
 * what ran under it).
 */
function fileInstall(): Promise<FakeInstall> {
  if (sharedInstall === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'rlmcp-install-'));
    homes.push(dir);
    sharedInstall = makeFakeInstall({ dir });
  }
  return sharedInstall;
}

/** A fresh RL_HOME (with room beside it for a settings file). */
export function newHome(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rlmcp-runs-'));
  homes.push(dir);
  return join(dir, 'rl_training');
}

export interface RunServer extends InMemoryHarness {
  home: string;
  install: FakeInstall;
  /** The fake Tinker service the server, its helper and its trainers talk to. */
  tinker: FakeTinker;
  /** The environment the server was started with (to start another one like it). */
  env: Record<string, string>;
}

export interface RunServerOptions {
  install?: FakeInstall;
  /** RL_HOME; a fresh one by default. */
  home?: string;
  /** Extra settings (win over the defaults; undefined removes one). */
  env?: Record<string, string | undefined>;
  /** Locked env values beyond the test defaults (total_steps 3, use_wandb false). */
  lockedEnv?: Record<string, unknown>;
  /** Select the bundled gsm8k environment (default true). */
  select?: boolean;
  /** More keys of the RL_MCP_CONFIG file (e.g. `prices`). */
  config?: Record<string, unknown>;
  /** What the client declares at `initialize` (e.g. APPS_CLIENT_CAPABILITIES). */
  capabilities?: ClientCapabilities;
  /** The fake Tinker service; by default a new one knowing TINKER_KEY and serving Qwen/Qwen3-8B. */
  tinker?: FakeTinker;
}

/** A fake Tinker service that knows TINKER_KEY (without the billing role) and serves the locked model. */
export function runsTinker(): FakeTinker {
  // Removed with the run homes, after every server and trainer that talks to it.
  const dir = mkdtempSync(join(tmpdir(), 'rlmcp-tinker-'));
  homes.push(dir);
  const tinker = makeFakeTinker(dir);
  tinker.addKey(TINKER_KEY);
  tinker.setModels(['Qwen/Qwen3-8B']);
  return tinker;
}

/** The settings of a run-test server; exported for servers started as separate processes. */
export async function runServerEnv(install: FakeInstall, home: string, opts: RunServerOptions = {}): Promise<Record<string, string>> {
  const tinker = opts.tinker ?? runsTinker();
  const configFile = join(mkdtempSync(join(dirname(home), 'cfg-')), 'rl.yaml');
  writeFileSync(configFile, stringify({ locked: { env: { total_steps: 3, use_wandb: false, ...opts.lockedEnv } }, ...opts.config }));
  const env: Record<string, string | undefined> = {
    TINKER_ATROPOS_ROOT: install.root,
    RL_PYTHON: install.python,
    RL_HOME: home,
    RL_API_PORT: String(await freePort()),
    RL_INFERENCE_PORT: String(await freePort()),
    RL_MCP_CONFIG: configFile,
    RL_STATUS_MIN_INTERVAL_SECONDS: '0',
    RL_STOP_GRACE_SECONDS: '5',
    TINKER_API_KEY: TINKER_KEY,
    // The SDK's own variable, passed on to the trainer and the Tinker helper: the fake service's state directory.
    TINKER_BASE_URL: `file://${tinker.dir}`,
    ...opts.env,
  };
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

/**
 * A server (in-memory transport) over a fake install (by default the file's, fileInstall). When
 * the test ends, the server closes and every process started under the install or RL_HOME is killed.
 */
export async function runServer(t: TestContext, opts: RunServerOptions = {}): Promise<RunServer> {
  const install = opts.install ?? (await fileInstall());
  const home = opts.home ?? newHome();
  const tinker = opts.tinker ?? runsTinker();
  const env = await runServerEnv(install, home, { ...opts, tinker });
  const h = await connectInMemory(env, undefined, opts.capabilities);
  t.after(async () => {
    await h.close();
    await killLeftovers([install.root, home]);
    // The file's install serves the next test as a fresh one would: with no switch of this one's.
    if (opts.install === undefined) for (const clear of [install.trainerControl, install.envControl, install.cookbookControl]) clear(null);
  });
  if (opts.select !== false) {
    const selected = await h.call('rl_select_environment', { name: 'gsm8k' });
    assert.equal(selected.isError, false, JSON.stringify(selected.json));
  }
  return { ...h, home, install, tinker, env };
}

/** Polls `probe` until it gives a value; a timeout names `what`, and what `observed` says then. */
export async function waitUntil<T>(what: string, probe: () => T | undefined | false, seconds = 60, observed?: () => string): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) assert.fail(`timed out after ${seconds} s waiting until ${what}${observed ? `; ${observed()}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A record typed with every process an Atropos run has; a test of a run of another framework reads only the processes it has. */
export type FullRecord = RunRecord & { processes: Record<RunProcess, ProcessRecord>; logs: Record<RunProcess, string> };

/** The run's record as the registry holds it (no rate limit involved). */
export function record(h: InMemoryHarness, runId: string): FullRecord {
  const entry = h.runtime.runs.get(runId);
  assert.ok(!isDamaged(entry), `run ${runId} is damaged: ${JSON.stringify(entry)}`);
  return entry as FullRecord;
}

/**
 * Waits until the run's record satisfies `pred`; a record that says the run ended is waited on
 * until its keeper is gone too (it writes the final record, then exits), so a test that then looks
 * for leftover processes finds none of ours.
 */
export function waitForRun(h: InMemoryHarness, runId: string, what: string, pred: (r: FullRecord) => boolean, seconds = 60): Promise<FullRecord> {
  return waitUntil(`run ${runId} ${what}`, () => {
    const r = record(h, runId);
    return pred(r) && (isActive(r.status) || h.runtime.runs.keeperOf(runId) === undefined) ? r : undefined;
  }, seconds);
}

export async function startRun(h: InMemoryHarness): Promise<string> {
  const answer = await h.call('rl_start_training');
  assert.equal(answer.isError, false, JSON.stringify(answer.json));
  return answer.json.run_id as string;
}

interface ProcInfo {
  pid: number;
  state: string;
  ppid: number;
  pgrp: number;
}

export function procInfo(pid: number): ProcInfo | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { pid, state: fields[0]!, ppid: Number(fields[1]), pgrp: Number(fields[2]) };
  } catch {
    return undefined;
  }
}

export function isAlive(pid: number): boolean {
  const info = procInfo(pid);
  return info !== undefined && info.state !== 'Z';
}

export function argvOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

export function environOf(pid: number): string {
  return readFileSync(`/proc/${pid}/environ`, 'utf8');
}

/** Live processes (not this one) whose argv names one of `paths` or whose cwd lies under one. */
export function leftovers(paths: string[]): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const pid = Number(name);
    let cwd = '';
    try {
      cwd = readlinkSync(`/proc/${pid}/cwd`).replace(/ \(deleted\)$/, '');
    } catch {
      // Gone, or not ours to read.
    }
    const argv = argvOf(pid);
    if (paths.some((p) => argv.includes(p) || cwd === p || cwd.startsWith(`${p}/`)) && isAlive(pid)) found.push(pid);
  }
  return found;
}

/** SIGKILLs every leftover process (with its group) and waits until they are gone. */
export async function killLeftovers(paths: string[]): Promise<void> {
  await waitUntil('leftover processes are gone', () => {
    const pids = leftovers(paths);
    for (const pid of pids) {
      for (const target of [-pid, pid]) {
        try {
          process.kill(target, 'SIGKILL');
        } catch {
          // Not a group leader, or already gone.
        }
      }
    }
    return pids.length === 0;
  }, 20);
}

/** Every file under `dir`, recursively. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? filesUnder(path) : e.isFile() ? [path] : [];
  });
}

/**
 * Holds `port` on 127.0.0.1 (so the trainer cannot serve there) and answers every request with
 * a 200 whose body never ends: a byte at a time, never idle long enough for a socket timeout.
 */
export async function occupyWithTrickle(t: TestContext, port: number): Promise<void> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000000\r\n\r\n');
    const timer = setInterval(() => socket.write(' '), 300);
    socket.on('close', () => {
      clearInterval(timer);
      sockets.delete(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
}
