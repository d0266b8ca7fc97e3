/**
 * A tool file exports `defineTool({...})`; `runTool` runs one call of it: the answer is
 * `structuredContent` plus the same JSON as text, checked against `output`, and failures become
 * `isError` answers a user can act on. `registry.ts` lists the tools and validates arguments;
 * `tasks.ts` runs the tools that declare `task` as tasks.
 */
import type { CallToolResult, InputRequiredResult, Server, ServerContext } from '@modelcontextprotocol/server';
import type { z } from 'zod';
import { UserError } from '../core/errors.js';
import { diskFullError, isDiskFull } from '../core/files/diskFull.js';
import { serverLogPath } from '../core/files/home.js';
import type { Runtime } from '../runtime/wiring/runtime.js';
import type { CancelOutcome, JobKind } from '../runtime/jobs/registry.js';
import type { WaitCondition } from '../runtime/runs/waiting.js';
import { type Confirmation, ConfirmationNeeded, type ConfirmField, confirmer } from './confirm.js';
import type { ToolUi } from '../server/apps.js';
import type { ArgumentModes } from './argumentErrors.js';

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
  /**
   * Asks the user a yes/no question (a form with one boolean `field`, by default rl_start_training's); `unsupported` when the client cannot be asked. Ask
   * before doing anything: a 2026-07-28 client answers by calling the tool again, which runs the
   * handler again from its start (confirm.ts).
   */
  confirm(message: string, field?: ConfirmField): Promise<Confirmation>;
}

/** Where a task's work stands (tasks.ts): still working, ended by a cancel, or done with its answer. */
export type TaskState = 'working' | 'cancelled' | 'completed';

/**
 * What a task follows, kept in its id: a job of a registry (an evaluation, an inference test), which
 * the task owns when its own call started it (cancelling the task then stops the job), or a run it
 * waits on.
 */
export type TaskJob = { kind: JobKind; id: string; owned: boolean } | { kind: 'run'; run_id: string; until: WaitCondition; baseline: number };

/**
 * A tool that can run as a task (the `io.modelcontextprotocol/tasks` extension, for clients that
 * declare it): the call starts the work and answers at once with a task; the client then polls it.
 * `poll` answers what the tool would answer about the job now (read from RL_HOME, so a task
 * outlives the server).
 */
export interface TaskSupport<I> {
  /** Starts the call's work, not bound to the call. No `job` when the answer is final already (a refusal, a finished job). */
  start(args: I, ctx: ToolContext): Promise<{ answer: unknown; job?: TaskJob }>;
  /** The job now: `answer` is the tool's answer about it; `message` says how far it got. */
  poll(job: TaskJob, ctx: ToolContext, since: Date): Promise<{ answer: unknown; state: TaskState; message: string; updatedAt?: string }>;
  /** Stops an owned job's processes: answers once they are stopped, or why they are not. */
  cancel?(job: TaskJob, ctx: ToolContext): Promise<CancelOutcome>;
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
  /** The arguments each mode of the tool reads (argumentErrors.ts); one given to a mode that does not read it is refused. */
  modes?: ArgumentModes;
  /** Runs as a task for clients that declare the tasks extension. */
  task?: TaskSupport<z.output<I>>;
  handler(args: z.output<I>, ctx: ToolContext): Promise<z.input<O>> | z.input<O>;
}

export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(def: ToolDefinition<I, O>): ToolDefinition<I, O> {
  return def;
}

function textResult(payload: unknown, runtime: Runtime): string {
  return runtime.redactor.redact(JSON.stringify(payload));
}

export function errorResult(runtime: Runtime, error: string, hints: Record<string, unknown> = {}): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: textResult({ error, ...hints }, runtime) }] };
}

/**
 * A JSON answer (`text` is its redacted serialization): structuredContent and the same JSON as
 * text, or for RL_CLIENT=hermes structuredContent alone, since Hermes shows the model both.
 */
function jsonResult(runtime: Runtime, text: string): CallToolResult {
  const structured = JSON.parse(text) as Record<string, unknown>;
  return runtime.settings.client === 'hermes' ? { content: [], structuredContent: structured } : { content: [{ type: 'text', text }], structuredContent: structured };
}

/**
 * A refusal the caller can act on by changing its call (a bad argument, a missing key, a run in
 * the wrong state): isError, except for RL_CLIENT=hermes, where every isError counts toward the
 * breaker that stops Hermes calling the server (docs/clients.md): there it is an answer.
 */
export function refusalResult(runtime: Runtime, error: string, hints: Record<string, unknown> = {}): CallToolResult {
  return runtime.settings.client === 'hermes' ? jsonResult(runtime, textResult({ error, ...hints }, runtime)) : errorResult(runtime, error, hints);
}

/** The context of a call: progress and the user's confirmation go through the request that made it. */
export function callContext(runtime: Runtime, ctx: ServerContext, server?: Server): ToolContext {
  const token = ctx.mcpReq._meta?.progressToken;
  return {
    runtime,
    signal: ctx.mcpReq.signal,
    progress: async (progress, total, message) => {
      if (token === undefined) return;
      await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress, total, message } });
    },
    confirm: server ? confirmer(server, ctx) : () => Promise.resolve('unsupported' as const),
  };
}

/** The answer of one of `tool`'s calls: the value `produce` gives, or any failure as isError. */
export async function answering(tool: ToolDefinition, runtime: Runtime, produce: () => unknown): Promise<CallToolResult | InputRequiredResult> {
  try {
    const value = await produce();
    // Redact once on the serialized form so text and structuredContent carry the same JSON.
    const text = textResult(value, runtime);
    // An answer that breaks its own schema is our bug: said as one, not sent for the client to reject.
    const checked = tool.output.safeParse(JSON.parse(text));
    if (!checked.success) throw new Error(`its answer does not match its output schema: ${checked.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    return jsonResult(runtime, text);
  } catch (err) {
    if (err instanceof ConfirmationNeeded) return err.result;
    if (err instanceof UserError) return refusalResult(runtime, err.message, err.hints);
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

/** Runs one tool call: the handler's value becomes the answer; any failure becomes isError. */
export function runTool(tool: ToolDefinition, args: unknown, runtime: Runtime, ctx: ServerContext, server?: Server): Promise<CallToolResult | InputRequiredResult> {
  return answering(tool, runtime, () => tool.handler(args as never, callContext(runtime, ctx, server)));
}
