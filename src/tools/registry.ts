/**
 * Serves `tools/list` and `tools/call` on the SDK's low-level Server, for both protocol
 * generations. The list comes from the catalog (catalog.ts: prebuilt by the build, or built once
 * from zod), not converted from zod on every call as McpServer does; a tool's module loads with its
 * first call. Arguments are checked here, not by the SDK, so a bad one is answered like every
 * other error: `isError` with JSON `{error, field, expected}` (argumentErrors.ts). A call a client
 * made with the tasks extension declared on it goes to tasks.ts when the tool can run as a task.
 */
import { ProtocolError, ProtocolErrorCode, type CallToolResult, type InputRequiredResult, type McpServer, type ServerContext, type Tool } from '@modelcontextprotocol/server';
import type { Runtime } from '../runtime/wiring/runtime.js';
import { argumentError, echoed, type Schema } from './argumentErrors.js';
import { errorResult, runTool, type ToolDefinition } from './define.js';
import type { ToolCatalog } from './catalog.js';
import { toolsShownTo } from '../server/prebuilt.js';
import { requestCapabilities } from '../server/clientCapabilities.js';
import { declaresTasks, type Tasks } from './tasks.js';

/** What a JSON value is, in the words of a refusal. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'boolean') return 'true or false';
  return `a ${typeof value}`;
}

type Handler = (request: { params?: { arguments?: unknown } }, ctx: ServerContext) => Promise<unknown>;

/**
 * tools/call with its `arguments` checked first. The SDK checks a tools/call request against its
 * own schema before any handler of ours and answers an `arguments` that is not an object with
 * zod's raw issues; it is invalid params (-32602), said in one sentence. `_wrapHandler` is the
 * hook the SDK's Server gives subclasses to wrap a registered handler (its own tools/call checks
 * are such a wrapper): ours goes around it, so it must be set before tools/call is registered.
 */
function checkArgumentsFirst(server: McpServer): void {
  const low = server.server as unknown as { _wrapHandler(method: string, handler: Handler): Handler };
  const wrap = low._wrapHandler.bind(low);
  low._wrapHandler = (method, handler) => {
    const wrapped = wrap(method, handler);
    if (method !== 'tools/call') return wrapped;
    return async (request, ctx) => {
      const value = request.params?.arguments;
      if (value === undefined || (typeof value === 'object' && value !== null && !Array.isArray(value))) return wrapped(request, ctx);
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `The arguments of a tools/call must be a JSON object of argument names to values, not ${kindOf(value)}.`);
    };
  };
}

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

/** `tasks` runs the calls that become tasks (tasks.ts). */
export function registerTools(server: McpServer, runtime: Runtime, catalog: ToolCatalog, tasks: Tasks): void {
  /** The tool's code, or why it could not be loaded: a bundle whose chunks a rebuild or reinstall replaced. */
  const definition = async (name: string): Promise<{ tool: ToolDefinition } | { failure: CallToolResult }> => {
    try {
      return { tool: (await catalog.definition(name))! };
    } catch (err) {
      runtime.logger.error({ err }, 'tool code could not be loaded');
      const cause = err instanceof Error ? err.message : String(err);
      return { failure: errorResult(runtime, `The server could not load its tool code (${cause}). Its files changed or went missing after it started, as a rebuild or reinstall does: restart the MCP server.`) };
    }
  };

  // App-only tools are for MCP Apps views: a client that does not render them never sees them.
  const shownTools = async (ctx: ServerContext): Promise<Tool[]> => toolsShownTo(await catalog.list(), requestCapabilities(server.server, ctx));

  // The tool set never changes while the server runs: no listChanged.
  server.server.registerCapabilities({ tools: {} });
  checkArgumentsFirst(server);
  server.server.setRequestHandler('tools/list', async (_request, ctx) => ({ tools: await shownTools(ctx) }));
  server.server.setRequestHandler('tools/call', async (request, ctx): Promise<CallToolResult | InputRequiredResult> => {
    const { name, arguments: args = {} } = request.params;
    const shown = await shownTools(ctx);
    const entry = shown.find((t) => t.name === name);
    if (!entry) {
      return errorResult(runtime, `Unknown tool '${echoed(name)}'.`, { field: 'name', expected: `one of: ${shown.map((t) => t.name).join(', ')}` });
    }
    if (countElements(args, MAX_ARGUMENT_ELEMENTS) > MAX_ARGUMENT_ELEMENTS) {
      return errorResult(runtime, `The arguments are too large: more than ${MAX_ARGUMENT_ELEMENTS} array elements and object members in all.`, {
        field: '(arguments)',
        expected: `at most ${MAX_ARGUMENT_ELEMENTS} elements`,
      });
    }
    const loaded = await definition(name);
    if ('failure' in loaded) return loaded.failure;
    const { tool } = loaded;
    const parsed = tool.input.safeParse(args);
    if (!parsed.success) {
      const { error, ...hints } = argumentError(entry.inputSchema as Schema, parsed.error.issues);
      return errorResult(runtime, error, hints);
    }
    // The extension's CreateTaskResult is not among the SDK's tools/call result types.
    if (tool.task && declaresTasks(ctx)) return (await tasks.start(tool, parsed.data)) as CallToolResult;
    return runTool(tool, parsed.data, runtime, ctx, server.server);
  });
}
