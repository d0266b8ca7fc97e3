/**
 * What rl_check_status, rl_get_results and rl_compare_runs read from W&B for one training run. A
 * status check is one request (two while the viewer's entity is not cached): the group's runs with
 * their summaries. Results and key metrics add one sampled-history request per W&B run, in
 * parallel. Nothing here throws: every failure becomes a `wandb_error` sentence, and the tool
 * still answers with the rest.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { CoreServices } from '../../core/services.js';
import type { JsonValue } from '../../core/json.js';
import { CallBudget } from './budget.js';
import { GET_DEFAULT_ENTITY, GROUP_RUNS, RUN_SAMPLED_HISTORY, type DefaultEntityData, type GroupRunsData, type SampledHistoryData } from './documents.js';
import { describeWandbError, type LookupContext, WandbError } from './errors.js';
import { GraphQLClient } from './graphqlClient.js';
import { ENV_EVAL_ACCURACY, ENV_TRAIN_ACCURACY, findEnvMetric, type GroupRun, mainRun, type RunGroup, splitGroup, toGroupRun } from './groupRuns.js';
import { clampSamples, evenlySpaced, joinOnStep, type KeySummary, MAX_HISTORY_SAMPLES, type Point, sampledHistorySpecs, type Series, seriesPoints, summarizeSeries } from './history.js';
import { type KeyMetric, keyMetricSummaries, type MetricSummary } from './keyMetrics.js';
import { finalMetrics, type StatusMetrics, statusMetrics, TRAINER_LEARNING_RATE, TRAINER_LOSS, TRAINER_REWARD } from './metrics.js';
import { SPARKLINE_WIDTH, sparkline } from './sparkline.js';
import { appUrlFromApiUrl, graphqlEndpoint, runUrl } from './urls.js';

export { DEFAULT_HISTORY_SAMPLES, MAX_HISTORY_SAMPLES } from './history.js';

/** The `wandb_error` of a run that does not log to W&B: nothing to look up. */
export const WANDB_OFF = 'W&B was off for this run (env.use_wandb is false): no metrics were logged';

/** The part of a run record the reader needs (a RunRecord satisfies it). */
export interface WandbRunRef {
  run_id: string;
  wandb_project: string;
  /** The environment's `wandb_name`: the prefix of its metric keys. */
  wandb_name: string;
}

export interface WandbStatus {
  metrics?: StatusMetrics;
  wandb_url?: string;
  wandb_error?: string;
}

export interface WandbResults {
  final_metrics?: Record<string, JsonValue>;
  /** Sampled rows joined on `_step`; non-finite values as "NaN" / "Infinity" / "-Infinity". */
  history?: Record<string, JsonValue>[];
  /** Per history key, over its sampled points: first, last, min, max, mean. */
  history_summary?: Record<string, KeySummary>;
  wandb_url?: string;
  wandb_error?: string;
  /** Metric name (as in `metrics`) -> text chart over the run's history. */
  sparklines?: Record<string, string>;
}

export interface WandbKeyMetrics {
  /** Only the key metrics W&B holds something for. */
  metrics?: Partial<Record<KeyMetric, MetricSummary>>;
  wandb_url?: string;
  wandb_error?: string;
}

export interface WandbKeySeries {
  /** Per key metric logged so far, its sampled history in step order. */
  series?: Partial<Record<KeyMetric, Point[]>>;
  wandb_url?: string;
  wandb_error?: string;
}

export interface WandbAccess {
  entity?: string;
  wandb_error?: string;
}

