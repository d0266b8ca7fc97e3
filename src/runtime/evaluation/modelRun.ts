/**
 * One model of an evaluation: its process (evalCommand.ts), why it failed when it did (the same
 * classification as inference tests: 401, 404, no learning signal...), and what it produced:
 * per-item scores and a rollouts file under the evaluation's directory (redacted).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JsonValue } from '../../core/json.js';
import { WIRE_SUFFIX } from '../../core/files/home.js';
import { tailLines } from '../../core/files/logTail.js';
import type { Logger } from '../../core/logger.js';
import type { SecretRedactor } from '../../core/redact.js';
import { isMissing } from '../../core/files/safePath.js';
import type { Settings } from '../../core/settings.js';
import { processEnv, type KeyConfig } from '../inference/command.js';
import { classifyCrash, classifyDroppedGroups, type FailureKind } from '../inference/failures.js';
import { ModelProcess, type ModelProcessOutcome } from '../inference/modelProcess.js';
import { evalCommand, type EvalMethod } from './evalCommand.js';
import { readExchanges } from '../inference/wire/exchanges.js';
import { recordWire, type WireRecording } from '../inference/wire/recorder.js';
import { itemScores, readRolloutGroups, type ItemScore, type Rollout } from './rollouts.js';

const CAUSE_SEARCH_LINES = 300;
/** samples.jsonl and metrics.json are small; past this they are not copied. */
const MAX_EVAL_FILE_BYTES = 64 * 1024 * 1024;

export type EvalFailureKind = FailureKind | 'timed_out' | 'cancelled' | 'no_held_out_eval' | 'no_output';

export interface ModelSpec {
  label: string;
  model: string;
  role: 'baseline' | 'checkpoint';
  step?: number;
  /** A file-name stem unique in the evaluation. */
  stem: string;
}

export interface ModelRunContext {
  settings: Settings;
  redactor: SecretRedactor;
  logger: Logger;
  keyConfig: KeyConfig;
  dir: string;
  envFile: string;
  envConfig: Record<string, JsonValue>;
  baseUrl: string;
  serverEntries: 1 | 2;
  numItems: number;
  groupSize: number;
  timeoutSeconds: number;
}

export interface ModelRunResult {
  items?: ItemScore[];
  /** Files relative to the evaluation directory. */
  log_file: string;
  rollouts_file?: string;
  /** The environment's own metrics (metrics.json `results.all`), in `evaluate` mode. */
  env_metrics?: Record<string, JsonValue>;
  error?: string;
  error_kind?: EvalFailureKind;
  duration_seconds: number;
}

const fail = (base: Pick<ModelRunResult, 'log_file' | 'duration_seconds'>, kind: EvalFailureKind, error: string): ModelRunResult => ({ ...base, error_kind: kind, error });

