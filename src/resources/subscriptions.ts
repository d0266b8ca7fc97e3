/**
 * resources/subscribe and resources/unsubscribe: each subscribed URI gets a watch on what it
 * shows (a log's size, a run's status) and a `notifications/resources/updated` when that changes,
 * at most about once a second (the watcher's throttle). McpServer handles neither request nor
 * declares the capability itself; index.ts wires this class in.
 */
import { UriTemplate, type McpServer } from '@modelcontextprotocol/server';
import { UserError } from '../core/errors.js';
import type { Runtime } from '../runtime/wiring/runtime.js';
import { NotFoundError } from '../core/files/safePath.js';
import type { ChangeWatcher } from '../core/files/watch.js';
import type { ResourceKind } from './kind.js';

/** Bounds the watches one client can hold open. */
export const MAX_SUBSCRIPTIONS = 200;

export class Subscriptions {
  /** By normalized URI; `uri` is the spelling the client subscribed with, used in notifications. */
  private readonly active = new Map<string, { uri: string; stop: () => void }>();
  private readonly templates: { kind: ResourceKind; template: UriTemplate }[];
  private closed = false;

  constructor(
    private readonly server: McpServer,
    private readonly runtime: Runtime,
    private readonly watcher: ChangeWatcher,
    kinds: readonly ResourceKind[],
  ) {
    this.templates = kinds.map((kind) => ({ kind, template: new UriTemplate(kind.template) }));
  }

  async subscribe(uri: string): Promise<void> {
    const url = parseUri(uri);
    if (this.closed || this.active.has(url.href)) return;
    if (this.active.size >= MAX_SUBSCRIPTIONS) {
      throw new UserError(`Too many subscriptions (${MAX_SUBSCRIPTIONS}): unsubscribe from resources you no longer follow.`, { subscribed: this.active.size });
    }
    for (const { kind, template } of this.templates) {
      const vars = template.match(url.href);
      if (!vars) continue;
      // Held before the check below awaits the filesystem, so an unsubscribe (or close) that arrives meanwhile removes it.
      const entry = { uri, stop: (): void => undefined };
      this.active.set(url.href, entry);
      let target: Awaited<ReturnType<ResourceKind['watch']>>;
      try {
        target = await kind.watch(vars);
      } catch (err) {
        if (this.active.get(url.href) === entry) this.active.delete(url.href);
        throw err;
      }
      if (this.active.get(url.href) === entry) entry.stop = this.watcher.watch({ ...target, onChange: () => this.notify(uri) });
      return;
    }
    throw new NotFoundError(`No resource matches ${url.href}: resources/templates/list shows the rl:// URI forms this server serves.`);
  }

  unsubscribe(uri: string): void {
    const key = parseUri(uri).href;
    this.active.get(key)?.stop();
    this.active.delete(key);
  }

  get size(): number {
    return this.active.size;
  }

  private notify(uri: string): void {
    if (!this.server.isConnected()) return;
    this.server.server.sendResourceUpdated({ uri }).catch((err: unknown) => this.runtime.logger.debug({ err, uri }, 'resource update not sent'));
  }

  close(): void {
    this.closed = true;
    for (const { stop } of this.active.values()) stop();
    this.active.clear();
  }
}

function parseUri(uri: string): URL {
  try {
    return new URL(uri);
  } catch {
    throw new UserError(`'${uri.slice(0, 200)}' is not a URI: resources are named rl://... (see resources/templates/list).`);
  }
}
