/**
 * Readiness: python/check_environment.py run on one environment with its config (no model, key or
 * endpoint), optionally an inference test's models read back (the probe), judged (verdicts/verdict.ts) and
 * kept in RL_HOME/readiness/, one file per environment holding the last verdict per config. What
 * rl_get_current_config and rl_start_training show, and what RL_REQUIRE_READY=1 holds a start to.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod';
import { zString, zNumber, zBoolean } from '../../core/schemaLeaves.js';
import { writeAtomically } from '../../core/files/atomicFile.js';
import { INFERENCE_TEST_RESULT, inferenceTestDir, readinessRoot } from '../../core/files/home.js';
import { PYTHON_HELPERS_DIR } from '../../core/files/paths.js';
import { UserError } from '../../core/errors.js';
import type { JsonValue } from '../../core/json.js';
import type { CoreServices } from '../../core/services.js';
import { FileLock } from '../../core/os/fileLock.js';
import { runPythonHelper } from '../config/pythonHelper.js';
import { stepTokens, tokensUsd, type Prefills, type RunShape } from '../cost/estimate.js';
import { savePromptLengths } from '../cost/lengthStore.js';
import { frameworkOfEnvironment } from '../environments/report.js';
import { readGroupScores } from '../inference/scoring.js';
import type { TestOutput } from '../inference/testReport.js';
import type { RunSelection } from '../runs/seams/framework.js';
import { combine, judgeOffline, type Judgement, type OfflineObservations, type Reason, type Score, type Verdict } from './verdicts/verdict.js';
import { judgeProbe, rawScores, signalStats, type ProbeCost, type SignalStats } from './verdicts/signal.js';

export const CHECK_SCRIPT = join(PYTHON_HELPERS_DIR, 'check_environment.py');
const HELPER_TIMEOUT_SECONDS = 60;
/** Names a run gets, not what it trains: a verdict holds whatever they are. */
const NAMING_FIELDS = new Set(['wandb_name', 'wandb_project', 'wandb_group', 'log_path']);
const KEPT_CONFIGS = 20;
const SAVE_LOCK_TIMEOUT_MS = 10_000;

const SCORE = z.union([zNumber, z.null(), zString]);
const STEP = z.object({ ok: zBoolean, error: zString.optional() });
const OBSERVATIONS = z.object({
  framework: zString,
  steps: z.object({ import: STEP.optional(), config: STEP.optional(), data: STEP.optional(), prompts: STEP.optional() }),
  items_count: zNumber.optional(),
  items_note: zString.optional(),
  sample: zString.nullish(),
  max_token_length: zNumber.optional(),
  group_size: zNumber.nullish(),
  prompt_tokens: z.array(zNumber),
  prompt_tokens_counted_by: zString.optional(),
  items: z.array(
    z.object({
      index: zNumber,
      reference: z.object({ key: zString, text: zString }).optional(),
      probes: z.array(
        z.object({
          kind: z.enum(['empty', 'garbage', 'reference', 'reference_again']),
          completion: zString,
          scores: z.array(SCORE).nullish().transform((s) => s ?? undefined),
          dropped: zBoolean.optional(),
          error: zString.optional(),
          mixed_with_garbage: zBoolean.optional(),
        }),
      ),
    }),
  ),
  unchecked: z.array(zString),
  stand_in: z.object({ url: zString, requests: zNumber }).optional(),
  error: zString.optional(),
});

export interface ProbeSummary {
  test_id: string;
  models: (SignalStats & { cost?: ProbeCost })[];
}

/** One verdict as kept and shown. */
export interface ReadinessRecord {
  environment: string;
  framework: string;
  file_path: string;
  config_key: string;
  /** The config judged: the run's values (the operator's locked ones included), naming fields left out. */
  config: Record<string, JsonValue>;
  verdict: Verdict;
  reasons: Reason[];
  evidence: string[];
  checked_at: string;
  offline: {
    items_count?: number;
    items_note?: string;
    sample?: string;
    prompt_tokens?: { count: number; mean: number; max: number; counted_by?: string; max_token_length?: number };
    unchecked: string[];
    stand_in?: { url: string; requests: number };
    duration_seconds: number;
  };
  probe?: ProbeSummary;
}