export interface WandbReaderOptions {
  fetch?: typeof fetch;
  /** One lookup's total time, retries included. Default: RL_WANDB_TIMEOUT_SECONDS (20 s). */
  budgetMs?: number;
  /** One request's time. Default: half the budget, so one retry always fits. */
  requestTimeoutMs?: number;
  /** First backoff step (doubled per retry, +25 % jitter). Default 1 s. */
  retryBaseMs?: number;
  /** Attempts per request, the first included. Default 5. */
  maxAttempts?: number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

const RETRY_MAX_MS = 8000;
/** A group holds a trainer and a few environment runs; restarts add some. One page is plenty. */
const GROUP_PAGE_SIZE = 50;

/** History keys per metric name of `StatusMetrics` that gets a sparkline. */
const TRAINER_CHARTS: Record<string, string> = { reward_mean: TRAINER_REWARD, loss: TRAINER_LOSS };
const ENV_CHARTS: Record<string, string> = { percent_correct: ENV_TRAIN_ACCURACY, eval_percent_correct: ENV_EVAL_ACCURACY };

export class WandbReader {
  readonly endpoint: string;
  readonly appUrl: string;
  private readonly client?: GraphQLClient;
  private readonly budgetMs: number;
  /** The viewer's default entity, asked once per reader (the SDK caches it per Api object too). */
  private viewerEntity?: string;

  constructor(
    private readonly core: CoreServices,
    opts: WandbReaderOptions = {},
  ) {
    const { wandb, secrets } = core.settings;
    this.endpoint = graphqlEndpoint(wandb.baseUrl);
    this.appUrl = appUrlFromApiUrl(wandb.baseUrl);
    this.budgetMs = opts.budgetMs ?? wandb.timeoutSeconds * 1000;
    if (secrets.wandbApiKey) {
      this.client = new GraphQLClient({
        endpoint: this.endpoint,
        apiKey: secrets.wandbApiKey,
        fetch: opts.fetch ?? globalThis.fetch,
        requestTimeoutMs: opts.requestTimeoutMs ?? this.budgetMs / 2,
        retryBaseMs: opts.retryBaseMs ?? 1000,
        retryMaxMs: RETRY_MAX_MS,
        maxAttempts: opts.maxAttempts ?? 5,
        sleep: opts.sleep ?? ((ms, signal) => sleep(ms, undefined, { signal })),
        logger: core.logger,
      });
    }
  }

  /** `metrics` and `wandb_url` for rl_check_status. */
  statusMetrics(run: WandbRunRef, signal?: AbortSignal): Promise<WandbStatus> {
    return this.lookup(run, signal, async (client, ctx, budget): Promise<WandbStatus> => {
      const group = await this.loadGroup(client, run, ctx, budget);
      return { metrics: statusMetrics(group, run.wandb_name), wandb_url: mainRun(group).url };
    });
  }

  /**
   * `final_metrics`, `history` (`samples` rows, default 10, at most 500), `sparklines` and
   * `wandb_url` for rl_get_results. When the summaries arrive but the history does not, the
   * summaries are returned with the `wandb_error`.
   */
  results(run: WandbRunRef, opts: { samples?: number } = {}, signal?: AbortSignal): Promise<WandbResults> {
    return this.lookup(run, signal, async (client, ctx, budget): Promise<WandbResults> => {
      const samples = clampSamples(opts.samples);
      const { group, charts, series, historyError } = await this.chartedGroup(client, run, Math.max(samples, SPARKLINE_WIDTH), ctx, budget);
      const base: WandbResults = { wandb_url: mainRun(group).url, final_metrics: finalMetrics(group, run.wandb_name) };
      if (!series) return { ...base, wandb_error: historyError };
      const sparklines: Record<string, string> = {};
      for (const [metric, points] of Object.entries(metricPoints(charts, series))) sparklines[metric] = sparkline(points.map((p) => p.value));
      return {
        ...base,
        history: evenlySpaced(joinOnStep(series), samples),
        history_summary: summarizeSeries(series),
        ...(Object.keys(sparklines).length > 0 ? { sparklines } : {}),
      };
    });
  }

  /**
   * Per key metric: final value, best value and sparkline, for rl_compare_runs. The history is
   * sampled as finely as W&B allows so that the best value is the one the run really reached.
   */
  keyMetrics(run: WandbRunRef, signal?: AbortSignal): Promise<WandbKeyMetrics> {
    return this.lookup(run, signal, async (client, ctx, budget): Promise<WandbKeyMetrics> => {
      const { group, charts, series, historyError } = await this.chartedGroup(client, run, MAX_HISTORY_SAMPLES, ctx, budget);
      const metrics = keyMetricSummaries(statusMetrics(group, run.wandb_name), series ? metricPoints(charts, series) : {});
      return { wandb_url: mainRun(group).url, metrics, ...(historyError !== undefined ? { wandb_error: historyError } : {}) };
    });
  }

