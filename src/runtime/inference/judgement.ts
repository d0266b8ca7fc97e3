/**
 * What one model of an inference test comes to once its process ended: why it failed (failures.ts),
 * or its scores, its tokens per rollout (from its output, or from the wire when atroposlib wrote
 * placeholders) and whether its groups carry any learning signal.
 */
import { tailLines } from '../../core/files/logTail.js';
import { LengthCounter } from '../cost/lengths.js';
import { classifyCrash, classifyDroppedGroups, equalScores, type FailureContext, type FailureKind } from './failures.js';
import type { ModelProcessOutcome } from './modelProcess.js';
import type { KeySource } from './routing.js';
import { readGroupScores, scoreGroups } from './scoring.js';
import type { ModelReport, ModelState } from './testReport.js';
import { answered, promptChars, readExchanges } from './wire/exchanges.js';
import { rawScores, signalStats } from '../readiness/verdicts/signal.js';
import type { Score } from '../readiness/verdicts/verdict.js';

/** How far up a failed model's log the cause is looked for. */
const CAUSE_SEARCH_LINES = 300;

export type ReportBase = Pick<ModelReport, 'model' | 'name' | 'scale' | 'output_file' | 'log_file' | 'endpoint'>;

export interface JudgementContext {
  /** The test's base_url (a model's own endpoint is in `base.endpoint`). */
  baseUrl: string;
  python: string;
  timeoutSeconds: number;
  cancelReason?: string;
  /** Whose key the model was sampled with: a refusal names the variable that holds it. */
  key?: KeySource;
}

export interface Judged {
  report: ModelReport;
  state: ModelState;
}

export const seconds = (ms: number): number => Math.round(ms / 100) / 10;

async function failureContext(ctx: JudgementContext, base: ReportBase, ended: string): Promise<FailureContext> {
  // The cause sits above the traceback's last line, often beyond the stderr tail kept in memory.
  const logLines = await tailLines(base.log_file, CAUSE_SEARCH_LINES);
  return { baseUrl: base.endpoint ?? ctx.baseUrl, modelId: base.model, ended, logLines, ...(ctx.key ? { key: ctx.key } : {}) };
}

function failureOf(base: ReportBase, outcome: ModelProcessOutcome, state: ModelState, error: string, extra: Partial<ModelReport> = {}): Judged {
  return {
    state,
    report: {
      ...base,
      ...scoreGroups([]),
      duration_seconds: seconds(outcome.durationMs),
      error,
      ...(outcome.stderrTail ? { stderr_tail: outcome.stderrTail } : {}),
      ...(outcome.spawnError === undefined && outcome.stopReason === undefined ? { exit_code: outcome.exitCode } : {}),
      ...extra,
    },
  };
}

/** Why a process that did not finish cleanly failed; undefined when it did. */
async function failed(ctx: JudgementContext, base: ReportBase, outcome: ModelProcessOutcome): Promise<Judged | undefined> {
  const failure = (state: ModelState, error: string, extra: Partial<ModelReport> = {}): Judged => failureOf(base, outcome, state, error, extra);
  if (outcome.spawnError !== undefined) return failure('failed', `Could not start ${ctx.python}: ${outcome.spawnError}. Check RL_PYTHON.`);
  switch (outcome.stopReason) {
    case 'timeout':
      return failure('timed_out', `Timed out after ${ctx.timeoutSeconds} s; the process group was killed. See log_file.`, { timed_out: true });
    case 'cancelled':
      return failure('cancelled', `Cancelled: ${ctx.cancelReason ?? 'stopped'}`);
    case 'gave_up': {
      const ended = `Stopped after ${outcome.failedGroups} failed groups (atroposlib would retry until the timeout)`;
      const { kind, error } = classifyDroppedGroups(await failureContext(ctx, base, ended), outcome.failedGroups);
      return failure('failed', error, { error_kind: kind });
    }
  }
  if (outcome.exitCode === 0) return undefined;
  const ended = outcome.signal ? `Process killed by ${outcome.signal}` : `Process exited with code ${outcome.exitCode}`;
  const { kind, error } = classifyCrash(await failureContext(ctx, base, ended));
  return failure('failed', error, { error_kind: kind });
}

/** `collect` (verifiers' eval) writes the groups file from what the process saved, or says why it cannot. */
export async function judgeModel(
  ctx: JudgementContext,
  base: ReportBase,
  outcome: ModelProcessOutcome,
  wireFile: string,
  collect?: () => Promise<{ kind: FailureKind; error: string } | undefined>,
): Promise<Judged> {
  const failure = await failed(ctx, base, outcome);
  if (failure) return failure;
  const collected = await collect?.();
  if (collected !== undefined) return failureOf(base, outcome, 'failed', collected.error, { error_kind: collected.kind });
  const noGroups = (error: string): Judged => failureOf(base, outcome, 'failed', error);
  const lengths = new LengthCounter();
  // Scores as written, None and NaN kept: counted apart from zeros in `signal`.
  const raw: Score[][] = [];
  const groups = await readGroupScores(base.output_file, (group) => {
    lengths.add(group);
    raw.push(rawScores(group));
  });
  if (groups === undefined) return noGroups(`Output file not created: ${base.output_file}`);
  if (groups.length === 0) return noGroups('The process finished but wrote no group: every group was skipped or invalid. See log_file.');
  for (const exchange of answered(await readExchanges(wireFile))) lengths.addExchange({ promptChars: promptChars(exchange), completions: exchange.choices, usage: exchange.usage });
  const rollout_tokens = lengths.result();
  const signal = equalScores(groups);
  const { model: _model, ...shares } = signalStats({ model: base.model, groups: raw });
  return {
    state: 'succeeded',
    report: { ...base, ...scoreGroups(groups), signal: shares, duration_seconds: seconds(outcome.durationMs), ...(rollout_tokens ? { rollout_tokens } : {}), ...(signal ? { error_kind: signal.kind, warning: signal.warning } : {}) },
  };
}