/** What rl_get_current_config and rl_start_training show of the last verdict. */
export interface ReadinessView {
  verdict: Verdict | null;
  checked_at?: string;
  reasons?: string[];
  note: string;
}

type Subject = Pick<RunSelection, 'environment' | 'values'>;

const sha = (text: string, n: number): string => createHash('sha256').update(text).digest('hex').slice(0, n);

/** The values a verdict is kept under: what the run trains, without the names it is given. */
export function judgedConfig(values: Record<string, JsonValue>): Record<string, JsonValue> {
  return Object.fromEntries(Object.entries(values).filter(([k]) => !NAMING_FIELDS.has(k)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export const configKey = (values: Record<string, JsonValue>): string => sha(JSON.stringify(judgedConfig(values)), 12);

const environmentKey = (env: Subject['environment']): string => `${frameworkOfEnvironment(env)}-${env.name.replace(/[^A-Za-z0-9._-]+/g, '_')}-${sha(env.file_path, 8)}`;

const round4 = (x: number): number => Math.round(x * 10_000) / 10_000;

export interface ReadinessDeps {
  /** The shape of a run of `selection` (model, steps, batch): what a probe's dollars are for. */
  runShape(selection: RunSelection): RunShape & Prefills;
  /** What the operator fixes for runs of this environment's framework (max_token_length, the model, ...): part of the config judged. */
  lockedValues(environment: RunSelection['environment']): Record<string, JsonValue>;
}

export class Readiness {
  constructor(
    private readonly core: CoreServices,
    private readonly deps: ReadinessDeps,
  ) {}

  /** The values a run of `selection` gets: its own, then the operator's locked ones. */
  private runValues(selection: Subject): Record<string, JsonValue> {
    return { ...selection.values, ...this.deps.lockedValues(selection.environment) };
  }

  /** Runs the offline checks on `selection` (and reads test `testId` when given), keeps and returns the verdict. */
  async check(selection: RunSelection, opts: { items: number; testId?: string; signal?: AbortSignal }): Promise<ReadinessRecord> {
    const probe = opts.testId !== undefined ? await this.probe(selection, opts.testId) : undefined;
    const started = Date.now();
    const observed = await this.runHelper(selection, opts.items, opts.signal);
    const offline = judgeOffline(observed);
    const judged: Judgement = combine(offline, probe?.judgement);
    const lengths = observed.prompt_tokens;
    const now = new Date().toISOString();
    const env = selection.environment;
    const promptTokens =
      lengths.length > 0
        ? { count: lengths.length, mean: Math.round((10 * lengths.reduce((a, b) => a + b, 0)) / lengths.length) / 10, max: Math.max(...lengths), ...(observed.prompt_tokens_counted_by ? { counted_by: observed.prompt_tokens_counted_by } : {}), ...(observed.max_token_length !== undefined ? { max_token_length: observed.max_token_length } : {}) }
        : undefined;
    const record: ReadinessRecord = {
      environment: env.name,
      framework: frameworkOfEnvironment(env),
      file_path: env.file_path,
      config_key: configKey(this.runValues(selection)),
      config: judgedConfig(this.runValues(selection)),
      verdict: judged.verdict,
      reasons: judged.reasons,
      evidence: judged.evidence,
      checked_at: now,
      offline: {
        ...(observed.items_count !== undefined ? { items_count: observed.items_count } : {}),
        ...(observed.items_note !== undefined ? { items_note: observed.items_note } : {}),
        ...(observed.sample ? { sample: observed.sample } : {}),
        ...(promptTokens ? { prompt_tokens: promptTokens } : {}),
        unchecked: observed.unchecked,
        ...(observed.stand_in ? { stand_in: observed.stand_in } : {}),
        duration_seconds: Math.round((Date.now() - started) / 100) / 10,
      },
      ...(probe ? { probe: probe.summary } : {}),
    };
    this.save(record);
    if (promptTokens) {
      try {
        savePromptLengths(this.core.settings.home, env.name, { prompts: { mean: promptTokens.mean, max: promptTokens.max, count: promptTokens.count }, checked_at: now, counted_by: promptTokens.counted_by ?? 'the offline check' });
      } catch (err) {
        this.core.logger.warn({ err }, 'prompt lengths not saved; estimates keep assuming max_token_length');
      }
    }
    return record;
  }

  /** The last verdict for this environment with this config, if any. */
  last(selection: Subject): ReadinessRecord | undefined {
    return this.readFile(selection.environment)?.[configKey(this.runValues(selection))];
  }

  view(selection: Subject): ReadinessView {
    const last = this.last(selection);
    const require = this.core.settings.requireReady ? ' RL_REQUIRE_READY=1: a start needs a verdict other than no_go.' : '';
    if (last === undefined) return { verdict: null, note: `Never checked with this config: run rl_check_environment before starting.${require}` };
    return {
      verdict: last.verdict,
      checked_at: last.checked_at,
      reasons: last.reasons.map((r) => `${r.verdict}: ${r.message}`),
      note: `Last rl_check_environment verdict for this config.${require}`,
    };
  }

  /** RL_REQUIRE_READY=1: refuses a start whose last verdict for its config is no_go, or that has none. */
  requireReady(selection: Subject): void {
    if (!this.core.settings.requireReady) return;
    const last = this.last(selection);
    const name = selection.environment.name;
    if (last === undefined) {
      throw new UserError(`Not started: RL_REQUIRE_READY=1 and ${name} has no readiness verdict for this config. Run rl_check_environment first (with the same environment and config).`, { started: false, readiness: null });
    }
    if (last.verdict === 'no_go') {
      throw new UserError(`Not started: RL_REQUIRE_READY=1 and ${name}'s last readiness verdict for this config (${last.checked_at}) is no_go: ${last.reasons.filter((r) => r.verdict === 'no_go').map((r) => r.message).join('; ')}`, {
        started: false,
        readiness: { verdict: last.verdict, checked_at: last.checked_at, reasons: last.reasons },
      });
    }
  }

  private path(env: Subject['environment']): string {
    return join(readinessRoot(this.core.settings.home), `${environmentKey(env)}.json`);
  }

  private readFile(env: Subject['environment']): Record<string, ReadinessRecord> | undefined {
    try {
      const doc = JSON.parse(readFileSync(this.path(env), 'utf8')) as { verdicts?: Record<string, ReadinessRecord> };
      return typeof doc.verdicts === 'object' && doc.verdicts !== null ? doc.verdicts : undefined;
    } catch {
      return undefined;
    }
  }

  private save(record: ReadinessRecord): void {
    const env = { name: record.environment, file_path: record.file_path, framework: record.framework as RunSelection['environment']['framework'] };
    mkdirSync(readinessRoot(this.core.settings.home), { recursive: true });
    // A read-modify-write: servers sharing RL_HOME checking the same environment keep each other's verdicts.
    const lock = new FileLock(`${this.path(env)}.lock`);
    lock.acquireBlocking(SAVE_LOCK_TIMEOUT_MS);
    try {
      const verdicts = { ...this.readFile(env), [record.config_key]: record };
      const kept = Object.entries(verdicts)
        .sort(([, a], [, b]) => (a.checked_at < b.checked_at ? 1 : -1))
        .slice(0, KEPT_CONFIGS);
      writeAtomically(this.path(env), JSON.stringify({ environment: record.environment, framework: record.framework, file_path: record.file_path, verdicts: Object.fromEntries(kept) }));
    } finally {
      lock.release();
    }
  }

  private async runHelper(selection: RunSelection, items: number, signal?: AbortSignal): Promise<OfflineObservations> {
    const { settings } = this.core;
    const env = selection.environment;
    const framework = env.vf_env_id !== undefined ? 'verifiers' : frameworkOfEnvironment(env);
    const request = { framework, file_path: env.file_path, class_name: 'class_name' in env ? env.class_name : undefined, recipe: env.recipe, vf_env_id: env.vf_env_id, root: settings.root, values: this.runValues(selection), items };
    // No key reaches the check: childEnv passes none, and the model is the helper's own stand-in.
    const child = await runPythonHelper(settings, { args: ['-B', CHECK_SCRIPT], input: JSON.stringify(request), timeoutSeconds: HELPER_TIMEOUT_SECONDS, signal });
    if (child.isCanceled) throw new UserError('The check was cancelled by the client; nothing was kept.');
    if (child.timedOut) return failed(framework, `it did not finish within ${HELPER_TIMEOUT_SECONDS} s (an environment whose setup downloads or waits on something)`);
    const parsed = child.exitCode === 0 ? OBSERVATIONS.safeParse(safeJson(child.stdout)) : undefined;
    if (parsed?.success) return parsed.data as OfflineObservations;
    this.core.logger.warn({ exit_code: child.exitCode, stderr: child.stderr.slice(-4000) }, 'environment check helper failed');
    return failed(framework, `the helper failed (${child.code ?? child.signal ?? `exit code ${child.exitCode}`}): ${child.stderr.trim().split('\n').at(-1) ?? ''}`);
  }

  /** An inference test of this environment, read back: per model its groups' scores as written, and dollars at the run's shape. */
  private async probe(selection: RunSelection, testId: string): Promise<{ summary: ProbeSummary; judgement: Judgement }> {
    const { settings } = this.core;
    let output: TestOutput;
    try {
      output = JSON.parse(await readFile(join(inferenceTestDir(settings.home, testId), INFERENCE_TEST_RESULT), 'utf8')) as TestOutput;
    } catch {
      throw new UserError(`No finished inference test '${testId}' in ${inferenceTestDir(settings.home, testId)}: pass a test_id rl_test_inference answered once it completed.`);
    }
    if (output.status === 'running' || output.models_tested === undefined) throw new UserError(`Inference test '${testId}' has not finished: wait for it with rl_test_inference({"test_id": "${testId}"}) first.`);
    if (output.environment !== selection.environment.name) throw new UserError(`Inference test '${testId}' tested ${output.environment}, not ${selection.environment.name}.`);
    const shape = this.deps.runShape(selection);
    const price = settings.cost.prices[shape.model];
    const models: ProbeSummary['models'] = [];
    const costs: Record<string, ProbeCost> = {};
    for (const report of output.models_tested) {
      const groups: Score[][] = [];
      await readGroupScores(report.output_file, (group) => groups.push(rawScores(group))).catch(() => undefined);
      const stats = signalStats({ model: report.model, groups, ...(report.error !== undefined ? { error: report.error } : {}) });
      const tokens = report.rollout_tokens;
      let cost: ProbeCost | undefined;
      if (tokens !== undefined && price !== undefined) {
        const perStep = tokensUsd(stepTokens(shape, tokens.prompt_tokens.mean, tokens.completion_tokens.mean), price);
        cost = {
          per_rollout_usd: round4(perStep / shape.batch_size),
          per_step_usd: round4(perStep),
          run_usd: round4(perStep * shape.total_steps),
          basis: `${shape.total_steps} steps of ${shape.batch_size} rollouts of ${shape.model}, with mean prompt ${tokens.prompt_tokens.mean} and completion ${tokens.completion_tokens.mean} tokens measured for ${report.model}`,
        };
        costs[report.model] = cost;
      }
      models.push({ ...stats, ...(cost ? { cost } : {}) });
    }
    return { summary: { test_id: testId, models }, judgement: judgeProbe(models, costs) };
  }
}

function failed(framework: string, error: string): OfflineObservations {
  return { framework, steps: {}, prompt_tokens: [], items: [], unchecked: [], error };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
