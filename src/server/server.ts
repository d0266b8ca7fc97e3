/** Builds the MCP server over a runtime: the thin layer that exposes tools and resources. */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { registerDashboard } from './apps.js';
import { SERVER_INSTRUCTIONS } from './instructions.js';
import { registerResources } from '../resources/index.js';
import type { Runtime } from '../runtime/wiring/runtime.js';
import { SERVER_VERSION } from '../core/version.js';
import { registerTools } from '../tools/registry.js';
import { toolCatalog } from '../tools/catalog.js';

/**
 * The SDK builds an Ajv instance (with its formats) in every server's constructor, for answers to
 * elicitations this server never sends: built on first use instead, it is off the start-up path.
 */
function onFirstUseValidator(): jsonSchemaValidator {
  let ajv: AjvJsonSchemaValidator | undefined;
  return { getValidator: (schema) => (ajv ??= new AjvJsonSchemaValidator()).getValidator(schema) };
}

export function createServer(runtime: Runtime): McpServer {
  const server = new McpServer(
    { name: 'rl-training-mcp', title: 'RL training on Tinker-Atropos', version: SERVER_VERSION },
    {
      // McpServer declares resources.listChanged on its own but never subscribe (registerResources handles it).
      capabilities: { logging: {}, resources: { subscribe: true, listChanged: true } },
      instructions: SERVER_INSTRUCTIONS,
      jsonSchemaValidator: onFirstUseValidator(),
    },
  );
  registerTools(server, runtime, toolCatalog(runtime.logger));
  registerResources(server, runtime);
  registerDashboard(server, runtime);
  return server;
}