  /** Per key metric, at most `samples` points of its history (the dashboard's curves). */
  keySeries(run: WandbRunRef, samples: number, signal?: AbortSignal): Promise<WandbKeySeries> {
    return this.lookup(run, signal, async (client, ctx, budget): Promise<WandbKeySeries> => {
      const { group, charts, series, historyError } = await this.chartedGroup(client, run, clampSamples(samples), ctx, budget);
      const base = { wandb_url: mainRun(group).url };
      return series ? { ...base, series: metricPoints(charts, series) as Partial<Record<KeyMetric, Point[]>> } : { ...base, wandb_error: historyError };
    });
  }

  /** The run's group and its charted series; when only the summaries arrive, `historyError` says why. */
  private async chartedGroup(client: GraphQLClient, run: WandbRunRef, samples: number, ctx: LookupContext, budget: CallBudget): Promise<ChartedGroup> {
    const group = await this.loadGroup(client, run, ctx, budget);
    const charts = chartedKeys(group, run.wandb_name);
    try {
      return { group, charts, series: await this.sampledSeries(client, charts, samples, ctx, budget) };
    } catch (err) {
      return { group, charts, historyError: this.explain(err, ctx, run) };
    }
  }

  private async lookup<T extends { wandb_error?: string }>(
    run: WandbRunRef,
    signal: AbortSignal | undefined,
    body: (client: GraphQLClient, ctx: LookupContext, budget: CallBudget) => Promise<T>,
  ): Promise<T> {
    const ctx: LookupContext = { endpoint: this.endpoint, project: run.wandb_project, group: run.run_id };
    try {
      if (!this.client) throw new WandbError('no_key', 'WANDB_API_KEY not set');
      return await body(this.client, ctx, new CallBudget(this.budgetMs, signal));
    } catch (err) {
      return { wandb_error: this.explain(err, ctx, run) } as T;
    }
  }

