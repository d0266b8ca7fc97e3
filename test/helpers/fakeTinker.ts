/**
 * The fake Tinker service (test/fakes/python/tinker, whose docstring is the state contract) for one
 * test file: a fresh state directory, the files a test writes there (keys, live models, billing
 * rows, faults), what the service recorded (calls), and Python run against it with the fake SDK
 * importable: snippets, the product's python/tinker_api.py, and runs seeded through the SDK itself.
 */
import { execFile } from 'node:child_process';
import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FAKE_PYTHONPATH, pythonOnPath, REPO_ROOT, tempDir } from './tmp.js';

export const TINKER_API_SCRIPT = join(REPO_ROOT, 'python', 'tinker_api.py');

/** One line of billing.jsonl: a BillingUsageEvent in the SDK's wire shape. */
export interface BillingRow {
  bucket_start: string;
  bucket_end: string;
  base_model?: string | null;
  user_id?: string | null;
  user_name?: string | null;
  session_id?: string | null;
  project_id?: string | null;
  event_info:
    | { type: 'training' | 'sampling_sample'; token_count: number }
    | { type: 'sampling_prefill'; cached: boolean; token_count: number }
    | { type: 'checkpoint'; count: number }
    | { type: 'storage'; gigabyte_hours: number };
}

export type Fault = { status: number; detail?: string; times?: number } | { connection_error: true; times?: number };

export interface Call {
  time: string;
  pid: number;
  method: string;
  args: Record<string, unknown>;
}

export interface PythonResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface SeededRun {
  session_id: string;
  training_run_id: string;
  /** Checkpoint name -> tinker:// path, in the order asked. */
  paths: Record<string, string>;
}

export interface SeedCheckpoint {
  name: string;
  kind: 'state' | 'sampler';
  ttl_seconds?: number | null;
}

export interface FakeTinker {
  /** $FAKE_TINKER_STATE. */
  dir: string;
  /** Environment for a Python process on this service with `key` as TINKER_API_KEY (none: unset). */
  env(key?: string): Record<string, string>;
  addKey(key: string, o?: { billingView?: boolean; userId?: string }): void;
  removeKey(key: string): void;
  setModels(models: string[]): void;
  addBillingRows(rows: BillingRow[]): void;
  setFaults(faults: Record<string, Fault> | null): void;
  setService(settings: {
    retry_window_seconds?: number;
    billing_pause_seconds?: number;
    sample_text?: string;
    /** Replies to prompts asking a sum "x + y": right with a chance rising with the sampled weights' optimizer steps (_server.py). */
    answer_skill?: { untrained?: number; trained?: number; half_life_steps?: number };
    bytes_per_rank?: { sampler?: number; state?: number };
  }): void;
  /** The SDK calls logged so far, optionally only those named `method`. */
  calls(method?: string): Call[];
  /** Runs `code` with the fake SDK importable, `input` on stdin. */
  python(code: string, o?: { key?: string; input?: string; env?: Record<string, string> }): Promise<PythonResult>;
  /** Runs `python/tinker_api.py <command>` with `args` as JSON on stdin. */
  api(command: string, args?: unknown, o?: { key?: string; env?: Record<string, string> }): Promise<PythonResult & { json: any }>;
  /** A training run made through the fake SDK (its own session), with the checkpoints asked for. */
  seedRun(key: string, o: { baseModel: string; rank?: number; checkpoints?: SeedCheckpoint[] }): Promise<SeededRun>;
}

function runPython(args: string[], env: Record<string, string>, input: string): Promise<PythonResult> {
  return new Promise((resolve) => {
    const child = execFile(pythonOnPath(), args, { env, timeout: 120_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout, stderr });
    });
    child.stdin!.end(input);
  });
}

const SEED = `
import json, sys, tinker
spec = json.load(sys.stdin)
client = tinker.ServiceClient().create_lora_training_client(spec["base_model"], rank=spec["rank"])
paths = {}
for c in spec["checkpoints"]:
    save = client.save_state if c["kind"] == "state" else client.save_weights_for_sampler
    paths[c["name"]] = save(c["name"], ttl_seconds=c.get("ttl_seconds")).result().path
print(json.dumps({"session_id": client.model_id.split(":train:")[0], "training_run_id": client.model_id, "paths": paths}))
`;

/** `stateDir`: where to keep the state (the caller removes it); default a temp dir removed after the test file. */
export function makeFakeTinker(stateDir?: string): FakeTinker {
  const dir = stateDir ?? tempDir('rlmcp-tinker-');
  const file = (name: string) => join(dir, name);
  const readJson = (name: string, fallback: any) => {
    try {
      return JSON.parse(readFileSync(file(name), 'utf8'));
    } catch {
      return fallback;
    }
  };
  const env = (key?: string): Record<string, string> => ({
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    PYTHONPATH: FAKE_PYTHONPATH,
    FAKE_TINKER_STATE: dir,
    ...(key === undefined ? {} : { TINKER_API_KEY: key }),
  });
  const fake: FakeTinker = {
    dir,
    env,
    addKey(key, o = {}) {
      const keys = readJson('keys.json', {});
      keys[key] = { billing_view: o.billingView === true, ...(o.userId ? { user_id: o.userId } : {}) };
      writeFileSync(file('keys.json'), JSON.stringify(keys));
    },
    removeKey(key) {
      const keys = readJson('keys.json', {});
      delete keys[key];
      writeFileSync(file('keys.json'), JSON.stringify(keys));
    },
    setModels: (models) => writeFileSync(file('models.json'), JSON.stringify(models)),
    addBillingRows: (rows) => appendFileSync(file('billing.jsonl'), rows.map((r) => `${JSON.stringify(r)}\n`).join('')),
    setFaults(faults) {
      rmSync(file('fault_hits.jsonl'), { force: true });
      if (faults === null) rmSync(file('faults.json'), { force: true });
      else writeFileSync(file('faults.json'), JSON.stringify(faults));
    },
    setService: (settings) => writeFileSync(file('service.json'), JSON.stringify(settings)),
    calls(method) {
      let text = '';
      try {
        text = readFileSync(file('calls.jsonl'), 'utf8');
      } catch {
        return [];
      }
      const all = text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Call);
      return method === undefined ? all : all.filter((c) => c.method === method);
    },
    python: (code, o = {}) => runPython(['-c', code], { ...env(o.key), ...o.env }, o.input ?? ''),
    async api(command, args = {}, o = {}) {
      const result = await runPython([TINKER_API_SCRIPT, command], { ...env(o.key), ...o.env }, JSON.stringify(args));
      let json: any;
      try {
        json = JSON.parse(result.stdout);
      } catch {
        json = undefined;
      }
      return { ...result, json };
    },
    async seedRun(key, o) {
      const spec = { base_model: o.baseModel, rank: o.rank ?? 32, checkpoints: o.checkpoints ?? [] };
      const result = await fake.python(SEED, { key, input: JSON.stringify(spec) });
      if (result.code !== 0) throw new Error(`seeding a fake Tinker run failed: ${result.stderr}`);
      return JSON.parse(result.stdout) as SeededRun;
    },
  };
  return fake;
}

/** The UTC hour `hoursAgo` hours before the current one, as [bucket_start, bucket_end]. */
export function hourBucket(hoursAgo: number, now = new Date()): [string, string] {
  const start = new Date(now);
  start.setUTCMinutes(0, 0, 0);
  start.setUTCHours(start.getUTCHours() - hoursAgo);
  const end = new Date(start.getTime() + 3600_000);
  const iso = (d: Date) => d.toISOString().replace('.000Z', 'Z');
  return [iso(start), iso(end)];
}
