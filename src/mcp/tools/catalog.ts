/**
 * The tools as tools/list sends them, and their modules. The bundle answers tools/list from
 * dist/tools.json, the list the build wrote from these same modules, so a start neither loads the
 * tool modules (and the domain code behind them) nor converts zod schemas; the modules load with
 * the first tools/call. The bundle knows the hash of the list it was built with: a missing or
 * different file, and the sources run by tsx (no hash), build the list from the modules instead.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { PREBUILT_TOOL_LIST } from '../../core/paths.js';
import type { Logger } from '../../core/logger.js';
import type { ToolDefinition } from './define.js';
import { toolJsonSchema } from './jsonSchema.js';
import { toolUiMeta } from '../apps.js';

/** Set by scripts/build.ts in the bundle: the SHA-256 of the dist/tools.json it wrote. */
declare const RL_TOOL_LIST_SHA256: string | undefined;

export interface ToolCatalog {
  /** Every tool as tools/list sends it, in the order of the definitions. */
  list(): Promise<readonly Tool[]>;
  definitions(): Promise<readonly ToolDefinition[]>;
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

export const toolListHash = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The list the build wrote, when it is the one this bundle was built with. */
function prebuiltList(logger: Logger): Tool[] | undefined {
  if (typeof RL_TOOL_LIST_SHA256 !== 'string') return undefined;
  try {
    const text = readFileSync(PREBUILT_TOOL_LIST, 'utf8');
    if (toolListHash(text) === RL_TOOL_LIST_SHA256) return JSON.parse(text) as Tool[];
    logger.warn({ path: PREBUILT_TOOL_LIST }, 'prebuilt tool list is from another build; building it from the tool modules');
  } catch (err) {
    logger.warn({ err, path: PREBUILT_TOOL_LIST }, 'prebuilt tool list unreadable; building it from the tool modules');
  }
  return undefined;
}

/** The server's tools: ALL_TOOLS, imported on first use. */
export function toolCatalog(logger: Logger): ToolCatalog {
  let definitions: Promise<readonly ToolDefinition[]> | undefined;
  // A failed import is not kept: the next call tries again (the files may be back).
  const load = (): Promise<readonly ToolDefinition[]> =>
    (definitions ??= import('./index.js').then(
      (m) => m.ALL_TOOLS,
      (err: unknown) => {
        definitions = undefined;
        throw err;
      },
    ));
  let listed: Promise<readonly Tool[]> | undefined;
  return {
    definitions: load,
    list: () => (listed ??= Promise.resolve(prebuiltList(logger)).then((tools) => tools ?? load().then((all) => all.map(listedTool)))),
  };
}
