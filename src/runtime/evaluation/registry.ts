/**
 * The evaluations: starts them (the Tinker key in a private 0600 file outside RL_HOME, removed
 * when the evaluation ends), finds them again by eval_id, lists a run's evaluations; keeping,
 * reading and cancelling them is the job registry's (../jobs/registry.ts). A call that started an
 * evaluation owns it until it returns: cancelling that call cancels the evaluation; a call that
 * only waits on eval_id stops waiting.
 */
import { UserError } from '../../core/errors.js';
import type { JsonValue } from '../../core/json.js';
import type { CoreServices } from '../../core/services.js';
import { JobRegistry, type CancelOutcome } from '../jobs/registry.js';
import { writeKeyConfig } from '../inference/command.js';
import { waitOnJob, type WaitOptions } from '../jobs/wait.js';
import { tinkerApiKey } from '../inference/keys.js';
import { Evaluation, type EvaluationOutput, type EvaluationParams } from './evaluation.js';
import type { ModelRunContext } from './modelRun.js';
import { refuseSampling, samplingMeter } from '../ledger/sampling.js';

export const MAX_EVAL_WAIT_SECONDS = 280;
/** Evaluations running at once on this server (each runs one model process at a time). */
export const MAX_RUNNING_EVALUATIONS = 2;
const KEPT_FINISHED = 20;
/** rl_get_results lists at most this many of a run's evaluations, newest first. */
export const LISTED_EVALUATIONS = 10;

export interface EvaluationRequest extends EvaluationParams {
  envFile: string;
  envConfig: Record<string, JsonValue>;
  serverEntries: 1 | 2;
  numItems: number;
  groupSize: number;
  timeoutSeconds: number;
  /** Method vf_eval: the verifiers environment (modelRun.ts). */
  verifiers?: ModelRunContext['verifiers'];
  /** The base model the run trains: its checkpoints' sampling is priced as it. */
  pricedAs?: string;
  /** Method recipe: the cookbook recipe run (modelRun.ts). */
  recipe?: ModelRunContext['recipe'];
}

/** What rl_get_results lists of one evaluation. */
export interface EvaluationListing {
  eval_id: string;
  created_at: string;
  status: string;
  method: string;
  checkpoints: string[];
  verdict?: string;
  summary?: string;
}

export class Evaluations {
  readonly jobs: JobRegistry<Evaluation, EvaluationOutput>;

  constructor(private readonly core: CoreServices) {
    this.jobs = new JobRegistry(core, 'evaluation', KEPT_FINISHED);
  }

  get directory(): string {
    return this.jobs.directory;
  }

  async start(req: EvaluationRequest, opts: WaitOptions): Promise<EvaluationOutput> {
    const { settings, redactor, logger } = this.core;
    if (this.jobs.closed) throw new UserError('The server is shutting down; evaluate again after it restarts');
    const key = tinkerApiKey(settings);
    const active = this.jobs.running();
    if (active.length >= MAX_RUNNING_EVALUATIONS) {
      throw new UserError(`${active.length} evaluations are already running; wait for one with rl_evaluate({eval_id})`, { running_evaluations: active.map((e) => e.id) });
    }
    const maxTokens = req.verifiers?.max_tokens ?? (typeof req.envConfig.max_token_length === 'number' ? req.envConfig.max_token_length : undefined);
    const sampled = { models: req.models.map((m) => m.model), rollouts: req.numItems * req.groupSize, environment: req.environment, ...(req.pricedAs ? { pricedAs: req.pricedAs } : {}), ...(maxTokens ? { maxTokens } : {}) };
    refuseSampling(settings, `an evaluation of ${req.models.length} model(s) on Tinker`, sampled);
    redactor.add(key);
    const { id, dir } = await this.jobs.create();
    const keyConfig = await writeKeyConfig(key);
    const { envFile, envConfig, serverEntries, numItems, groupSize, timeoutSeconds, verifiers, recipe, pricedAs, ...params } = req;
    const meter = samplingMeter(settings, { kind: 'evaluation', id, model: pricedAs ?? req.models[0]?.model ?? 'unknown' }, pricedAs, logger);
    const ctx = { settings, redactor, logger, keyConfig, dir, envFile, envConfig, baseUrl: settings.tinkerOaiBaseUrl, serverEntries, numItems, groupSize, timeoutSeconds, meter, ...(verifiers ? { verifiers } : {}), ...(recipe ? { recipe } : {}) };
    const evaluation = new Evaluation(id, params, ctx, () => keyConfig.remove().catch((err: unknown) => logger.error({ err, eval_id: id }, 'could not remove the evaluation key file')));
    this.jobs.add(evaluation);
    logger.info({ eval_id: id, run_id: req.run_id, models: req.models.map((m) => m.model), method: req.method }, 'evaluation started');
    const cancel = (): void => evaluation.cancel('the call that started the evaluation was cancelled');
    if (opts.signal?.aborted) cancel();
    opts.signal?.addEventListener('abort', cancel, { once: true });
    try {
      await waitOnJob(evaluation, opts, MAX_EVAL_WAIT_SECONDS);
    } finally {
      opts.signal?.removeEventListener('abort', cancel);
    }
    return evaluation.output();
  }

