/**
 * One model of an evaluation: its process (evalCommand.ts), why it failed when it did (the same
 * classification as inference tests: 401, 404, no learning signal...), and what it produced:
 * per-item scores and a rollouts file under the evaluation's directory (redacted).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
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
import { evalCommand, recipeEvalCommand, recipeFiles, type EvalMethod, type RecipeEval } from './evalCommand.js';
import { readExchanges, type WireExchange } from '../inference/wire/exchanges.js';
import type { SamplingMeter } from '../ledger/meter.js';
import { childEnv } from '../../core/childEnv.js';
import { recordWire, type WireRecording } from '../inference/wire/recorder.js';
import { itemScores, readRolloutGroups, type ItemScore, type Rollout } from './rollouts.js';
import { byExample, messagesText, vfEvalCommand, vfEvalEnv, vfResults } from '../inference/vfEval.js';

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
  /** Meters what the models sample on Tinker (ledger/meter.ts): every exchange's usage, whatever the evaluation's kind. */
  meter?: SamplingMeter;
  /** A verifiers environment (method vf_eval): its id, the run's load_environment arguments and token limit. */
  verifiers?: { vf_env_id: string; env_args?: Record<string, JsonValue>; max_tokens?: number };
  /** A cookbook recipe run (method recipe). */
  recipe?: RecipeEval;
}

/** The tokens a model's sampling sent and got back, as the endpoint (or Tinker's sampler) reported them. */
export interface SampledTokens {
  prompt_tokens: number;
  completion_tokens: number;
  requests: number;
}

/** The sum of the exchanges' reported usage; undefined when none reported any. */
export function sampledTokens(exchanges: readonly WireExchange[]): SampledTokens | undefined {
  const reported = exchanges.filter((e) => e.usage !== undefined);
  if (reported.length === 0) return undefined;
  return reported.reduce((t, e) => ({ prompt_tokens: t.prompt_tokens + e.usage!.prompt_tokens, completion_tokens: t.completion_tokens + e.usage!.completion_tokens, requests: t.requests + 1 }), { prompt_tokens: 0, completion_tokens: 0, requests: 0 });
}

export interface ModelRunResult {
  items?: ItemScore[];
  /** Files relative to the evaluation directory. */
  log_file: string;
  rollouts_file?: string;
  /** The environment's own metrics (metrics.json `results.all`), in `evaluate` mode. */
  env_metrics?: Record<string, JsonValue>;
  /** Tokens sampled, from the wire file (`<stem>.wire.jsonl`) where they are recorded request by request. */
  usage?: SampledTokens;
  /** Method recipe: which items were scored and why they are not ones the run trained on. */
  items_source?: string;
  error?: string;
  error_kind?: EvalFailureKind;
  duration_seconds: number;
}

/** What python/cookbook_eval.py says of one model's run. */
interface RecipeSummary {
  items?: { source: string; test_items?: number; trained_batches?: number; trained_prompts?: number; batches_drawn?: [number, number] };
  env_metrics?: Record<string, JsonValue>;
}

