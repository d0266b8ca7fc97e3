/**
 * The tasks extension (`io.modelcontextprotocol/tasks`), which the SDK does not implement: a
 * tools/call whose request declares the extension, to a tool that can run as a task (its `task` in
 * define.ts), starts the work and answers at once with a task; the client polls `tasks/get` until
 * the task is completed (with the tool's answer inlined) or cancelled, and may `tasks/cancel` it.
 * A request that does not declare the extension is answered as before and never gets a task.
 *
 * There is no task store: a task is its job in the registry that already keeps it (an evaluation,
 * an inference test, under RL_HOME) or the run it waits on, and its id names the tool, the job and
 * when it began, signed with a key kept in RL_HOME (unguessable, and readable by any server sharing
 * RL_HOME, also after the host restarted this one). Its status is what the tool answers about the
 * job now. tasks/cancel of a task that owns its job stops the job (from any server: the registry
 * carries the cancel to the server that runs it) and answers only once its processes are stopped,
 * else an error saying what happened; a task that only waits has nothing to stop, and its cancel is
 * a mark under RL_HOME. See docs/architecture.md, "Tasks".
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { MissingRequiredClientCapabilityError, ProtocolError, ProtocolErrorCode, type CallToolResult, type McpServer, type ServerContext } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { zString } from '../core/schemaLeaves.js';
import { UserError } from '../core/errors.js';
import { cancelledTaskPath, taskKeyPath } from '../core/files/home.js';
import { persistentKey } from '../core/files/secretKey.js';
import type { Runtime } from '../runtime/wiring/runtime.js';
import { requestDeclares } from '../server/clientCapabilities.js';
import { toolCatalog } from './catalog.js';
import { answering, type TaskJob, type TaskState, type ToolContext, type ToolDefinition } from './define.js';

export const TASKS_EXTENSION_ID = 'io.modelcontextprotocol/tasks';
/** How often a client should ask; the jobs take minutes, a look costs a file read. */
const POLL_INTERVAL_MS = 1000;

export const declaresTasks = (ctx: ServerContext): boolean => requestDeclares(ctx, TASKS_EXTENSION_ID);

/** The wire Task (extension spec, "Tasks"). `ttlMs: null`: the jobs' results stay in RL_HOME. */
interface TaskView {
  taskId: string;
  status: TaskState;
  statusMessage: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: null;
  pollIntervalMs: number;
}

interface TaskRef {
  tool: string;
  job: TaskJob;
  createdAt: string;
}

const isRef = (v: unknown): v is TaskRef => {
  const r = v as Partial<TaskRef> | null;
  return typeof r === 'object' && r !== null && typeof r.tool === 'string' && typeof r.createdAt === 'string' && typeof r.job === 'object' && r.job !== null && typeof r.job.kind === 'string';
};

/** A task that owns its job's processes (its call started the job); any other only waits. */
const ownsProcesses = (job: TaskJob): boolean => job.kind !== 'run' && job.owned;

/** Task ids: the task's reference, readable, with an HMAC of it so no one can make one up. */
class TaskIds {
  private key?: Buffer;

  constructor(private readonly home: string) {}

  issue(ref: TaskRef): string {
    const body = Buffer.from(JSON.stringify(ref)).toString('base64url');
    return `${body}.${this.mac(body).toString('base64url')}`;
  }

  read(taskId: string): TaskRef | undefined {
    const [body, mac, extra] = taskId.split('.');
    if (body === undefined || mac === undefined || extra !== undefined) return undefined;
    const expected = this.mac(body);
    const given = Buffer.from(mac, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const ref: unknown = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    return isRef(ref) ? ref : undefined;
  }

  private mac(body: string): Buffer {
    return createHmac('sha256', (this.key ??= persistentKey(taskKeyPath(this.home)))).update(body).digest();
  }
}

/** What a task's work is given: not a call's, so no progress, no question, and nothing cancels it but tasks/cancel. */
const detached = (runtime: Runtime): ToolContext => ({
  runtime,
  signal: new AbortController().signal,
  progress: () => Promise.resolve(),
  confirm: () => Promise.resolve('unsupported'),
});

const notFound = (why: string): ProtocolError => new ProtocolError(ProtocolErrorCode.InvalidParams, `Failed to retrieve task: ${why}`);

/** Where a waiting task's cancel is marked, for every server sharing RL_HOME. */
const cancelMark = (home: string, taskId: string): string => cancelledTaskPath(home, createHash('sha256').update(taskId).digest('hex').slice(0, 32));

export class Tasks {
  private readonly ids: TaskIds;

  constructor(private readonly runtime: Runtime) {
    this.ids = new TaskIds(runtime.settings.home);
  }

