/**
 * verifiers' own evaluation, `python -m verifiers.scripts.eval` (what `vf-eval` runs), of one
 * model of an OpenAI-compatible endpoint on a verifiers environment: `-n` examples x `-r`
 * rollouts, saved (`-s`) as results.jsonl under `outputs/evals/<env>--<model>/<id>/` of its
 * working directory. The key travels in the child's environment under a variable named with
 * `-k`, never in argv. Used by rl_test_inference (any endpoint) and by rl_evaluate of a cookbook
 * run (Tinker's OpenAI-compatible endpoint, where `tinker://` sampler paths are models).
 */
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { childEnv } from '../../core/childEnv.js';
import type { JsonValue } from '../../core/json.js';
import type { Settings } from '../../core/settings.js';
import type { FailureKind } from './failures.js';

/** The variable the key is handed over in (`-k` names it; verifiers reads it). */
export const VF_EVAL_KEY_VAR = 'RL_MCP_VF_EVAL_API_KEY';

export interface VfEvalOptions {
  vfEnvId: string;
  envArgs?: Record<string, JsonValue>;
  model: string;
  baseUrl: string;
  numExamples: number;
  rolloutsPerExample: number;
  maxTokens?: number;
}

export function vfEvalCommand(settings: Settings, opts: VfEvalOptions): { file: string; args: string[] } {
  const args = ['-m', 'verifiers.scripts.eval', opts.vfEnvId, '-m', opts.model, '-b', opts.baseUrl, '-k', VF_EVAL_KEY_VAR];
  args.push('-n', String(opts.numExamples), '-r', String(opts.rolloutsPerExample), '-s');
  if (opts.maxTokens !== undefined) args.push('-t', String(opts.maxTokens));
  if (opts.envArgs !== undefined && Object.keys(opts.envArgs).length > 0) args.push('-a', JSON.stringify(opts.envArgs));
  return { file: settings.python, args };
}

/** The child's environment: the allow-list, the key under VF_EVAL_KEY_VAR, nothing else secret. */
export function vfEvalEnv(settings: Settings, key: string): Record<string, string> {
  return childEnv(settings.processEnv, { [VF_EVAL_KEY_VAR]: key, PYTHONUNBUFFERED: '1' });
}

export interface VfRow {
  example_id: number;
  reward: number;
  error: string | null;
  prompt: unknown;
  completion: unknown;
}

/** results.jsonl of the newest saved evaluation under `workDir`, or undefined when none was saved. */
export async function findVfResults(workDir: string): Promise<string | undefined> {
  const evals = join(workDir, 'outputs', 'evals');
  const found: { path: string; mtime: number }[] = [];
  for (const run of await readdir(evals).catch(() => [] as string[])) {
    for (const id of await readdir(join(evals, run)).catch(() => [] as string[])) {
      const path = join(evals, run, id, 'results.jsonl');
      const info = await stat(path).catch(() => undefined);
      if (info?.isFile()) found.push({ path, mtime: info.mtimeMs });
    }
  }
  return found.sort((a, b) => b.mtime - a.mtime)[0]?.path;
}

/** One results.jsonl row as read; undefined for a line that is not one. */
export function vfRow(value: Record<string, unknown>): VfRow | undefined {
  if (typeof value.example_id !== 'number') return undefined;
  const reward = typeof value.reward === 'number' && Number.isFinite(value.reward) ? value.reward : 0;
  return { example_id: value.example_id, reward, error: typeof value.error === 'string' ? value.error : null, prompt: value.prompt, completion: value.completion };
}

/** The rows grouped by example, in example order: one group of rollouts per example. */
export function byExample(rows: readonly VfRow[]): VfRow[][] {
  const groups = new Map<number, VfRow[]>();
  for (const row of rows) groups.set(row.example_id, [...(groups.get(row.example_id) ?? []), row]);
  return [...groups.entries()].sort((a, b) => a[0] - b[0]).map(([, g]) => g);
}

const ERROR_KINDS: [RegExp, FailureKind, string][] = [
  [/AuthenticationError|PermissionDenied|\b401\b|\b403\b/, 'authentication', 'the endpoint refused the key'],
  [/NotFoundError|\b404\b/, 'model_not_found', 'the endpoint does not serve this model, or base_url is wrong'],
  [/RateLimit|\b429\b/, 'rate_limited', 'the endpoint rate-limits: wait, or evaluate fewer models at once'],
  [/APIConnectionError|ConnectError|Connection refused|Cannot connect/, 'unreachable', 'the endpoint cannot be reached: check base_url'],
];

/**
 * When every rollout failed at the endpoint (verifiers records the error per rollout and exits
 * 0), why, as an inference test or evaluation reports it; undefined when some rollout worked.
 */
export function vfRowsFailure(rows: readonly VfRow[], ctx: { baseUrl: string; model: string }): { kind: FailureKind; error: string } | undefined {
  if (rows.length === 0 || rows.some((r) => r.error === null)) return undefined;
  const first = rows[0]!.error!.slice(0, 300);
  const [, kind, what] = ERROR_KINDS.find(([re]) => re.test(first)) ?? [undefined, 'endpoint_error' as FailureKind, 'the endpoint answered with an error'];
  return { kind, error: `Every rollout of '${ctx.model}' at ${ctx.baseUrl} failed: ${what}. verifiers recorded: ${first}` };
}

/** Every row of `path`; undefined when it cannot be read. */
async function readRows(path: string): Promise<VfRow[] | undefined> {
  try {
    return (await readFile(path, 'utf8')).split('\n').flatMap((line) => {
      try {
        const row = line.trim() === '' ? undefined : vfRow(JSON.parse(line) as Record<string, unknown>);
        return row ? [row] : [];
      } catch {
        return [];
      }
    });
  } catch {
    return undefined;
  }
}

/** The saved rows under `workDir`, or why there are none usable. */
export async function vfResults(workDir: string, ctx: { baseUrl: string; model: string }): Promise<{ rows: VfRow[] } | { kind: FailureKind; error: string }> {
  const path = await findVfResults(workDir);
  const rows = path === undefined ? undefined : await readRows(path);
  if (rows === undefined || rows.length === 0) return { kind: 'crashed', error: "verifiers' eval saved no results (results.jsonl). See log_file." };
  return vfRowsFailure(rows, ctx) ?? { rows };
}

/**
 * The saved results written as `process` groups (one line per example: its rollouts' `scores`
 * and `messages`), the file the test reads and rl_get_rollouts serves; or why there are none.
 */
export async function vfGroupsFile(workDir: string, outputFile: string, ctx: { baseUrl: string; model: string }): Promise<{ kind: FailureKind; error: string } | undefined> {
  const found = await vfResults(workDir, ctx);
  if (!('rows' in found)) return found;
  const message = (m: unknown) => (Array.isArray(m) ? m : [{ role: 'user', content: messagesText(m) }]);
  const lines = byExample(found.rows).map((group) => JSON.stringify({ scores: group.map((r) => r.reward), messages: group.map((r) => [...message(r.prompt), ...message(r.completion)]) }));
  await writeFile(outputFile, `${lines.join('\n')}\n`);
  return undefined;
}

/** A message list (or text) as one readable text. */
export function messagesText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) return value === undefined || value === null ? '' : JSON.stringify(value);
  return value.map((m: { role?: unknown; content?: unknown }) => `[${String(m?.role ?? '')}] ${typeof m?.content === 'string' ? m.content : JSON.stringify(m?.content ?? '')}`).join('\n');
}
