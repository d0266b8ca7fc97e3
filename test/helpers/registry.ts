/**
 * Run directories written the way a server writes them (a record from `initialRecord`, then the
 * changes a run goes through), without starting anything: listings, the run index and the
 * benchmark need many runs, not running ones.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { stringify } from 'yaml';
import { runIndexPath } from '../../src/core/files/home.js';
import { initialRecord, type RunRecord } from '../../src/runtime/runs/seams/record.js';
import type { FullRecord } from './runs.js';
import { RunIndex } from '../../src/runtime/runs/registry/runIndex.js';
import { RunStore } from '../../src/runtime/runs/registry/store.js';

export interface RunSpec {
  runId: string;
  createdMs: number;
  status?: RunRecord['status'];
  environment?: string;
  /** Processes the record calls running (pid; start time unknown). */
  runningPids?: number[];
}

/** The record of a run as it would stand in `spec.status` (default `completed`). */
export function runRecord(home: string, spec: RunSpec): FullRecord {
  const dir = join(home, 'runs', spec.runId);
  const env = spec.environment ?? 'gsm8k';
  const names = { wandb_project: 'p', wandb_run_name: `${env}-${spec.runId}`, trainer_wandb_run_name: `${env}-${spec.runId}-trainer-x`, wandb_run_suffix: 'x', wandb_group: spec.runId, wandb_name: env, use_wandb: false };
  const logs = { api: join(dir, 'api.log'), trainer: join(dir, 'trainer.log'), env: join(dir, 'env.log') };
  const record = initialRecord({
    runId: spec.runId,
    framework: 'atropos',
    placement: 'local',
    selection: { environment: { name: env, file_path: `/envs/${env}.py` } },
    names,
    configPath: join(dir, 'config.yaml'),
    logs,
    ports: { api: 8000, inference: 8001 },
    commands: { api: ['run-api'], trainer: ['python', 'launch_training.py'], env: ['python', `${env}.py`, 'serve'] },
  });
  const at = new Date(spec.createdMs).toISOString();
  Object.assign(record, { created_at: at, started_at: at, phase_started_at: at, status: spec.status ?? 'completed' });
  if (record.status !== 'starting') record.running_at = at;
  if (['completed', 'failed', 'stopped'].includes(record.status)) {
    Object.assign(record, { phase: 'done', ended_at: new Date(spec.createdMs + 60_000).toISOString() });
    if (record.status === 'failed') Object.assign(record, { error: 'trainer failed: simulated', error_process: 'trainer' });
    for (const p of Object.values(record.processes)) p.state = 'exited';
  } else if (record.status === 'running') record.phase = 'training';
  (spec.runningPids ?? []).forEach((pid, i) => Object.assign(Object.values(record.processes)[i]!, { state: 'running', pid, pgid: pid }));
  return record as FullRecord;
}

export function writeRunDir(home: string, spec: RunSpec): FullRecord {
  const record = runRecord(home, spec);
  const dir = join(home, 'runs', spec.runId);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'run.json'), JSON.stringify(record, null, 1));
  return record;
}

/** A cookbook run's record as a server creates it: one process, its files inside the run's directory. */
function cookbookRecord(home: string, runId: string, environment: { name: string; file_path: string }, command: string[]): RunRecord {
  const dir = join(home, 'runs', runId);
  const name = `${environment.name}-${runId}`;
  return initialRecord({
    runId,
    framework: 'cookbook',
    placement: 'local',
    selection: { environment },
    names: { wandb_project: 'p', wandb_run_name: name, trainer_wandb_run_name: name, wandb_run_suffix: '', wandb_group: runId, wandb_name: name, use_wandb: false },
    configPath: join(dir, 'config.yaml'),
    logs: { trainer: join(dir, 'trainer.log') },
    ports: { api: 0, inference: 0 },
    commands: { trainer: command },
    cwds: { trainer: dir },
  });
}

/**
 * A cookbook run that ended failed after saving a resumable state at `fromStep`, its trainer
 * `command` (what rl_resume_training launches again), its checkpoints.jsonl as the recipe writes it.
 */
