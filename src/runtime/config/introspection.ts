/**
 * The config fields of one environment, read by python/introspect.py in its own process: Hermes
 * imported environment code into the agent process and threw away what config_init() returned.
 * The helper imports the file the way a run does and reports the config_init() values;
 * when that fails (atroposlib or the environment's own dependencies missing, a hang) it falls back
 * to reading the source, and the answer says so with the import error.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod';
import { zString, zNumber, zBoolean } from '../../core/schemaLeaves.js';
import { staticFields, withKnownConstraints } from './baseEnvConfig.js';
import { runPythonHelper } from './pythonHelper.js';
import { UserError } from '../../core/errors.js';
import type { FieldInfo } from './fields.js';
import { SERVER_CONFIGS_SHAPES, type TinkerFacts } from '../environments/tinkerReadiness.js';
import type { Logger } from '../../core/logger.js';
import { PYTHON_HELPERS_DIR } from '../../core/files/paths.js';
import { type JsonValue } from '../../core/json.js';
import { type Settings } from '../../core/settings.js';

export const INTROSPECT_SCRIPT = join(PYTHON_HELPERS_DIR, 'introspect.py');

/** What the helper needs from a discovered environment. */
export interface EnvironmentRef {
  file_path: string;
  class_name: string;
  /** Discovery's reading of `env_config_cls`; a hint for the static fallback. */
  config_class?: string;
}

/** An environment file as it was when its fields were read: a different one may have other fields. */
export interface FileStamp {
  mtime_ms: number;
  size: number;
}

export function fileStamp(info: { mtimeMs: number; size: number }): FileStamp {
  return { mtime_ms: info.mtimeMs, size: info.size };
}

export interface Introspection {
  /** The file these fields were read from, stat'ed before reading it. */
  source: FileStamp;
  introspection: 'import' | 'static';
  /** Last line of the import (or config_init) error when the answer is static. */
  import_error?: string;
  config_class: string;
  fields: FieldInfo[];
  /** config_init() values (static: class defaults overlaid with config_init's literal arguments). */
  values: Record<string, JsonValue>;
  /** Read from the imported classes and config_init()'s value (import answers only). */
  tinker?: TinkerFacts;
  /** The files of the environment's own code the import answer was read from (bases, helper modules). */
  sources?: string[];
}

/** What one run of the helper reads; `describe` adds the stamp of the file it read. */
type Reading = Omit<Introspection, 'source'>;

const SCALAR = z.enum(['int', 'float', 'bool', 'str']);
/** A field as JSON, as python/introspect.py answers it (and the saved selection keeps it). */
export const FIELD_JSON = z
  .object({
    name: zString,
    type: zString,
    kind: z.union([SCALAR, z.enum(['enum', 'list', 'dict', 'any'])]),
    nullable: zBoolean,
    enum: z.array(z.union([zString, zNumber])).optional(),
    enum_names: z.array(zString).optional(),
    items: SCALAR.optional(),
    minimum: zNumber.optional(),
    maximum: zNumber.optional(),
    exclusiveMinimum: zNumber.optional(),
    exclusiveMaximum: zNumber.optional(),
    default: z.json(),
    description: zString,
  })
  .transform(({ enum_names, ...rest }): FieldInfo => (enum_names ? { ...rest, enumNames: enum_names } : rest));

/** FIELD_JSON's input: what it reads back as `field`. */
export function fieldJson({ enumNames, ...rest }: FieldInfo): z.input<typeof FIELD_JSON> {
  return enumNames ? { ...rest, enum_names: enumNames } : rest;
}

const HELPER_ANSWER = z.object({
  introspection: z.enum(['import', 'static']),
  import_error: zString.nullish(),
  config_class: zString,
  fields: z.array(FIELD_JSON),
  values: z.record(zString, z.json()),
  managed_server: zBoolean.optional(),
  server_configs: z.enum(SERVER_CONFIGS_SHAPES).optional(),
  sources: z.array(zString).optional(),
});
type HelperAnswer = z.output<typeof HELPER_ANSWER>;

/** The helper could not answer at all (not an import failure: those come back as static answers). */
class HelperFailure extends Error {
  constructor(
    readonly reason: string,
    readonly spawnFailed = false,
  ) {
    super(reason);
  }
}

export class Introspector {
  /**
   * Import answers only: a static one depends on what is installed, not on the file, so it is
   * retried. Valid while the environment's file and the other files of its code the answer was
   * read from are unchanged: porting a helper module to managed_server changes the answer.
   */
  private readonly cache = new Map<string, { stamp: string; sources: string[]; result: Introspection }>();

  constructor(
    private readonly settings: Settings,
    private readonly logger: Logger,
  ) {}

