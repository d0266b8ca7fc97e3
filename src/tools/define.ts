/**
 * A tool file exports `defineTool({...})`; `runTool` runs one call of it: the answer is
 * `structuredContent` plus the same JSON as text, checked against `output`, and failures become
 * `isError` answers a user can act on. `registry.ts` lists the tools and validates arguments.
 */
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { z } from 'zod';
import { UserError } from '../core/errors.js';
import { diskFullError, isDiskFull } from '../core/files/diskFull.js';
import { serverLogPath } from '../core/files/home.js';
import type { Runtime } from '../runtime/wiring/runtime.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { type Confirmation, type ConfirmField, confirmer } from './confirm.js';
import type { ToolUi } from '../server/apps.js';

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface ToolContext {
  runtime: Runtime;
  /** Aborts when the client cancels the call or the connection closes. */
  signal: AbortSignal;
  /** Sends notifications/progress when the client sent a progress token; otherwise does nothing. */
  progress(progress: number, total?: number, message?: string): Promise<void>;
  /** Asks the user a yes/no question (form elicitation, one boolean `field`, by default rl_start_training's); `unsupported` when the client cannot be asked. */
  confirm(message: string, field?: ConfirmField): Promise<Confirmation>;
}

export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  /** The MCP Apps view that shows this tool's answers; app-only tools are called by the view alone. */
  ui?: ToolUi;
  handler(args: z.output<I>, ctx: ToolContext): Promise<z.input<O>> | z.input<O>;
}

export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(def: ToolDefinition<I, O>): ToolDefinition<I, O> {
  return def;
}

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

function textResult(payload: unknown, runtime: Runtime): string {
  return runtime.redactor.redact(JSON.stringify(payload));
}

export function errorResult(runtime: Runtime, error: string, hints: Record<string, unknown> = {}): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: textResult({ error, ...hints }, runtime) }] };
}

/** Runs one tool call: the handler's value becomes the answer; any failure becomes isError. */
export async function runTool(tool: ToolDefinition, args: unknown, runtime: Runtime, extra: Extra, server?: Server): Promise<CallToolResult> {
  const token = extra._meta?.progressToken;
  const ctx: ToolContext = {
    runtime,
    signal: extra.signal,
    progress: async (progress, total, message) => {
      if (token === undefined) return;
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total, message } });
    },
    confirm: server ? confirmer(server, extra) : () => Promise.resolve('unsupported' as const),
  };
  try {
    const value = await tool.handler(args as never, ctx);
    // Redact once on the serialized form so text and structuredContent carry the same JSON.
    const text = textResult(value, runtime);
    const structured = JSON.parse(text) as Record<string, unknown>;
    // An answer that breaks its own schema is our bug: said as one, not sent for the client to reject.
    const checked = tool.output.safeParse(structured);
    if (!checked.success) throw new Error(`its answer does not match its output schema: ${checked.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    return { content: [{ type: 'text', text }], structuredContent: structured };
  } catch (err) {
    if (err instanceof UserError) return errorResult(runtime, err.message, err.hints);
    if (isDiskFull(err)) {
      runtime.logger.warn({ err, tool: tool.name }, "RL_HOME's file system is full");
      const full = diskFullError(runtime.settings.home);
      return errorResult(runtime, full.message, full.hints);
    }
    runtime.logger.error({ err, tool: tool.name }, 'tool failed');
    const message = err instanceof Error ? err.message : String(err);
    return errorResult(runtime, `Internal error in ${tool.name}: ${message}`, {
      hint: `The server is still running; details are in ${serverLogPath(runtime.settings.home)}. Retry, or report the error with that log.`,
    });
  }
}
