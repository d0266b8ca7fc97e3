/**
 * The MCP resources: run records, configs and logs, environment sources and
 * inference-test output, each with list, completion, read and subscription. What is not MCP
 * (path safety, run directories, watching) lives in the layers below (src/core, src/runtime).
 */
import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/server';
import { mkdir } from 'node:fs/promises';
import { RunFiles } from '../runtime/runs/registry/runFiles.js';
import type { Runtime } from '../runtime/wiring/runtime.js';
import { ChangeWatcher, type WatchOptions } from '../core/files/watch.js';
import { environmentSourceResource } from './environments.js';
import { inferenceTestFileResource } from './testFiles.js';
import { evaluationFileResource } from './evaluations.js';
import { answering, type ResourceContext, type ResourceKind } from './kind.js';
import { runLogResources } from './logs.js';
import { runConfigResource, runRecordResource } from './runs.js';
import { Subscriptions } from './subscriptions.js';

/** What registerResources leaves running: closed with the server or the runtime. */
export interface ResourceWatches {
  readonly subscriptions: number;
  readonly watchedDirectories: number;
  /** A subscription not made by resources/subscribe (a 2026-07-28 subscriptions/listen: src/server/sessionTap.ts). */
  subscribe(uri: string): Promise<void>;
  unsubscribe(uri: string): void;
  close(): void;
}

/**
 * Registers every resource and the subscription handlers. The server must declare
 * `capabilities.resources = {subscribe: true, listChanged: true}` (McpServer does not).
 */
export function registerResources(server: McpServer, runtime: Runtime, watchOptions: Partial<WatchOptions> = {}): ResourceWatches {
  const ctx: ResourceContext = { runtime, runs: new RunFiles(runtime.settings.home) };
  const kinds: ResourceKind[] = [
    runRecordResource(ctx),
    runConfigResource(ctx),
    ...runLogResources(ctx),
    environmentSourceResource(ctx),
    inferenceTestFileResource(ctx),
    evaluationFileResource(ctx),
  ];
  const watcher = new ChangeWatcher(runtime.logger, watchOptions);
  const subscriptions = new Subscriptions(server, runtime, watcher, kinds);
  const watchRunList = runListWatch(server, ctx, watcher);
  for (const kind of kinds) registerKind(server, runtime, kind, watchRunList);
  handleSubscriptions(server, runtime, subscriptions);

  const close = (): void => {
    subscriptions.close();
    watcher.close();
  };
  closeWithServer(server, runtime, close);
  return {
    get subscriptions() {
      return subscriptions.size;
    },
    get watchedDirectories() {
      return watcher.watchedDirectories;
    },
    subscribe: (uri) => subscriptions.subscribe(uri),
    unsubscribe: (uri) => subscriptions.unsubscribe(uri),
    close,
  };
}

/**
 * New runs change resources/list; the watch starts with the first listing (a client that never
 * lists has no use for list_changed). The function returned starts it, once.
 */
function runListWatch(server: McpServer, ctx: ResourceContext, watcher: ChangeWatcher): () => Promise<void> {
  let started: Promise<void> | undefined;
  return () =>
    (started ??= mkdir(ctx.runs.root, { recursive: true }).then(() => {
      watcher.watch({
        dir: ctx.runs.root,
        signature: async () => (await ctx.runs.ids()).sort().join(','),
        onChange: () => server.sendResourceListChanged(),
      });
    }));
}

function registerKind(server: McpServer, runtime: Runtime, kind: ResourceKind, beforeList: () => Promise<void>): void {
  const list = kind.list;
  const template = new ResourceTemplate(kind.template, {
    list: list && (() => answering(runtime, kind.template, async () => {
      await beforeList();
      return { resources: await list() };
    })),
    complete: kind.complete,
  });
  server.registerResource(kind.name, template, { title: kind.title, description: kind.description, mimeType: kind.mimeType }, (uri, vars) =>
    answering(runtime, uri.href, () => kind.read(uri, vars)),
  );
}

function handleSubscriptions(server: McpServer, runtime: Runtime, subscriptions: Subscriptions): void {
  server.server.setRequestHandler('resources/subscribe', (request) =>
    answering(runtime, request.params.uri, async () => {
      await subscriptions.subscribe(request.params.uri);
      return {};
    }),
  );
  server.server.setRequestHandler('resources/unsubscribe', (request) =>
    answering(runtime, request.params.uri, async () => {
      subscriptions.unsubscribe(request.params.uri);
      return {};
    }),
  );
}

/** The watches end with the runtime or with the connection, whichever closes first. */
function closeWithServer(server: McpServer, runtime: Runtime, close: () => void): void {
  runtime.onClose(close);
  const previousOnClose = server.server.onclose;
  server.server.onclose = () => {
    previousOnClose?.();
    close();
  };
}
