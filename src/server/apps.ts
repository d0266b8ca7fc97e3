/**
 * MCP Apps (the `io.modelcontextprotocol/ui` extension, through `@modelcontextprotocol/ext-apps`'s
 * server helpers): the dashboard view as a `ui://` resource, the `_meta.ui` that links a tool to it,
 * and which tools a client is shown. A host that renders Apps reads the resource and shows it beside
 * the tool's answer; any other client ignores `_meta` and reads the same text answer as before. An
 * app-only tool (visibility ["app"]) is listed only to clients that declared the extension (at
 * `initialize`, or on the request itself in 2026-07-28): a host that renders Apps hides it from its
 * model, a client that does not would show it to its model for nothing. The tools are not registered
 * with the helpers' `registerAppTool` (it wraps `McpServer.registerTool`, which lists every tool to
 * every client; src/tools/registry.ts lists them per client), so `toolUiMeta` writes the same two
 * keys it would. See
 * docs/architecture.md, "Dashboard".
 */
import { readFile } from 'node:fs/promises';
import type { ClientCapabilities, McpServer, Tool } from '@modelcontextprotocol/server';
import { getUiCapability, registerAppResource, RESOURCE_MIME_TYPE, RESOURCE_URI_META_KEY } from '@modelcontextprotocol/ext-apps/server';
import type { McpUiToolMeta } from '@modelcontextprotocol/ext-apps';
import type { Runtime } from '../runtime/wiring/runtime.js';
import { DASHBOARD_HTML } from '../core/files/paths.js';
import { DASHBOARD_URI } from '../core/resourceUris.js';

/** A tool's link to a view; `visibility` defaults to ["model", "app"]. */
export type ToolUi = Required<Pick<McpUiToolMeta, 'resourceUri'>> & Pick<McpUiToolMeta, 'visibility'>;

/** `_meta` of a linked tool; the flat `ui/resourceUri` key is the older form some hosts still read. */
export function toolUiMeta(ui: ToolUi): Record<string, unknown> {
  return { ui: { ...ui }, [RESOURCE_URI_META_KEY]: ui.resourceUri };
}

export const isAppOnly = (ui: ToolUi | undefined): boolean => ui?.visibility !== undefined && !ui.visibility.includes('model');

/** True when the client declared that it renders MCP Apps HTML views. */
export function clientRendersApps(capabilities: ClientCapabilities | undefined): boolean {
  return getUiCapability(capabilities)?.mimeTypes?.includes(RESOURCE_MIME_TYPE) === true;
}

/** The tools a client is shown: app-only ones only to a client that renders MCP Apps. */
export function toolsShownTo(tools: readonly Tool[], capabilities: ClientCapabilities | undefined): Tool[] {
  const apps = clientRendersApps(capabilities);
  return tools.filter((tool) => apps || !isAppOnly(tool._meta?.ui as ToolUi | undefined));
}

/** The dashboard resource: the shipped HTML, read once, with the default (no external origin) CSP. */
export function registerDashboard(server: McpServer, runtime: Runtime): void {
  let html: Promise<string> | undefined;
  const meta = { ui: { prefersBorder: true } };
  registerAppResource(
    server,
    'dashboard',
    DASHBOARD_URI,
    {
      title: 'Training dashboard',
      description: 'Live view of training runs (MCP Apps): reward, loss and accuracy curves, health, processes, checkpoint. Shown by hosts that render MCP Apps.',
      _meta: meta,
    },
    async (uri) => {
      html ??= readFile(DASHBOARD_HTML, 'utf8').catch((err: unknown) => {
        html = undefined;
        runtime.logger.error({ err, path: DASHBOARD_HTML }, 'dashboard view unreadable');
        throw err;
      });
      return { contents: [{ uri: uri.href, mimeType: RESOURCE_MIME_TYPE, text: await html, _meta: meta }] };
    },
  );
}
