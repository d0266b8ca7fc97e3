/** Builds the MCP server over a runtime: the thin layer that exposes tools and resources. */
import { McpServer } from '@modelcontextprotocol/server';
import { registerDashboard } from './apps.js';
import { SERVER_INSTRUCTIONS } from './instructions.js';
import { registerResources, type ResourceWatches } from '../resources/index.js';
import type { Runtime } from '../runtime/wiring/runtime.js';
import { SERVER_VERSION } from '../core/version.js';
import { registerTools } from '../tools/registry.js';
import { confirmationState } from '../tools/confirm.js';
import { registerTasks, Tasks, TASKS_EXTENSION_ID } from '../tools/tasks.js';

/** The SDK server over the runtime, and the resource watches a transport may drive (sessionTap.ts). */
export interface BuiltServer {
  server: McpServer;
  resources: ResourceWatches;
}

export function createServer(runtime: Runtime): BuiltServer {
  const server = new McpServer(
    { name: 'rl-training-mcp', title: 'RL training on Tinker-Atropos', version: SERVER_VERSION },
    {
      // McpServer declares resources.listChanged on its own but never subscribe (registerResources handles it).
      capabilities: { logging: {}, resources: { subscribe: true, listChanged: true }, extensions: { [TASKS_EXTENSION_ID]: {} } },
      instructions: SERVER_INSTRUCTIONS,
      requestState: { verify: confirmationState.verify },
    },
  );
  const tasks = new Tasks(runtime);
  registerTools(server, runtime, tasks);
  registerTasks(server, tasks);
  const resources = registerResources(server, runtime);
  registerDashboard(server, runtime);
  return { server, resources };
}
