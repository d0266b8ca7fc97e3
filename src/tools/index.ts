/** Every tool the server offers, in the order of the Hermes workflow. */
import type { ToolDefinition } from './define.js';

export const ALL_TOOLS: readonly ToolDefinition[] = [];