  async describe(env: EnvironmentRef, signal?: AbortSignal): Promise<Introspection> {
    const info = await stat(env.file_path).catch(() => undefined);
    if (!info?.isFile()) {
      throw new UserError(`Environment file ${env.file_path} no longer exists. Run rl_list_environments to see what is available now.`);
    }
    const key = `${env.file_path}\0${env.class_name}`;
    const stamp = `${info.mtimeMs}:${info.size}:${this.settings.python}`;
    const hit = this.cache.get(key);
    if (hit !== undefined && hit.stamp === stamp + (await filesStamp(hit.sources))) return hit.result;

    const result = { source: fileStamp(info), ...(await this.introspect(env, signal)) };
    if (result.introspection === 'import') {
      const sources = result.sources ?? [];
      this.cache.set(key, { stamp: stamp + (await filesStamp(sources)), sources, result });
    } else this.cache.delete(key);
    return result;
  }

  private async introspect(env: EnvironmentRef, signal?: AbortSignal): Promise<Reading> {
    let reason: string;
    try {
      return toIntrospection(await this.runHelper(env, undefined, signal));
    } catch (err) {
      if (!(err instanceof HelperFailure)) throw err;
      reason = err.reason;
      this.logger.warn({ file: env.file_path, reason }, 'introspection helper failed; reading the source instead');
      if (err.spawnFailed) return knownFieldsOnly(env, reason);
    }
    // A hang or crash while importing: the source can still be read without running it.
    try {
      return toIntrospection(await this.runHelper(env, reason, signal));
    } catch (err) {
      if (!(err instanceof HelperFailure)) throw err;
      return knownFieldsOnly(env, reason);
    }
  }

  private async runHelper(env: EnvironmentRef, staticReason: string | undefined, signal?: AbortSignal): Promise<HelperAnswer> {
    const args = ['-B', INTROSPECT_SCRIPT, '--file', env.file_path, '--class', env.class_name, '--root', this.settings.root];
    if (env.config_class) args.push('--config-class', env.config_class);
    if (staticReason !== undefined) args.push('--static-only', staticReason);
    const timeoutSeconds = this.settings.introspectTimeoutSeconds;
    const child = await runPythonHelper(this.settings, { args, timeoutSeconds, signal });
    if (child.isCanceled) throw new Error('introspection cancelled by the client');
    if (child.timedOut) throw new HelperFailure(`importing the environment did not finish within ${timeoutSeconds} s (RL_INTROSPECT_TIMEOUT_SECONDS)`);
    if (child.code === 'ENOENT' || child.code === 'EACCES') {
      throw new HelperFailure(`cannot run RL_PYTHON (${this.settings.python}): ${child.code}`, true);
    }
    const parsed = child.exitCode === 0 ? HELPER_ANSWER.safeParse(safeJson(child.stdout)) : undefined;
    if (parsed?.success) {
      if (parsed.data.introspection === 'static') this.logger.debug({ file: env.file_path, stderr: child.stderr.slice(-4000) }, 'environment import failed');
      return parsed.data;
    }
    const lastLine = child.stderr.trim().split('\n').at(-1);
    throw new HelperFailure(`the introspection helper failed (${child.signal ?? `exit code ${child.exitCode}`})${lastLine ? `: ${lastLine}` : ''}`);
  }
}

/** (mtime, size) of each file, so that a change to any of them is seen. */
async function filesStamp(paths: readonly string[]): Promise<string> {
  const stats = await Promise.all(paths.map((p) => stat(p).catch(() => undefined)));
  return stats.map((s) => (s ? `|${s.mtimeMs}:${s.size}` : '|gone')).join('');
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function toIntrospection(answer: HelperAnswer): Reading {
  if (answer.introspection === 'import') {
    const { managed_server, server_configs, sources } = answer;
    return {
      introspection: 'import',
      config_class: answer.config_class,
      fields: withKnownConstraints(answer.fields),
      values: answer.values,
      ...(managed_server !== undefined && server_configs !== undefined ? { tinker: { managed_server, server_configs } } : {}),
      ...(sources !== undefined ? { sources } : {}),
    };
  }
  const fields = withKnownConstraints(staticFields(answer.fields));
  return {
    introspection: 'static',
    import_error: answer.import_error ?? 'the environment could not be imported',
    config_class: answer.config_class,
    fields,
    values: Object.fromEntries(fields.map((f) => [f.name, Object.hasOwn(answer.values, f.name) ? answer.values[f.name]! : f.default])),
  };
}

function knownFieldsOnly(env: EnvironmentRef, reason: string): Reading {
  return toIntrospection({ introspection: 'static', import_error: reason, config_class: env.config_class ?? 'BaseEnvConfig', fields: [], values: {} });
}
