/** Builds the MCP server over a runtime: the thin layer that exposes tools and resources. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { registerDashboard } from './apps.js';
import { SERVER_INSTRUCTIONS } from './instructions.js';
import { registerResources } from './resources/index.js';
import type { Runtime } from '../app/runtime.js';
import { PACKAGE_ROOT } from '../core/paths.js';
import { registerTools } from './tools/define.js';
import { ALL_TOOLS } from './tools/index.js';

export const SERVER_VERSION: string = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

export function createServer(runtime: Runtime): McpServer {
  const server = new McpServer(
    { name: 'rl-training-mcp', title: 'RL training on Tinker-Atropos', version: SERVER_VERSION },
    {
      // McpServer declares resources.listChanged on its own but never subscribe (registerResources handles it).
      capabilities: { logging: {}, resources: { subscribe: true, listChanged: true } },
      instructions: SERVER_INSTRUCTIONS,
      // Bounds the size of any tool's arguments before zod sees them.
      maxToolInputElements: 1000,
    },
  );
  registerTools(server, runtime, ALL_TOOLS);
  registerResources(server, runtime);
  registerDashboard(server, runtime);
  return server;
}