export function writeFailedCookbookRun(home: string, runId: string, command: string[], fromStep = 2): RunRecord {
  const dir = join(home, 'runs', runId);
  const record = cookbookRecord(home, runId, { name: 'math_rl', file_path: '/cookbook/recipes/math_rl/train.py' }, command);
  const at = new Date().toISOString();
  Object.assign(record, { status: 'failed', phase: 'done', running_at: at, ended_at: at, error: 'The recipe ended without its final checkpoint (exit code 1): RuntimeError: simulated' });
  record.processes.trainer!.state = 'exited';
  mkdirSync(join(dir, 'cookbook'), { recursive: true });
  const state = `tinker://run-${runId}:train:0/weights/${String(fromStep).padStart(6, '0')}`;
  writeFileSync(join(dir, 'cookbook', 'checkpoints.jsonl'), `${JSON.stringify({ name: String(fromStep).padStart(6, '0'), batch: fromStep, state_path: state, sampler_path: state.replace('/weights/', '/sampler_weights/') })}\n`);
  writeFileSync(join(dir, 'trainer.log'), '');
  writeFileSync(join(dir, 'run.json'), JSON.stringify(record, null, 1));
  return record;
}

/**
 * A verifiers environment's cookbook run that completed `steps` steps under a tinker-cookbook whose
 * verifiers_rl trains (none of v0.2.0 to v0.5.5 does, so the fake cannot train one): its config.yaml
 * as the server writes it, and the metrics.jsonl and checkpoints.jsonl the recipe writes (a sampler
 * checkpoint after every step, `final` last), with rewards rising from 0.2.
 */
export function writeVerifiersRun(home: string, runId: string, o: { vfEnvId: string; file: string; env: Record<string, unknown>; steps: number }): RunRecord {
  const dir = join(home, 'runs', runId);
  const record = cookbookRecord(home, runId, { name: o.vfEnvId, file_path: o.file }, ['python', '-m', 'tinker_cookbook.recipes.verifiers_rl.train']);
  const at = new Date(Date.now() - 60_000).toISOString();
  Object.assign(record, { status: 'completed', phase: 'done', running_at: at, ended_at: new Date().toISOString() });
  record.processes.trainer!.state = 'exited';
  const logDir = join(dir, 'cookbook');
  mkdirSync(logDir, { recursive: true });
  writeFileSync(join(dir, 'config.yaml'), stringify({ cookbook: { recipe: 'verifiers_rl', vf_env_id: o.vfEnvId, log_path: logDir }, env: { ...o.env, vf_env_id: o.vfEnvId }, tinker: { wandb_run_name: `${o.vfEnvId}-${runId}` } }));
  const steps = Array.from({ length: o.steps }, (_, i) => i);
  writeFileSync(join(logDir, 'metrics.jsonl'), steps.map((i) => `${JSON.stringify({ step: i, 'progress/batch': i, 'env/all/reward/total': 0.2 + 0.1 * i, 'env/all/correct_answer': 0.2 + 0.1 * i, 'env/all/total_ob_tokens': 400, 'env/all/total_ac_tokens': 200, 'optim/entropy': 0.5 })}\n`).join(''));
  const checkpoint = (name: string, batch: number) => ({ name, batch, state_path: `tinker://run-${runId}:train:0/weights/${name}`, sampler_path: `tinker://run-${runId}:train:0/sampler_weights/${name}` });
  const saved = [...steps.map((i) => checkpoint(String(i + 1).padStart(6, '0'), i + 1)), checkpoint('final', o.steps)];
  writeFileSync(join(logDir, 'checkpoints.jsonl'), saved.map((c) => `${JSON.stringify(c)}\n`).join(''));
  writeFileSync(join(logDir, 'logs.log'), `tinker_cookbook.rl.train:1 [INFO] Will train on ${o.steps} batches\n`);
  writeFileSync(join(dir, 'trainer.log'), '');
  writeFileSync(join(dir, 'run.json'), JSON.stringify(record, null, 1));
  return record;
}

/** `count` ended runs, one a minute from `fromMs` on, ids 00000000, 00000001, ... */
export function writeRunDirs(home: string, count: number, fromMs = Date.parse('2026-01-01T00:00:00Z')): string[] {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const runId = i.toString(16).padStart(8, '0');
    const status = (['completed', 'failed', 'stopped'] as const)[i % 3];
    writeRunDir(home, { runId, createdMs: fromMs + i * 60_000, status, environment: i % 2 === 0 ? 'gsm8k' : 'letter_counting' });
    ids.push(runId);
  }
  return ids;
}

/** A run index over `home`, as a server process makes it (a new one = a restarted server). */
export function runIndexOver(home: string): RunIndex {
  return new RunIndex(new RunStore(home), runIndexPath(home), { stallSeconds: 600 }, pino({ level: 'silent' }));
}