async function readSmall(path: string): Promise<string | undefined> {
  try {
    const text = await readFile(path, 'utf8');
    return text.length > MAX_EVAL_FILE_BYTES ? undefined : text;
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
}

/** Metrics an environment's evaluate() may log without bound: the answer keeps the first scalar ones (the whole file is kept). */
const MAX_SHOWN_METRICS = 20;
export function shownMetrics(all: Record<string, JsonValue> | undefined): Record<string, JsonValue> | undefined {
  if (all === undefined || all === null || typeof all !== 'object' || Array.isArray(all)) return undefined;
  const scalar = Object.entries(all).filter(([k, v]) => k.length <= 100 && (typeof v === 'number' || typeof v === 'boolean' || (typeof v === 'string' && v.length <= 100)));
  return Object.fromEntries(scalar.slice(0, MAX_SHOWN_METRICS));
}

export class EvalModelRun {
  process?: ModelProcess;
  private stopped?: string;

  constructor(
    private readonly ctx: ModelRunContext,
    readonly spec: ModelSpec,
    readonly method: EvalMethod,
  ) {}

  stop(reason: string, graceMs?: number): void {
    this.stopped ??= reason;
    this.process?.stop('cancelled', graceMs);
  }

  async run(): Promise<ModelRunResult> {
    const { ctx, spec } = this;
    const logFile = `${spec.stem}.${this.method}.log`;
    const groupsFile = join(ctx.dir, `${spec.stem}.groups.jsonl`);
    // `process` writes placeholders for an OpenAI-compatible endpoint: its texts are taken from the wire.
    const wireFile = `${spec.stem}${WIRE_SUFFIX}`;
    const wire = this.method === 'process' ? await recordWire(ctx.baseUrl, join(ctx.dir, wireFile), { redactor: ctx.redactor, logger: ctx.logger, processEnv: ctx.settings.processEnv }) : undefined;
    let outcome: ModelProcessOutcome;
    let evalDir: string | undefined;
    try {
      const cmd = await evalCommand(ctx.settings, ctx.keyConfig, {
        method: this.method,
        envFile: ctx.envFile,
        envConfig: ctx.envConfig,
        baseUrl: wire?.baseUrl ?? ctx.baseUrl,
        modelId: spec.model,
        serverEntries: ctx.serverEntries,
        stem: `${spec.stem}-${this.method}`,
        numItems: ctx.numItems,
        groupSize: ctx.groupSize,
        groupsFile,
      });
      evalDir = cmd.evalDir;
      if (this.stopped !== undefined) return fail({ log_file: logFile, duration_seconds: 0 }, 'cancelled', `Not run: ${this.stopped}`);
      outcome = await this.runProcess(cmd, join(ctx.dir, logFile), wire);
    } finally {
      await wire?.stop();
    }
    const base = { log_file: logFile, duration_seconds: Math.round(outcome.durationMs / 100) / 10 };
    const failure = await this.failure(base, outcome);
    if (failure) return failure;
    if (evalDir !== undefined) return this.collectEvaluate(base, evalDir);
    const exchanges = await readExchanges(join(ctx.dir, wireFile));
    return this.finish(base, await readRolloutGroups(groupsFile, 'groups', exchanges.length > 0 ? { exchanges, file: wireFile } : undefined));
  }

  private async runProcess(cmd: { file: string; args: string[] }, logFile: string, wire: WireRecording | undefined): Promise<ModelProcessOutcome> {
    const { ctx } = this;
    const env = processEnv(ctx.settings, false);
    const started = await ModelProcess.start({
      file: cmd.file,
      args: cmd.args,
      env: wire ? wire.env(env) : env,
      cwd: ctx.settings.root,
      logFile,
      ...(wire ? { preamble: wire.note } : {}),
      timeoutMs: ctx.timeoutSeconds * 1000,
      graceMs: ctx.settings.stopGraceSeconds * 1000,
      maxFailedGroups: Math.max(5, 2 * ctx.numItems),
      redactor: ctx.redactor,
    });
    this.process = started;
    // A stop that came while the process was being launched applies to it now.
    if (this.stopped !== undefined) started.stop('cancelled');
    return started.done;
  }

  private async failure(base: Pick<ModelRunResult, 'log_file' | 'duration_seconds'>, outcome: ModelProcessOutcome): Promise<ModelRunResult | undefined> {
    if (outcome.spawnError !== undefined) return fail(base, 'crashed', `Could not start ${this.ctx.settings.python}: ${outcome.spawnError}. Check RL_PYTHON.`);
    if (outcome.stopReason === 'timeout') return fail(base, 'timed_out', `Timed out after ${this.ctx.timeoutSeconds} s; the process group was killed. See log_file.`);
    if (outcome.stopReason === 'cancelled') return fail(base, 'cancelled', `Cancelled: ${this.stopped ?? 'stopped'}`);
    const logLines = outcome.stopReason === 'gave_up' || outcome.exitCode !== 0 ? await tailLines(join(this.ctx.dir, base.log_file), CAUSE_SEARCH_LINES) : [];
    // Every model of an evaluation is sampled through Tinker with its key.
    const context = { baseUrl: this.ctx.baseUrl, modelId: this.spec.model, logLines, key: { kind: 'tinker' } as const };
    if (outcome.stopReason === 'gave_up') {
      const ended = `Stopped after ${outcome.failedGroups} failed groups (atroposlib would retry until the timeout)`;
      const { kind, error } = classifyDroppedGroups({ ...context, ended }, outcome.failedGroups);
      return fail(base, kind, error);
    }
    if (outcome.exitCode !== 0) {
      const ended = outcome.signal ? `Process killed by ${outcome.signal}` : `Process exited with code ${outcome.exitCode}`;
      const { kind, error } = classifyCrash({ ...context, ended });
      return fail(base, kind, error);
    }
    return undefined;
  }

  /** `evaluate`: metrics.json (none: the environment has no held-out evaluation) and samples.jsonl, copied redacted. */
  private async collectEvaluate(base: Pick<ModelRunResult, 'log_file' | 'duration_seconds'>, evalDir: string): Promise<ModelRunResult> {
    const metricsText = await readSmall(join(evalDir, 'metrics.json'));
    if (metricsText === undefined) {
      return fail(base, 'no_held_out_eval', "The environment's evaluate() wrote no metrics.json: it defines no held-out evaluation (its evaluate returns without evaluate_log). Use method \"process\".");
    }
    const metricsFile = `${this.spec.stem}.metrics.json`;
    await writeFile(join(this.ctx.dir, metricsFile), this.ctx.redactor.redact(metricsText));
    let envMetrics: Record<string, JsonValue> | undefined;
    try {
      envMetrics = shownMetrics((JSON.parse(metricsText) as { results?: { all?: Record<string, JsonValue> } }).results?.all);
    } catch {
      envMetrics = undefined;
    }
    const samplesText = await readSmall(join(evalDir, 'samples.jsonl'));
    if (samplesText === undefined) {
      return { ...fail(base, 'no_output', "The environment's evaluate() wrote metrics but no samples.jsonl: no per-item scores, so no interval or comparison. Its own metrics are in env_metrics."), ...(envMetrics ? { env_metrics: envMetrics } : {}) };
    }
    const samplesFile = join(this.ctx.dir, `${this.spec.stem}.samples.jsonl`);
    await writeFile(samplesFile, this.ctx.redactor.redact(samplesText));
    return this.finish(base, await readRolloutGroups(samplesFile, 'samples'), envMetrics);
  }

  private async finish(base: Pick<ModelRunResult, 'log_file' | 'duration_seconds'>, groups: Rollout[][] | undefined, envMetrics?: Record<string, JsonValue>): Promise<ModelRunResult> {
    const metrics = envMetrics ? { env_metrics: envMetrics } : {};
    if (groups === undefined || groups.length === 0) return { ...fail(base, 'no_output', 'The process finished but wrote no scored item. See log_file.'), ...metrics };
    const rolloutsFile = `${this.spec.stem}.rollouts.jsonl`;
    const lines = groups.flat().map((r) => JSON.stringify(r)).join('\n');
    await writeFile(join(this.ctx.dir, rolloutsFile), `${this.ctx.redactor.redact(lines)}\n`);
    return { ...base, items: itemScores(groups), rollouts_file: rolloutsFile, ...metrics };
  }
}
