/**
 * What each kind of resource provides to the registry (index.ts): its template, how to list,
 * complete, read and watch it. Errors a client can act on are UserErrors (NotFoundError when
 * something is missing); `answering` turns them into JSON-RPC errors carrying the hints.
 */
import { ProtocolError, ProtocolErrorCode, type ReadResourceResult, type Resource, type Variables } from '@modelcontextprotocol/server';
import { UserError } from '../core/errors.js';
import type { RunFiles } from '../runtime/runs/registry/runFiles.js';
import type { Runtime } from '../runtime/wiring/runtime.js';
import type { WatchSpec } from '../core/files/watch.js';

export interface ResourceContext {
  runtime: Runtime;
  runs: RunFiles;
}

export interface ResourceKind {
  name: string;
  template: string;
  title: string;
  description: string;
  mimeType: string;
  list?(): Promise<Resource[]>;
  complete?: Record<string, (value: string) => Promise<string[]>>;
  read(uri: URL, vars: Variables): Promise<ReadResourceResult>;
  /** What a subscription to the URI watches: validated like a read, but the file need not exist yet. */
  watch(vars: Variables): Promise<Omit<WatchSpec, 'onChange'>>;
}

/**
 * A template variable's raw value. `{var}` and `{+var}` match up to the end of the URI, so a
 * query or fragment (parsed separately into the URL) is cut off here.
 */
export function variable(vars: Variables, name: string): string {
  const value = vars[name];
  return (Array.isArray(value) ? value.join(',') : (value ?? '')).split(/[?#]/, 1)[0]!;
}

export async function answering<T>(runtime: Runtime, uri: string, handle: () => Promise<T>): Promise<T> {
  try {
    return await handle();
  } catch (err) {
    // A missing resource (NotFoundError) too: "Resource not found" is -32602 with the URI in its data
    // in the 2026-07-28 specification, and the SDK sends 2025 clients that code as well (it encodes
    // their -32002 as -32602); their specification has clients accept either.
    if (err instanceof UserError) throw new ProtocolError(ProtocolErrorCode.InvalidParams, err.message, { uri, ...err.hints });
    runtime.logger.error({ err, uri }, 'resource request failed');
    throw new ProtocolError(ProtocolErrorCode.InternalError, `Internal error serving ${uri}: ${err instanceof Error ? err.message : String(err)}. The server is still running; details are in its server.log.`);
  }
}

/** Prefix completion over candidate values (the SDK keeps the first 100). */
export function completeFrom(values: Iterable<string>, prefix: string): string[] {
  return [...values].filter((v) => v.startsWith(prefix));
}
