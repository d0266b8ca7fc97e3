/**
 * One evaluation: the base model and a run's checkpoints, one after the other (so the Tinker
 * endpoint sees one sampler at a time), on the same items, then compared (comparison.ts). It
 * lives on between tool calls like an inference test; result.json is written when it starts
 * (status running, for other servers and rl_get_results) and when it ends.
 */
import { meterUnseen } from './unmetered.js';
import type { SampledUsage } from '../ledger/meter.js';
import { EventEmitter } from 'node:events';
import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EVALUATION_RESULT } from '../../core/files/home.js';
import { evaluationFileUri } from '../../core/resourceUris.js';
import { compareModels, type Comparison, type ModelScoreAnswer } from './comparison.js';
import type { EvalMethod } from './evalCommand.js';
import { EvalModelRun, type EvalFailureKind, type ModelRunContext, type ModelRunResult, type ModelSpec, type SampledTokens } from './modelRun.js';

export type EvaluationStatus = 'running' | 'completed' | 'cancelled';

export interface EvaluationParams {
  run_id: string;
  environment: string;
  method: EvalMethod;
  /** Why this method: the environment defines a held-out evaluation, or not, or the caller chose. */
  method_reason: string;
  /** `auto` may fall back to `process` when `evaluate` writes no metrics. */
  method_may_fall_back: boolean;
  models: ModelSpec[];
  /** The run's status and step when the evaluation started. */
  run_at_start: { status: string; steps_completed: number };
  note?: string;
}

export interface ModelAnswer extends ModelScoreAnswer {
  error?: string;
  error_kind?: EvalFailureKind;
  env_metrics?: Record<string, unknown>;
  /** Tokens this model's sampling sent and got back, as reported (the spend of the evaluation). */
  usage?: SampledTokens;
  duration_seconds?: number;
  log: string;
  rollouts?: string;
}

export interface EvaluationOutput {
  eval_id: string;
  status: EvaluationStatus;
  run_id: string;
  environment: string;
  created_at: string;
  finished_at?: string;
  method: EvalMethod;
  method_reason: string;
  checkpoints: string[];
  baseline?: string;
  run_at_start: { status: string; steps_completed: number };
  note?: string;
  message: string;
  progress?: { models_total: number; models_finished: number; running?: string; elapsed_seconds: number };
  verdict?: Comparison['verdict'];
  same_items?: boolean;
  models?: ModelAnswer[];
  statistics?: Record<string, string>;
  result: string;
}

export class Evaluation {
  /** Every evaluation samples on Tinker: the campaign budget may cancel it (jobs/registry.ts). */
  readonly paid = true;
  readonly createdAt = new Date();
  status: EvaluationStatus = 'running';
  readonly done: Promise<void>;
  private readonly events = new EventEmitter();
  private readonly results = new Map<string, ModelRunResult>();
  private current?: EvalModelRun;
  private cancelReason?: string;
  private finalOutput?: EvaluationOutput;

  constructor(
    readonly id: string,
    readonly params: EvaluationParams,
    private readonly ctx: ModelRunContext,
    cleanup: () => Promise<void>,
  ) {
    this.done = this.run().finally(cleanup);
  }

  cancel(reason: string, graceMs?: number): void {
    if (this.status !== 'running') return;
    this.cancelReason ??= reason;
    this.current?.stop(reason, graceMs);
  }

  onChange(listener: () => void): () => void {
    this.events.on('change', listener);
    return () => this.events.off('change', listener);
  }

  /** Models finished plus a share of the running one that grows with time and never reaches 1. */
  progressValue(): { progress: number; total: number; message: string } {
    const finished = this.results.size;
    const elapsed = Date.now() - this.createdAt.getTime();
    const spent = elapsed / (elapsed + this.ctx.timeoutSeconds * 1000);
    const running = this.current?.spec.label;
    return { progress: finished + spent, total: this.params.models.length, message: `${finished}/${this.params.models.length} models evaluated${running ? `; running: ${running}` : ''}` };
  }

  output(): EvaluationOutput {
    if (this.finalOutput) return this.finalOutput;
    return {
      ...this.header(),
      message: `Still running (${this.progressValue().message}). Call rl_evaluate({"eval_id": "${this.id}"}) to wait for the result.`,
      progress: {
        models_total: this.params.models.length,
        models_finished: this.results.size,
        ...(this.current ? { running: this.current.spec.label } : {}),
        elapsed_seconds: Math.round((Date.now() - this.createdAt.getTime()) / 100) / 10,
      },
    };
  }

