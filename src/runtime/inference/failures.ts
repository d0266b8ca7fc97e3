/**
 * Why a model of an inference test produced nothing usable, said as what to do about it. The
 * endpoint's own answer (401, 404, 500) sits in the log above the `tenacity.RetryError` that ends
 * the process; groups atroposlib drops because every completion scored the same are the
 * environment and model agreeing too well (or too badly), not an endpoint error.
 */
import { envSignalOf, firstCause } from '../runs/atropos/logSignals.js';
import type { KeySource } from './routing.js';

export const FAILURE_KINDS = ['authentication', 'model_not_found', 'rate_limited', 'endpoint_error', 'unreachable', 'no_learning_signal', 'crashed'] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

export interface FailureContext {
  baseUrl: string;
  modelId: string;
  /** How the process ended, e.g. `Process exited with code 1`. */
  ended: string;
  /** The last lines of the model's log (redacted). */
  logLines: readonly string[];
  /** Whose key the model was sampled with: a refusal names it (Tinker's, or the variable api_key_env named). */
  key?: KeySource;
}

/** Where to look when the endpoint refused the key: the variable that holds it, by name. */
function keyToCheck(ctx: FailureContext): string {
  if (ctx.key?.kind === 'tinker') return `Tinker refused the key; check TINKER_API_KEY in the server's environment, and TINKER_OAI_BASE_URL (now ${ctx.baseUrl})`;
  return `the endpoint refused the key; check ${ctx.key ? `${ctx.key.name}, ` : ''}the variable named by api_key_env`;
}

const HTTP_STATUS = /\b(?:Error code|status(?: code)?):? (\d{3})\b/i;

function byStatus(status: number, ctx: FailureContext): { kind: FailureKind; what: string } {
  if (status === 401 || status === 403) return { kind: 'authentication', what: `authentication failed (HTTP ${status}) at ${ctx.baseUrl}: ${keyToCheck(ctx)}` };
  if (status === 404) return { kind: 'model_not_found', what: `not found (HTTP 404) at ${ctx.baseUrl}: the endpoint does not serve model '${ctx.modelId}', or base_url is wrong` };
  if (status === 429) return { kind: 'rate_limited', what: `rate limited (HTTP 429) at ${ctx.baseUrl}: wait, or test fewer models at once` };
  return { kind: 'endpoint_error', what: `the endpoint answered HTTP ${status} at ${ctx.baseUrl}` };
}

/** A process that ended with an error: the endpoint's answer when the log has one, else the first cause. */
export function classifyCrash(ctx: FailureContext): { kind: FailureKind; error: string } {
  const cause = firstCause(ctx.logLines);
  const status = cause === undefined ? undefined : HTTP_STATUS.exec(cause)?.[1];
  if (cause !== undefined && status !== undefined) {
    const { kind, what } = byStatus(Number(status), ctx);
    return { kind, error: `${ctx.ended}: ${what}. Cause: ${cause}` };
  }
  const connection = ctx.logLines.find((l) => envSignalOf(l.trim()) === 'connection_errors');
  if (connection !== undefined) {
    const where = `check base_url (${ctx.baseUrl}); an environment whose config_init returns a single server config sends its requests to localhost:9004-9007 instead`;
    return { kind: 'unreachable', error: `${ctx.ended}: cannot connect to the model server (${connection.trim().slice(0, 200)}): ${where}.` };
  }
  return { kind: 'crashed', error: `${ctx.ended}${cause ? `: ${cause}` : ''}. See stderr_tail and log_file.` };
}

/**
 * A process stopped after `failedGroups` "Failed to process group" lines. With no endpoint error
 * in its log, the environment got completions and threw every group away.
 */
export function classifyDroppedGroups(ctx: FailureContext, failedGroups: number): { kind: FailureKind; error: string } {
  const endpoint = classifyCrash(ctx);
  if (endpoint.kind !== 'crashed') return endpoint;
  return {
    kind: 'no_learning_signal',
    error:
      `${ctx.ended}: no learning signal. The environment dropped all ${failedGroups} groups it got from this model ("Failed to process group, retrying..."). ` +
      'This happens when every completion of a group scores the same (the model is always right, or always wrong, on these items) or its answers cannot be parsed: ' +
      'GRPO learns nothing from such groups. Try a model nearer the task\'s difficulty, or other environment settings. See log_file.',
  };
}

/**
 * Groups written, but none with a signal: every group's completions scored the same. atroposlib's
 * `process` keeps such groups (it turns ensure_scores_are_not_same off), and environments that keep
 * them in training too (tinker-atropos' gsm8k_tinker) leave the trainer skipping them ("Skipped N
 * groups with zero advantages", "Got 0 Datum objects"). The model ran: a warning, not an error.
 */
export function equalScores(groups: readonly (readonly number[])[]): { kind: FailureKind; warning: string } | undefined {
  const scored = groups.filter((g) => g.length > 0);
  if (scored.length === 0 || scored.some((g) => g.some((s) => s !== g[0]))) return undefined;
  const values = [...new Set(scored.map((g) => g[0]!))].sort((a, b) => b - a).map((v) => `all ${v}`);
  const which = scored.length === 1 ? 'the one group' : `every one of the ${scored.length} groups`;
  return {
    kind: 'no_learning_signal',
    warning:
      `No learning signal: ${which} this model produced scored the same for all its completions (${values.join(' or ')}), so every advantage is zero. ` +
      'Training on such groups learns nothing while the sampling is paid for: the trainer skips them ("Skipped N groups with zero advantages"). ' +
      'Try a model nearer the task\'s difficulty, or a larger group_size.',
  };
}
