/**
 * MCP Apps (the `io.modelcontextprotocol/ui` extension): the dashboard view as a `ui://` resource,
 * the `_meta.ui` that links a tool to it, and which tools a client is shown. A host that renders
 * Apps reads the resource and shows it beside the tool's answer; any other client ignores `_meta`
 * and reads the same text answer as before. An app-only tool (visibility ["app"]) is listed only
 * to clients that declared the extension at `initialize`: a host that renders Apps hides it from
 * its model, a client that does not would show it to its model for nothing. See docs/architecture.md,
 * "Dashboard".
 */
import { readFile } from 'node:fs/promises';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import type { Runtime } from '../runtime/wiring/runtime.js';
import { DASHBOARD_HTML } from '../core/files/paths.js';
import { DASHBOARD_URI } from '../core/resourceUris.js';

export const UI_EXTENSION_ID = 'io.modelcontextprotocol/ui';
export const APP_MIME_TYPE = 'text/html;profile=mcp-app';

/** A tool's link to a view; `visibility` defaults to ["model", "app"]. */
export interface ToolUi {
  resourceUri: string;
  visibility?: ('model' | 'app')[];
}

/** `_meta` of a linked tool; the flat `ui/resourceUri` key is the older form some hosts still read. */
export function toolUiMeta(ui: ToolUi): Record<string, unknown> {
  return { ui: { ...ui }, 'ui/resourceUri': ui.resourceUri };
}

export const isAppOnly = (ui: ToolUi | undefined): boolean => ui?.visibility !== undefined && !ui.visibility.includes('model');

/** True when the client declared at `initialize` that it renders MCP Apps HTML views. */
export function clientRendersApps(capabilities: ClientCapabilities | undefined): boolean {
  const ui = capabilities?.extensions?.[UI_EXTENSION_ID] as { mimeTypes?: unknown } | undefined;
  return Array.isArray(ui?.mimeTypes) && ui.mimeTypes.includes(APP_MIME_TYPE);
}

/** The dashboard resource: the shipped HTML, read once, with the default (no external origin) CSP. */
export function registerDashboard(server: McpServer, runtime: Runtime): void {
  let html: Promise<string> | undefined;
  const meta = { ui: { prefersBorder: true } };
  server.registerResource(
    'dashboard',
    DASHBOARD_URI,
    {
      title: 'Training dashboard',
      description: 'Live view of training runs (MCP Apps): reward, loss and accuracy curves, health, processes, checkpoint. Shown by hosts that render MCP Apps.',
      mimeType: APP_MIME_TYPE,
      _meta: meta,
    },
    async (uri) => {
      html ??= readFile(DASHBOARD_HTML, 'utf8').catch((err: unknown) => {
        html = undefined;
        runtime.logger.error({ err, path: DASHBOARD_HTML }, 'dashboard view unreadable');
        throw err;
      });
      return { contents: [{ uri: uri.href, mimeType: APP_MIME_TYPE, text: await html, _meta: meta }] };
    },
  );
}
