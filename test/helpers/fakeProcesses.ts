/**
 * Running the fakes' processes directly, as their own tests do (test/fakes.test.ts,
 * test/fakes-upstream.test.ts): start and wait on them, talk HTTP to them, write the run config
 * they read, and queue data in the Atropos API as an environment would. Every process still
 * running when the test file ends is killed.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after } from 'node:test';
import type { FakeInstall, TrainerControl } from './fakeInstall.js';
import { freePort, tempDir } from './tmp.js';
import { RUN_TRAINER_SCRIPT } from '../../src/core/files/paths.js';

export interface Proc {
  child: ChildProcess;
  /** Started in a process group of its own (killed as a group). */
  group: boolean;
  out(): string;
  err(): string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started: Proc[] = [];
after(() => {
  for (const p of started) {
    if (p.child.exitCode !== null || p.child.signalCode !== null) continue;
    try {
      process.kill(p.group ? -p.child.pid! : p.child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

export function start(command: string, args: string[], opts: { cwd: string; env?: Record<string, string>; group?: boolean }): Proc {
  const child = spawn(command, args, {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PYTHONUNBUFFERED: '1', ...opts.env },
    detached: opts.group === true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal }));
    child.on('error', (error) => {
      err += String(error);
      resolve({ code: null, signal: null });
    });
  });
  const proc: Proc = { child, group: opts.group === true, out: () => out, err: () => err, exit };
  started.push(proc);
  return proc;
}

export async function run(command: string, args: string[], opts: { cwd: string; env?: Record<string, string> }) {
  const proc = start(command, args, opts);
  const { code } = await proc.exit;
  return { code, stdout: proc.out(), stderr: proc.err() };
}

export async function waitFor<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, seconds = 30): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** node:http, because the real env sends GET /status-env with a JSON body, which fetch cannot. */
export function http(method: string, url: string, body?: unknown): Promise<{ status: number; text: string; json: any }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(url, { method, headers: data ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } : {} }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, text, json });
      });
    });
    req.on('error', reject);
    req.end(data);
  });
}

export async function startApi(install: FakeInstall): Promise<{ url: string; port: number; proc: Proc }> {
  const port = await freePort();
  const proc = start(install.runApi, ['--host', '127.0.0.1', '--port', String(port)], { cwd: install.root });
  await waitFor('run-api listening', () => proc.err().includes(`Uvicorn running on http://127.0.0.1:${port} (Press CTRL+C to quit)`));
  return { url: `http://127.0.0.1:${port}`, port, proc };
}

/**
 * The trainer's command line as the server runs it: through python/run_trainer.py, which moves the
 * inference server (upstream's hard-coded 8001) to `inferencePort`.
 */
export function trainerArgs(install: FakeInstall, config: string, inferencePort: number): string[] {
  return [RUN_TRAINER_SCRIPT, '--port', String(inferencePort), install.launchTraining, '--config', config];
}

/**
 * The trainer's command line as upstream runs it, uvicorn's access log included (one line per
 * request: what the upstream-behaviour tests count); only its inference server's port is moved,
 * so that several trainers can run at once.
 */
export function upstreamTrainerArgs(install: FakeInstall, config: string, inferencePort: number): string[] {
  const script = [
    'import os, runpy, sys, uvicorn',
    'serve = uvicorn.run',
    `uvicorn.run = lambda app, *args, **kwargs: serve(app, **{**kwargs, "host": "127.0.0.1", "port": ${inferencePort}})`,
    `sys.argv = [${JSON.stringify(install.launchTraining)}, "--config", ${JSON.stringify(config)}]`,
    'sys.path[0] = os.path.dirname(sys.argv[0])',
    'runpy.run_path(sys.argv[0], run_name="__main__")',
  ].join('\n');
  return ['-c', script];
}

/** A run config as the server writes it: env, one openai server, tinker, slurm, testing. */
export function runConfigYaml(o: {
  api: string;
  inferencePort: number;
  useWandb: boolean;
  totalSteps?: number;
  groupSize?: number;
  batchSize?: number;
  /** How many rollouts the environment runs at once (BaseEnvConfig.max_num_workers). */
  maxNumWorkers?: number;
  openai?: Record<string, unknown>;
}): string {
  const openai = { model_name: 'Qwen/Qwen3-8B', base_url: `http://127.0.0.1:${o.inferencePort}/v1`, api_key: 'x', server_type: 'sglang', weight: 1.0, ...o.openai };
  return [
    'env:',
    `  group_size: ${o.groupSize ?? 2}`,
    `  batch_size: ${o.batchSize ?? 4}`,
    `  total_steps: ${o.totalSteps ?? 3}`,
    ...(o.maxNumWorkers === undefined ? [] : [`  max_num_workers: ${o.maxNumWorkers}`]),
    '  tokenizer_name: Qwen/Qwen3-8B',
    `  use_wandb: ${o.useWandb}`,
    '  wandb_name: gsm8k',
    `  rollout_server_url: ${o.api}`,
    'openai:',
    ...Object.entries(openai).map(([k, v], i) => `${i === 0 ? '  - ' : '    '}${k}: ${JSON.stringify(v)}`),
    'tinker:',
    '  wandb_project: fakes-project',
    '  wandb_group: abcd1234',
    '  wandb_run_name: gsm8k-abcd1234',
    '  wandb_run_suffix: fix0',
    'slurm: false',
    'testing: false',
    '',
  ].join('\n');
}

/** A directory of its own for one trainer (its fake_trainer.json is per cwd). */
export function trainerDir(control?: TrainerControl): string {
  const dir = tempDir('rlmcp-trainer-');
  if (control) writeFileSync(join(dir, 'fake_trainer.json'), JSON.stringify(control));
  return dir;
}

/** The value rich-printed for `name` in the env / server config dump on stdout. */
export function printed(stdout: string, name: string): string | undefined {
  return new RegExp(`^\\s+${name}=(.*?),?$`, 'm').exec(stdout)?.[1];
}

/** Asserts `patterns` match lines of `text` in this order. */
export function assertInOrder(text: string, patterns: (string | RegExp)[]): void {
  const lines = text.split('\n');
  let at = 0;
  for (const pattern of patterns) {
    const found = lines.findIndex((line, i) => i >= at && (typeof pattern === 'string' ? line === pattern : pattern.test(line)));
    assert.ok(found >= 0, `expected ${String(pattern)} after line ${at} in:\n${text}`);
    at = found + 1;
  }
}

/**
 * Queues `batches` batches in the Atropos API as an environment would: groups of `groupSize`
 * sequences with varied scores and with inference logprobs, as managed_server makes them.
 */
export async function queueBatches(api: string, batches: number, o: { batchSize?: number; groupSize?: number } = {}): Promise<void> {
  const groupSize = o.groupSize ?? 2;
  const group = {
    tokens: Array.from({ length: groupSize }, () => [1, 2, 3]),
    masks: Array.from({ length: groupSize }, () => [-100, 2, 3]),
    inference_logprobs: Array.from({ length: groupSize }, () => [1.0, -0.5, -0.25]),
    scores: Array.from({ length: groupSize }, (_, i) => i % 2),
  };
  for (let i = 0; i < (batches * (o.batchSize ?? 4)) / groupSize; i++) {
    assert.equal((await http('POST', `${api}/scored_data`, group)).status, 200);
  }
}
