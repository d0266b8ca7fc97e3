/**
 * The tools as tools/list sends them: built once, from the tools' zod schemas, by this one code
 * path that the server and the tests share.
 */
import type { Tool } from '@modelcontextprotocol/server';
import type { ToolDefinition } from './define.js';
import { ALL_TOOLS } from './index.js';
import { toolJsonSchema } from './jsonSchema.js';
import { toolUiMeta } from '../server/apps.js';

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

export interface CatalogEntry {
  tool: ToolDefinition;
  listed: Tool;
}

let entries: ReadonlyMap<string, CatalogEntry> | undefined;

/** Every tool by name, each with its listed form, in ALL_TOOLS order; converted from zod once, when the first server registers them. */
export function toolCatalog(): ReadonlyMap<string, CatalogEntry> {
  return (entries ??= new Map(ALL_TOOLS.map((tool) => [tool.name, { tool, listed: listedTool(tool) }])));
}
