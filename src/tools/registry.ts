/**
 * Serves `tools/list` and `tools/call` on the SDK's low-level Server, for both protocol
 * generations: the list is the catalog's (catalog.ts, built once from zod), shown per client (app-only
 * tools to MCP Apps clients alone), which McpServer.registerTool does not offer. Arguments are
 * checked here, not by the SDK, so a bad one is answered like every
 * other error: `isError` with JSON `{error, field, expected}` naming every problem, an argument
 * the call's mode does not read among them (argumentErrors.ts). A call a client
 * made with the tasks extension declared on it goes to tasks.ts when the tool can run as a task.
 */
import { type CallToolResult, type InputRequiredResult, type McpServer, type ServerContext, type Tool } from '@modelcontextprotocol/server';
import type { Runtime } from '../runtime/wiring/runtime.js';
import { argumentProblems, echoed, inapplicableArguments, refusal, type Schema } from './argumentErrors.js';
import { errorResult, refusalResult, runTool } from './define.js';
import { toolCatalog } from './catalog.js';
import { toolsShownTo } from '../server/apps.js';
import { requestCapabilities } from '../server/clientCapabilities.js';
import { declaresTasks, type Tasks } from './tasks.js';

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

function withoutOutputSchema({ outputSchema: _, ...tool }: Tool): Tool {
  return tool;
}

/** `tasks` runs the calls that become tasks (tasks.ts). */
export function registerTools(server: McpServer, runtime: Runtime, tasks: Tasks): void {
  // App-only tools are for MCP Apps views: a client that does not render them never sees them.
  // Hermes's SDK checks a result's structuredContent against outputSchema, which a refusal answered without isError breaks (define.ts).
  const listed = [...toolCatalog().values()].map((e) => (runtime.settings.client === 'hermes' ? withoutOutputSchema(e.listed) : e.listed));
  const shownTools = (ctx: ServerContext): Tool[] => toolsShownTo(listed, requestCapabilities(server.server, ctx));

  // The tool set never changes while the server runs: no listChanged.
  server.server.registerCapabilities({ tools: {} });
  server.server.setRequestHandler('tools/list', (_request, ctx) => ({ tools: shownTools(ctx) }));
  server.server.setRequestHandler('tools/call', async (request, ctx): Promise<CallToolResult | InputRequiredResult> => {
    const { name, arguments: args = {} } = request.params;
    const shown = shownTools(ctx);
    const entry = shown.some((t) => t.name === name) ? toolCatalog().get(name) : undefined;
    if (!entry) {
      return errorResult(runtime, `Unknown tool '${echoed(name)}'.`, { field: 'name', expected: `one of: ${shown.map((t) => t.name).join(', ')}` });
    }
    if (countElements(args, MAX_ARGUMENT_ELEMENTS) > MAX_ARGUMENT_ELEMENTS) {
      return refusalResult(runtime, `The arguments are too large: more than ${MAX_ARGUMENT_ELEMENTS} array elements and object members in all.`, {
        field: '(arguments)',
        expected: `at most ${MAX_ARGUMENT_ELEMENTS} elements`,
      });
    }
    const { tool, listed } = entry;
    const parsed = tool.input.safeParse(args);
    const problems = [
      ...(parsed.success ? [] : argumentProblems(listed.inputSchema as Schema, parsed.error.issues, args)),
      ...(tool.modes ? inapplicableArguments(tool.modes, args) : []),
    ];
    if (!parsed.success || problems.length > 0) {
      const { error, ...hints } = refusal(problems);
      return refusalResult(runtime, error, hints);
    }
    // The extension's CreateTaskResult is not among the SDK's tools/call result types.
    if (tool.task && declaresTasks(ctx)) return (await tasks.start(tool, parsed.data)) as CallToolResult;
    return runTool(tool, parsed.data, runtime, ctx, server.server);
  });
}