  /** A call to `tool` as a task: the task, or the tool's answer when nothing is left to run (a refusal, a finished job). */
  async start(tool: ToolDefinition, args: unknown): Promise<CallToolResult | (TaskView & { resultType: 'task' })> {
    const createdAt = new Date().toISOString();
    let job: TaskJob | undefined;
    const answer = await answering(tool, this.runtime, async () => {
      const started = await tool.task!.start(args as never, detached(this.runtime));
      job = started.job;
      return started.answer;
    });
    if (job === undefined || answer.isError === true) return answer as CallToolResult;
    const { view } = await this.look(this.ids.issue({ tool: tool.name, job, createdAt }));
    return { resultType: 'task' as const, ...view };
  }

  /** tasks/get: the task now, with the tool's answer once it is completed. */
  async get(taskId: string): Promise<TaskView & { result?: Record<string, unknown> }> {
    const { view, answer } = await this.look(taskId);
    return view.status === 'completed' ? { ...view, result: { ...answer, resultType: 'complete' } } : view;
  }

  /**
   * tasks/cancel: a task that owns its job is acknowledged once the job's processes are stopped,
   * else refused with what happened (the task goes on showing the job's status); a waiting task
   * is marked cancelled.
   */
  async cancel(taskId: string): Promise<Record<string, never>> {
    const { tool, ref } = await this.resolve(taskId);
    if (ownsProcesses(ref.job) && tool.task!.cancel !== undefined) {
      let outcome;
      try {
        outcome = await tool.task!.cancel(ref.job, detached(this.runtime));
      } catch (err) {
        if (err instanceof UserError) throw notFound(err.message);
        throw err;
      }
      if (!outcome.stopped) {
        this.runtime.logger.warn({ tool: tool.name, job: ref.job, why: outcome.why }, 'task not cancelled');
        // A task already in a terminal status is invalid params, as the extension says; a job left running is not.
        throw new ProtocolError(outcome.ended === true ? ProtocolErrorCode.InvalidParams : ProtocolErrorCode.InternalError, `The task was not cancelled: ${outcome.why}`);
      }
    } else {
      const mark = cancelMark(this.runtime.settings.home, taskId);
      mkdirSync(dirname(mark), { recursive: true });
      writeFileSync(mark, new Date().toISOString());
    }
    this.runtime.logger.info({ tool: tool.name, job: ref.job }, 'task cancelled');
    return {};
  }

  /** tasks/update: nothing of ours asks for input while it works; the answers are ignored, as the spec allows for keys never issued. */
  async update(taskId: string): Promise<Record<string, never>> {
    await this.resolve(taskId);
    return {};
  }

  private async resolve(taskId: string): Promise<{ tool: ToolDefinition; ref: TaskRef }> {
    const ref = this.ids.read(taskId);
    const tool = ref && toolCatalog().get(ref.tool)?.tool;
    if (ref === undefined || tool?.task === undefined) throw notFound('Task not found');
    return { tool, ref };
  }

  private async look(taskId: string): Promise<{ view: TaskView; answer: CallToolResult }> {
    const { tool, ref } = await this.resolve(taskId);
    let polled: Awaited<ReturnType<NonNullable<ToolDefinition['task']>['poll']>>;
    try {
      polled = await tool.task!.poll(ref.job, detached(this.runtime), new Date(ref.createdAt));
    } catch (err) {
      // The job is gone (its directory removed, the run deleted): so is the task.
      if (err instanceof UserError) throw notFound(err.message);
      throw err;
    }
    const answer = (await answering(tool, this.runtime, () => polled.answer)) as CallToolResult;
    const waitCancelled = polled.state === 'working' && !ownsProcesses(ref.job) && existsSync(cancelMark(this.runtime.settings.home, taskId));
    const status = waitCancelled ? 'cancelled' : polled.state;
    const view: TaskView = {
      taskId,
      status,
      statusMessage: waitCancelled ? 'Cancelled' : polled.message,
      createdAt: ref.createdAt,
      lastUpdatedAt: polled.updatedAt ?? new Date().toISOString(),
      ttlMs: null,
      pollIntervalMs: POLL_INTERVAL_MS,
    };
    return { view, answer };
  }
}

const TaskParams = z.looseObject({ taskId: zString });

/** tasks/get, tasks/update and tasks/cancel, answered only to a request that declares the extension. */
export function registerTasks(server: McpServer, tasks: Tasks): void {
  const declared = (ctx: ServerContext): void => {
    if (!declaresTasks(ctx)) throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID]: {} } } });
  };
  const methods = { 'tasks/get': (id: string) => tasks.get(id), 'tasks/update': (id: string) => tasks.update(id), 'tasks/cancel': (id: string) => tasks.cancel(id) };
  for (const [method, answer] of Object.entries(methods)) {
    server.server.setRequestHandler(method, { params: TaskParams }, async (params, ctx) => {
      declared(ctx);
      return (await answer(params.taskId)) as never;
    });
  }
}