  async waitFor(evalId: string, opts: WaitOptions): Promise<EvaluationOutput> {
    const evaluation = this.jobs.get(evalId);
    if (evaluation) {
      await waitOnJob(evaluation, opts, MAX_EVAL_WAIT_SECONDS);
      return evaluation.output();
    }
    const stored = await this.jobs.stored(evalId);
    if (stored === undefined) {
      throw new UserError(`Evaluation '${evalId}' not found`, { recent_evaluations: this.jobs.list().map((e) => e.id), hint: 'Start one with rl_evaluate({run_id}).' });
    }
    if (stored.status === 'running') {
      return { ...stored, message: 'This evaluation is run by another server process sharing RL_HOME, or the server running it stopped before it finished; its files are listed in result.' };
    }
    return stored;
  }

  /** Cancels an evaluation, run here or by another server sharing RL_HOME (../jobs/registry.ts). */
  cancel(evalId: string, reason: string): Promise<CancelOutcome> {
    return this.jobs.cancel(evalId, reason);
  }

  /** Every evaluation of a run, newest first (any server's, from their result.json). */
  private async allOfRun(runId: string): Promise<EvaluationOutput[]> {
    const ids = await this.jobs.ids();
    const found = await Promise.all(ids.map((id) => this.jobs.get(id)?.output() ?? this.jobs.stored(id).catch(() => undefined)));
    return found.filter((e): e is EvaluationOutput => e !== undefined && e.run_id === runId).sort((a, b) => b.created_at.localeCompare(a.created_at));
  }

  /** The run's checkpoint that scored highest in its completed evaluations (a tie: the later step); undefined before any. */
  async bestCheckpoint(runId: string): Promise<{ path: string; label: string; score: number; eval_id: string } | undefined> {
    let best: { path: string; label: string; score: number; eval_id: string; step: number } | undefined;
    for (const e of await this.allOfRun(runId)) {
      if (e.status !== 'completed') continue;
      for (const m of e.models ?? []) {
        if (m.role !== 'checkpoint' || m.score === null) continue;
        const step = m.step ?? -1;
        if (best === undefined || m.score > best.score || (m.score === best.score && step > best.step)) best = { path: m.model, label: m.label, score: m.score, eval_id: e.eval_id, step };
      }
    }
    return best && { path: best.path, label: best.label, score: best.score, eval_id: best.eval_id };
  }

  /** A run's evaluations, newest first (any server's, from their result.json). */
  async ofRun(runId: string): Promise<EvaluationListing[]> {
    return (await this.allOfRun(runId))
      .slice(0, LISTED_EVALUATIONS)
      .map((e) => ({
        eval_id: e.eval_id,
        created_at: e.created_at,
        status: e.status,
        method: e.method,
        checkpoints: e.checkpoints,
        ...(e.verdict ? { verdict: e.verdict.verdict, summary: e.verdict.summary } : {}),
      }));
  }

  close(): Promise<void> {
    return this.jobs.close();
  }
}
