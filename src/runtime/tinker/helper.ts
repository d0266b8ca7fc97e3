/**
 * What Tinker itself knows, asked through its own SDK: python/tinker_api.py (its docstring is the
 * contract) run by RL_PYTHON, which must import `tinker` for a run to start anyway, so no second
 * client of Tinker's API is written here. One process per question: the arguments as JSON on
 * stdin, the key only in its allow-listed environment (never argv), one JSON line back, a
 * deadline of its own (the SDK retries a dead service for five minutes). Nothing here throws for
 * what Tinker or the helper answered: a failure is a TinkerFailure with its kind and a sentence.
 */
import { join } from 'node:path';
import type { z } from 'zod';
import { childEnv } from '../../core/childEnv.js';
import { PYTHON_HELPERS_DIR } from '../../core/files/paths.js';
import { loadExeca } from '../../core/onDemand.js';
import type { CoreServices } from '../../core/services.js';
import { tinkerSdkEnv } from './sdkEnv.js';

export const TINKER_API_SCRIPT = join(PYTHON_HELPERS_DIR, 'tinker_api.py');

/** The helper's error kinds, plus `no_key` (nothing asked) and `helper` (no usable answer came back). */
export type TinkerFailureKind = 'auth' | 'permission' | 'not_found' | 'bad_request' | 'conflict' | 'unavailable' | 'sdk_missing' | 'api_error' | 'internal' | 'usage' | 'no_key' | 'helper';

export interface TinkerFailure {
  kind: TinkerFailureKind;
  status: number | null;
  message: string;
}

export type TinkerAnswer<T> = { ok: true; value: T } | { ok: false; error: TinkerFailure };

/** What to say when a question got no answer, by kind: the cause and what to do. */
export function failureSentence(error: TinkerFailure): string {
  switch (error.kind) {
    case 'no_key':
      return 'TINKER_API_KEY is not set, so Tinker was not asked';
    case 'auth':
      return `Tinker refused TINKER_API_KEY (${error.message})`;
    case 'permission':
      return `the key lacks the permission (${error.message})`;
    case 'sdk_missing':
      return `RL_PYTHON cannot import Tinker's SDK (${error.message}); install tinker-atropos (or tinker) into it`;
    case 'unavailable':
      return `Tinker did not answer (${error.message})`;
    default:
      return `Tinker's SDK failed (${error.kind}${error.status !== null ? ` ${error.status}` : ''}: ${error.message})`;
  }
}

const failure = (kind: TinkerFailureKind, message: string, status: number | null = null): { ok: false; error: TinkerFailure } => ({ ok: false, error: { kind, status, message } });

function lastJsonLine(stdout: string): unknown {
  const line = stdout.trim().split('\n').at(-1) ?? '';
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

function errorOf(value: unknown): TinkerFailure | undefined {
  if (typeof value !== 'object' || value === null || !('error' in value)) return undefined;
  const e = (value as { error: unknown }).error;
  if (typeof e !== 'object' || e === null) return undefined;
  const { kind, status, message } = e as Record<string, unknown>;
  if (typeof kind !== 'string' || typeof message !== 'string') return undefined;
  return { kind: kind as TinkerFailureKind, status: typeof status === 'number' ? status : null, message };
}

export class TinkerApi {
  /** The logger is optional: the start's requirement checks ask without one. */
  constructor(private readonly core: Pick<CoreServices, 'settings' | 'redactor'> & { logger?: CoreServices['logger'] }) {}

  /**
   * `command` of python/tinker_api.py with `args`; the answer checked against `schema`.
   * `timeoutSeconds` bounds the whole question (the helper's own deadline, then a kill).
   */
  async ask<T>(command: string, args: Record<string, unknown>, schema: z.ZodType<T>, opts: { timeoutSeconds: number; signal?: AbortSignal }): Promise<TinkerAnswer<T>> {
    const { settings, redactor, logger } = this.core;
    if (!settings.secrets.tinkerApiKey) return failure('no_key', 'TINKER_API_KEY is not set');
    const { execa } = await loadExeca();
    const child = await execa(settings.python, ['-B', TINKER_API_SCRIPT, command], {
      env: childEnv(settings.processEnv, { PYTHONUNBUFFERED: '1', ...tinkerSdkEnv(settings) }),
      extendEnv: false,
      input: JSON.stringify({ ...args, timeout_seconds: opts.timeoutSeconds }),
      // The helper answers at its own deadline; this one is for a helper that cannot.
      timeout: (opts.timeoutSeconds + 5) * 1000,
      killSignal: 'SIGKILL',
      cancelSignal: opts.signal,
      maxBuffer: 32 * 1024 * 1024,
      reject: false,
    });
    if (child.isCanceled) return failure('unavailable', 'the call was cancelled');
    if (child.timedOut) return failure('unavailable', `python/tinker_api.py ${command} did not answer within ${opts.timeoutSeconds + 5} s`);
    if (child.code === 'ENOENT' || child.code === 'EACCES') return failure('sdk_missing', `cannot run RL_PYTHON (${settings.python}): ${child.code}`);
    const value = lastJsonLine(child.stdout);
    const error = errorOf(value);
    if (error) return { ok: false, error: { ...error, message: redactor.redact(error.message) } };
    if (child.exitCode === 0) {
      const parsed = schema.safeParse(value);
      if (parsed.success) return { ok: true, value: parsed.data };
      logger?.warn({ command, issues: parsed.error.issues.slice(0, 3) }, 'python/tinker_api.py answered in an unexpected shape');
      return failure('helper', `python/tinker_api.py ${command} answered in an unexpected shape`);
    }
    const lastLine = redactor.redact(child.stderr.trim().split('\n').at(-1) ?? '');
    return failure('helper', `python/tinker_api.py ${command} failed (${child.signal ?? `exit code ${child.exitCode}`})${lastLine ? `: ${lastLine}` : ''}`);
  }
}