  private header(): Omit<EvaluationOutput, 'message'> {
    const { run_id, environment, method, method_reason, models, run_at_start, note } = this.params;
    return {
      eval_id: this.id,
      status: this.status,
      run_id,
      environment,
      created_at: this.createdAt.toISOString(),
      method,
      method_reason,
      checkpoints: models.filter((m) => m.role === 'checkpoint').map((m) => m.label),
      ...(models.some((m) => m.role === 'baseline') ? { baseline: models.find((m) => m.role === 'baseline')!.model } : {}),
      run_at_start,
      ...(note ? { note } : {}),
      result: evaluationFileUri(this.id, EVALUATION_RESULT),
    };
  }

  private async run(): Promise<void> {
    await this.persist(this.output());
    for (const spec of this.params.models) {
      this.current = new EvalModelRun(this.ctx, spec, this.params.method);
      if (this.cancelReason !== undefined) this.current.stop(this.cancelReason);
      this.events.emit('change');
      let result = await this.current.run().catch((err: unknown) => this.internalError(spec, err));
      if (result.error_kind === 'no_held_out_eval' && this.params.method_may_fall_back && this.results.size === 0) {
        this.fallBackToProcess();
        this.current = new EvalModelRun(this.ctx, spec, 'process');
        result = await this.current.run().catch((err: unknown) => this.internalError(spec, err));
      }
      // A method that sampled past the recording proxy counts from its records; `usage`: the sampler's totals, where the method reports them.
      if (this.ctx.meter) await meterUnseen(this.ctx.meter, this.ctx.dir, spec, (result as { usage?: SampledUsage }).usage).catch((err: unknown) => this.ctx.logger.warn({ err, eval_id: this.id }, "could not count a model's recorded sampling"));
      if (result.items_source !== undefined && this.results.size === 0) this.params.method_reason += `. Items: ${result.items_source}`;
      this.results.set(spec.label, result);
      this.current = undefined;
      this.events.emit('change');
    }
    this.status = this.cancelReason === undefined ? 'completed' : 'cancelled';
    this.finalOutput = this.final();
    await this.persist(this.finalOutput);
    this.ctx.logger.info({ eval_id: this.id, run_id: this.params.run_id, verdict: this.finalOutput.verdict?.verdict }, 'evaluation finished');
    this.events.emit('change');
  }

  private fallBackToProcess(): void {
    this.params.method = 'process';
    this.params.method_reason = `the environment's evaluate() wrote no metrics (it defines no held-out evaluation), so scored process rollouts of ${this.ctx.numItems} training items x ${this.ctx.groupSize} completions are compared`;
  }

  private internalError(spec: ModelSpec, err: unknown): ModelRunResult {
    this.ctx.logger.error({ err, eval_id: this.id, model: spec.model }, 'evaluation model failed');
    return { log_file: `${spec.stem}.${this.params.method}.log`, duration_seconds: 0, error_kind: 'crashed', error: `Internal error: ${err instanceof Error ? err.message : String(err)}` };
  }

  private final(): EvaluationOutput {
    const comparison = compareModels(this.params.models.map((m) => ({ ...m, items: this.results.get(m.label)?.items })));
    const models = comparison.models.map((answer, i): ModelAnswer => {
      const r = this.results.get(this.params.models[i]!.label)!;
      return {
        ...answer,
        ...(r.error !== undefined ? { error: r.error, error_kind: r.error_kind } : {}),
        ...(r.env_metrics ? { env_metrics: r.env_metrics } : {}),
        ...(r.usage ? { usage: r.usage } : {}),
        duration_seconds: r.duration_seconds,
        log: evaluationFileUri(this.id, r.log_file),
        ...(r.rollouts_file ? { rollouts: evaluationFileUri(this.id, r.rollouts_file) } : {}),
      };
    });
    const failed = models.filter((m) => m.error !== undefined).map((m) => m.label);
    const message = this.cancelReason !== undefined
      ? `Cancelled: ${this.cancelReason}`
      : (comparison.verdict?.summary ?? 'No comparison: a baseline and a checkpoint must both produce scored items.') +
        (failed.length ? ` Failed: ${failed.join(', ')} (see error).` : '') +
        ' Read samples with rl_get_rollouts({eval_id}).';
    return {
      ...this.header(),
      finished_at: new Date().toISOString(),
      message,
      ...(comparison.verdict ? { verdict: comparison.verdict } : {}),
      same_items: comparison.same_items,
      models,
      statistics: comparison.methods,
    };
  }

  private async persist(output: EvaluationOutput): Promise<void> {
    const path = join(this.ctx.dir, EVALUATION_RESULT);
    try {
      await writeFile(`${path}.tmp`, this.ctx.redactor.redact(JSON.stringify(output)));
      await rename(`${path}.tmp`, path);
    } catch (err) {
      await rm(`${path}.tmp`, { force: true });
      this.ctx.logger.error({ err, eval_id: this.id }, 'could not write the evaluation result');
    }
  }
}