function itemsSource(items: NonNullable<RecipeSummary['items']>): string {
  if (items.source === 'test set') return `the first items of the recipe's test set (${items.test_items ?? '?'} items), which the run does not train on`;
  const [from, to] = items.batches_drawn ?? [0, 0];
  return `fresh draws of the recipe's generator: batches ${from}-${to}, past the ${items.trained_batches ?? 0} it trains on (the dataset seeds each batch by its index), any item equal to one of the ${items.trained_prompts ?? 0} training prompts left out`;
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

/** How one model's process is started, and how its output becomes scored items. */
interface Launch {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** The recording proxy the process talks through, stopped when it ends. */
  wire?: WireRecording;
  collect(base: Pick<ModelRunResult, 'log_file' | 'duration_seconds'>): Promise<ModelRunResult>;
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
    const launch = this.method === 'vf_eval' ? await this.vfLaunch() : this.method === 'recipe' ? this.recipeLaunch() : await this.atroposLaunch();
    let outcome: ModelProcessOutcome;
    try {
      if (this.stopped !== undefined) return fail({ log_file: logFile, duration_seconds: 0 }, 'cancelled', `Not run: ${this.stopped}`);
      outcome = await this.runProcess(launch, join(ctx.dir, logFile));
    } finally {
      await launch.wire?.stop();
    }
    const base = { log_file: logFile, duration_seconds: Math.round(outcome.durationMs / 100) / 10 };
    const failure = await this.failure(base, outcome);
    if (failure) return failure;
    return launch.collect(base);
  }

  private async runProcess(launch: Launch, logFile: string): Promise<ModelProcessOutcome> {
    const { ctx } = this;
    const started = await ModelProcess.start({
      file: launch.file,
      args: launch.args,
      env: launch.wire ? launch.wire.env(launch.env) : launch.env,
      cwd: launch.cwd,
      logFile,
      ...(launch.wire ? { preamble: launch.wire.note } : {}),
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

  /** verifiers' eval of the model on the run's environment, in a folder of its own (its results folder lands there). */
  private async vfLaunch(): Promise<Launch> {
    const { ctx, spec } = this;
    const verifiers = ctx.verifiers!;
    const cwd = join(ctx.dir, `${spec.stem}.vf`);
    await mkdir(cwd, { recursive: true });
    const wire = await this.recordWire();
    try {
      const opts = { vfEnvId: verifiers.vf_env_id, model: spec.model, baseUrl: wire.baseUrl, numExamples: ctx.numItems, rolloutsPerExample: ctx.groupSize };
      const cmd = vfEvalCommand(ctx.settings, { ...opts, ...(verifiers.env_args ? { envArgs: verifiers.env_args } : {}), ...(verifiers.max_tokens ? { maxTokens: verifiers.max_tokens } : {}) });
      return { ...cmd, cwd, env: vfEvalEnv(ctx.settings, ctx.keyConfig.key), wire, collect: (base) => this.collectVf(base, cwd) };
    } catch (err) {
      await wire.stop();
      throw err;
    }
  }

  private async collectVf(base: Pick<ModelRunResult, 'log_file' | 'duration_seconds'>, cwd: string): Promise<ModelRunResult> {
    // Failures name the endpoint itself, not the recording proxy in front of it.
    const found = await vfResults(cwd, { baseUrl: this.ctx.baseUrl, model: this.spec.model });
    if (!('rows' in found)) return fail(base, found.kind === 'crashed' ? 'no_output' : found.kind, found.error);
    const groups = byExample(found.rows).map((group) => group.map((r) => ({ item: messagesText(r.prompt), prompt: messagesText(r.prompt), completion: messagesText(r.completion), score: r.reward })));
    return this.finish(base, groups, undefined, `${this.spec.stem}${WIRE_SUFFIX}`);
  }

  /**
   * The recording proxy the model's process talks to the endpoint through: every exchange written
   * to `<stem>.wire.jsonl` (the texts `process` replaces with placeholders, the tokens each model
   * sampled) and metered in the spend ledger as it comes, whatever the method.
   */
  private recordWire(): Promise<WireRecording> {
    const { ctx, spec } = this;
    const { meter } = ctx;
    const onExchange = meter ? { onExchange: (e: WireExchange) => e.status === 200 && e.usage && meter.add(e.model ?? spec.model, e.usage, spec.stem) } : {};
    return recordWire(ctx.baseUrl, join(ctx.dir, `${spec.stem}${WIRE_SUFFIX}`), { redactor: ctx.redactor, logger: ctx.logger, processEnv: ctx.settings.processEnv, ...onExchange });
  }

  /** python/cookbook_eval.py: the recipe's own envs, sampled through the Tinker SDK with the key in its environment. */
  private recipeLaunch(): Launch {
    const { ctx, spec } = this;
    const cmd = recipeEvalCommand(ctx.settings, ctx.dir, { ...ctx.recipe!, model: spec.model, stem: spec.stem, numItems: ctx.numItems });
    const env = childEnv(ctx.settings.processEnv, { TINKER_API_KEY: ctx.keyConfig.key, PYTHONUNBUFFERED: '1' });
    return { ...cmd, cwd: ctx.dir, env, collect: (base) => this.collectRecipe(base) };
  }

  private async collectRecipe(base: Pick<ModelRunResult, 'log_file' | 'duration_seconds'>): Promise<ModelRunResult> {
    const files = recipeFiles(this.spec.stem);
    const summary = await readSmall(join(this.ctx.dir, files.summary)).then((t) => (t === undefined ? undefined : (JSON.parse(t) as RecipeSummary)), () => undefined);
    const groups = await readRolloutGroups(join(this.ctx.dir, files.groups), 'groups');
    const result = await this.finish(base, groups, shownMetrics(summary?.env_metrics), files.wire);
    return summary?.items ? { ...result, items_source: itemsSource(summary.items) } : result;
  }

  private async atroposLaunch(): Promise<Launch> {
    const { ctx, spec } = this;
    const groupsFile = join(ctx.dir, `${spec.stem}.groups.jsonl`);
    // `process` writes placeholders for an OpenAI-compatible endpoint: its texts are taken from the wire.
    const wireFile = `${spec.stem}${WIRE_SUFFIX}`;
    const wire = await this.recordWire();
    try {
      const cmd = await evalCommand(ctx.settings, ctx.keyConfig, {
        method: this.method,
        envFile: ctx.envFile,
        envConfig: ctx.envConfig,
        baseUrl: wire.baseUrl,
        modelId: spec.model,
        serverEntries: ctx.serverEntries,
        stem: `${spec.stem}-${this.method}`,
        numItems: ctx.numItems,
        groupSize: ctx.groupSize,
        groupsFile,
      });
      const evalDir = cmd.evalDir;
      return {
        ...cmd,
        cwd: ctx.settings.root,
        env: processEnv(ctx.settings, false),
        wire,
        collect: (base) => (evalDir !== undefined ? this.collectEvaluate(base, evalDir) : this.collectGroups(base, groupsFile, wireFile)),
      };
    } catch (err) {
      await wire.stop();
      throw err;
    }
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
    return this.finish(base, await readRolloutGroups(samplesFile, 'samples'), envMetrics, `${this.spec.stem}${WIRE_SUFFIX}`);
  }

  private async collectGroups(base: Pick<ModelRunResult, 'log_file' | 'duration_seconds'>, groupsFile: string, wireFile: string): Promise<ModelRunResult> {
    const exchanges = await readExchanges(join(this.ctx.dir, wireFile));
    return this.finish(base, await readRolloutGroups(groupsFile, 'groups', exchanges.length > 0 ? { exchanges, file: wireFile } : undefined), undefined, wireFile);
  }

  private async finish(base: Pick<ModelRunResult, 'log_file' | 'duration_seconds'>, groups: Rollout[][] | undefined, envMetrics?: Record<string, JsonValue>, wireFile?: string): Promise<ModelRunResult> {
    const usage = wireFile === undefined ? undefined : sampledTokens(await readExchanges(join(this.ctx.dir, wireFile)));
    const metrics = { ...(envMetrics ? { env_metrics: envMetrics } : {}), ...(usage ? { usage } : {}) };
    if (groups === undefined || groups.length === 0) return { ...fail(base, 'no_output', 'The process finished but wrote no scored item. See log_file.'), ...metrics };
    const rolloutsFile = `${this.spec.stem}.rollouts.jsonl`;
    const lines = groups.flat().map((r) => JSON.stringify(r)).join('\n');
    await writeFile(join(this.ctx.dir, rolloutsFile), `${this.ctx.redactor.redact(lines)}\n`);
    return { ...base, items: itemScores(groups), rollouts_file: rolloutsFile, ...metrics };
  }
}
