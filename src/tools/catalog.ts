/**
 * The tools as tools/list sends them, and their modules. The bundle answers tools/list from
 * dist/tools.json, the list the build wrote from these same modules (../prebuilt.ts), so a start
 * neither loads the tool modules (and the runtime code behind them) nor converts zod schemas; a
 * tool's module loads with its first call. A missing or different file, and the sources run by
 * tsx, build the list from the modules instead.
 */
import type { Tool } from '@modelcontextprotocol/server';
import type { Logger } from '../core/logger.js';
import { readPrebuiltTools } from '../server/prebuilt.js';
import type { ToolDefinition } from './define.js';
import { loadAllTools, loadTool } from './index.js';
import { toolJsonSchema } from './jsonSchema.js';
import { toolUiMeta } from '../server/apps.js';

export interface ToolCatalog {
  /** Every tool as tools/list sends it, in the order of the definitions. */
  list(): Promise<readonly Tool[]>;
  /** The tool of this name, its module imported on first use; undefined when no tool has the name. */
  definition(name: string): Promise<ToolDefinition | undefined>;
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

/** The list the build wrote, when it is the one this bundle was built with. */
function prebuiltList(logger: Logger): readonly Tool[] | undefined {
  const prebuilt = readPrebuiltTools();
  if (prebuilt !== undefined && 'problem' in prebuilt) logger.warn({ problem: prebuilt.problem }, 'not using the prebuilt tool list; building it from the tool modules');
  return prebuilt !== undefined && 'tools' in prebuilt ? prebuilt.tools : undefined;
}

/** The server's tools, each module imported on first use. */
export function toolCatalog(logger: Logger): ToolCatalog {
  const loaded = new Map<string, Promise<ToolDefinition>>();
  let listed: Promise<readonly Tool[]> | undefined;
  return {
    definition: async (name) => {
      const loading = loaded.get(name) ?? loadTool(name);
      if (loading === undefined) return undefined;
      loaded.set(name, loading);
      // A failed import is not kept: the next call tries again (the files may be back).
      return loading.catch((err: unknown) => {
        loaded.delete(name);
        throw err;
      });
    },
    list: () => (listed ??= Promise.resolve(prebuiltList(logger)).then((tools) => tools ?? loadAllTools().then((all) => all.map(listedTool)))),
  };
}
