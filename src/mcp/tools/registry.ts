/**
 * Serves `tools/list` and `tools/call` on the SDK's low-level Server. The list is built once, at
 * the first `tools/list`, not converted from zod on every call as McpServer does. Arguments are
 * checked here, not by the SDK, so a bad one is answered like every other error: `isError` with
 * JSON `{error, field, expected}` (argumentErrors.ts).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Runtime } from '../../app/runtime.js';
import { argumentError, type Schema } from './argumentErrors.js';
import { errorResult, runTool, type Extra, type ToolDefinition } from './define.js';
import { toolJsonSchema } from './jsonSchema.js';
import { clientRendersApps, isAppOnly, toolUiMeta } from '../apps.js';

/** Bounds the size of any tool's arguments (array elements plus object members) before zod sees them. */
export const MAX_ARGUMENT_ELEMENTS = 1000;

/** Counts array elements and object members, stopping once past `max`. */
export function countElements(value: unknown, max: number): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && count <= max) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    const children = Array.isArray(node) ? node : Object.values(node);
    count += children.length;
    for (const child of children) if (child !== null && typeof child === 'object') stack.push(child);
  }
  return count;
}

/** One tool as tools/list sends it. */
export function listedTool(tool: ToolDefinition): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: toolJsonSchema(tool.input, 'input') as Tool['inputSchema'],
    outputSchema: toolJsonSchema(tool.output, 'output') as Tool['outputSchema'],
    annotations: { title: tool.title, ...tool.annotations },
    ...(tool.ui ? { _meta: toolUiMeta(tool.ui) } : {}),
  };
}

export function registerTools(server: McpServer, runtime: Runtime, tools: readonly ToolDefinition[]): void {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  let listed: Tool[] | undefined;
  const list = (): Tool[] => (listed ??= tools.map(listedTool));
  const inputOf = (tool: ToolDefinition): Schema => list()[tools.indexOf(tool)]!.inputSchema as Schema;

  // App-only tools are for MCP Apps views: a client that does not render them never sees them.
  const shown = (tool: ToolDefinition): boolean => !isAppOnly(tool.ui) || clientRendersApps(server.server.getClientCapabilities());

  // The tool set never changes while the server runs: no listChanged.
  server.server.registerCapabilities({ tools: {} });
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: list().filter((_, i) => shown(tools[i]!)) }));
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra: Extra): Promise<CallToolResult> => {
    const { name, arguments: args = {} } = request.params;
    const tool = byName.get(name);
    if (!tool || !shown(tool)) {
      return errorResult(runtime, `Unknown tool '${name}'.`, { field: 'name', expected: `one of: ${tools.filter(shown).map((t) => t.name).join(', ')}` });
    }
    if (countElements(args, MAX_ARGUMENT_ELEMENTS) > MAX_ARGUMENT_ELEMENTS) {
      return errorResult(runtime, `The arguments are too large: more than ${MAX_ARGUMENT_ELEMENTS} array elements and object members in all.`, {
        field: '(arguments)',
        expected: `at most ${MAX_ARGUMENT_ELEMENTS} elements`,
      });
    }
    const parsed = tool.input.safeParse(args);
    if (!parsed.success) {
      const { error, ...hints } = argumentError(inputOf(tool), parsed.error.issues);
      return errorResult(runtime, error, hints);
    }
    return runTool(tool, parsed.data, runtime, extra, server.server);
  });
}