  private explain(err: unknown, ctx: LookupContext, run: WandbRunRef): string {
    if (!(err instanceof WandbError)) {
      this.core.logger.error({ err, run_id: run.run_id }, 'W&B lookup failed unexpectedly');
      return this.core.redactor.redact(`W&B lookup failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    // Expected while a run starts, or chosen by the operator/client: not worth a warning.
    const level = err.kind === 'no_run' || err.kind === 'no_key' || err.kind === 'aborted' ? 'debug' : 'warn';
    this.core.logger[level]({ run_id: run.run_id, kind: err.kind, status: err.extra.status, detail: err.detail, attempts: err.attempts }, 'W&B lookup failed');
    return this.core.redactor.redact(describeWandbError(err, ctx));
  }

  /**
   * Proves the key works and W&B answers, by asking whose key it is (rl_doctor). Answers the
   * entity lookups will use, or the reason they would fail.
   */
  checkAccess(signal?: AbortSignal): Promise<WandbAccess> {
    const probe: WandbRunRef = { run_id: '', wandb_project: this.core.settings.wandb.project, wandb_name: '' };
    return this.lookup(probe, signal, async (client, ctx, budget): Promise<WandbAccess> => {
      const viewerEntity = await this.queryViewer(client, ctx, budget);
      return { entity: this.core.settings.wandb.entity ?? viewerEntity };
    });
  }

  private async resolveEntity(client: GraphQLClient, ctx: LookupContext, budget: CallBudget): Promise<string> {
    const configured = this.core.settings.wandb.entity;
    if (configured) return configured;
    ctx.entityFromViewer = true;
    return this.viewerEntity ?? this.queryViewer(client, ctx, budget);
  }

  private async queryViewer(client: GraphQLClient, ctx: LookupContext, budget: CallBudget): Promise<string> {
    ctx.entityFromViewer = true;
    const { viewer } = await client.query<DefaultEntityData>(GET_DEFAULT_ENTITY, {}, budget);
    // Some servers answer a bad key with 200 and no viewer instead of a 401.
    if (!viewer) throw new WandbError('auth', 'the server found no user for this key');
    if (!viewer.entity) throw new WandbError('no_entity', 'viewer.entity is empty');
    this.viewerEntity = viewer.entity;
    return viewer.entity;
  }

  private async loadGroup(client: GraphQLClient, run: WandbRunRef, ctx: LookupContext, budget: CallBudget): Promise<RunGroup> {
    const entity = await this.resolveEntity(client, ctx, budget);
    ctx.entity = entity;
    const { project } = await client.query<GroupRunsData>(
      GROUP_RUNS,
      { project: run.wandb_project, entity, filters: JSON.stringify({ group: run.run_id }), order: '-created_at', perPage: GROUP_PAGE_SIZE },
      budget,
    );
    if (!project) throw new WandbError('not_found', 'no such project, or this key cannot see it');
    const nodes = project.runs?.edges.map((e) => e.node) ?? [];
    if (nodes.length === 0) throw new WandbError('no_run', 'the group has no runs');
    return splitGroup(nodes.map((node) => toGroupRun(node, (name) => runUrl(this.appUrl, entity, run.wandb_project, name))));
  }

  /** One RunSampledHistory request per W&B run, in parallel, one spec per key. */
  private async sampledSeries(client: GraphQLClient, charts: ChartedKeys, samples: number, ctx: LookupContext, budget: CallBudget): Promise<Series> {
    // Pre-filled so the keys keep a stable order (trainer first) whichever request ends first.
    const series: Series = new Map([...charts.byRun.values()].flatMap(({ keys }) => keys.map((k): [string, Point[]] => [k, []])));
    await Promise.all(
      [...charts.byRun.values()].map(async ({ run, keys }) => {
        const { project } = await client.query<SampledHistoryData>(
          RUN_SAMPLED_HISTORY,
          { project: ctx.project, entity: ctx.entity, name: run.name, specs: sampledHistorySpecs(keys, samples) },
          budget,
        );
        const perSpec = project?.run?.sampledHistory ?? [];
        keys.forEach((key, i) => series.set(key, seriesPoints(perSpec[i], key)));
      }),
    );
    return series;
  }
}

interface ChartedKeys {
  /** Per W&B run name: the run and the history keys to sample from it. */
  byRun: Map<string, { run: GroupRun; keys: string[] }>;
  /** Metric name (as in StatusMetrics) -> history key, for sparklines. */
  byMetric: Record<string, string>;
}

interface ChartedGroup {
  group: RunGroup;
  charts: ChartedKeys;
  series?: Series;
  historyError?: string;
}

/** Metric name -> its points, for the charted metrics that have any. */
function metricPoints(charts: ChartedKeys, series: Series): Record<string, Point[]> {
  const out: Record<string, Point[]> = {};
  for (const [metric, key] of Object.entries(charts.byMetric)) {
    const points = series.get(key) ?? [];
    if (points.length > 0) out[metric] = points;
  }
  return out;
}

/** The history keys worth sampling: the ones each run's summary shows it has logged. */
function chartedKeys(group: RunGroup, wandbName: string): ChartedKeys {
  const byRun: ChartedKeys['byRun'] = new Map();
  const byMetric: Record<string, string> = {};
  const add = (run: GroupRun, key: string): void => {
    const entry = byRun.get(run.name) ?? { run, keys: [] };
    byRun.set(run.name, entry);
    if (!entry.keys.includes(key)) entry.keys.push(key);
  };
  const { trainer } = group;
  if (trainer) {
    for (const [metric, key] of Object.entries(TRAINER_CHARTS)) {
      if (key in trainer.summary) {
        add(trainer, key);
        byMetric[metric] = key;
      }
    }
    if (TRAINER_LEARNING_RATE in trainer.summary) add(trainer, TRAINER_LEARNING_RATE);
  }
  for (const [metric, suffix] of Object.entries(ENV_CHARTS)) {
    const found = findEnvMetric(group, suffix, wandbName);
    if (found) {
      add(found.run, found.key);
      byMetric[metric] = found.key;
    }
  }
  return { byRun, byMetric };
}
