/**
 * Running a long job (an evaluation, an inference test) as a task (tasks.ts): the call starts the
 * job without waiting and the task is the job, read back from its registry by id at each poll. A
 * task whose call started the job owns it, as that call would: cancelling the task stops the job.
 * A task made from a call that only named a job (eval_id, test_id) waits on it: cancelling the task
 * ends the wait, the job goes on.
 */
import type { WaitOptions } from '../runtime/inference/jobWait.js';
import type { Runtime } from '../runtime/wiring/runtime.js';
import type { TaskSupport, ToolContext } from './define.js';

/** What the registries answer of a job, in the parts a task reads. */
export interface JobAnswer {
  status: 'running' | 'completed' | 'cancelled';
  message?: string;
  progress?: { models_total: number; models_finished: number };
  finished_at?: string;
}

export interface JobTaskParts<I, A extends JobAnswer> {
  /** The id of a job started earlier that the call names, if any. */
  named(args: I): string | undefined;
  idOf(answer: A): string;
  /** Starts the job (the call's own work) or looks at a named one, with the wait given. */
  begin(args: I, ctx: ToolContext, wait: WaitOptions): Promise<A>;
  look(id: string, ctx: ToolContext, wait: WaitOptions): Promise<A>;
  /** Stops a job this server runs. */
  stop(id: string, ctx: ToolContext, reason: string): void;
}

/** No wait: the answer as it stands. */
const NOW: WaitOptions = { waitSeconds: 0 };
const WAITING = ':waiting';

function stateOf(answer: JobAnswer): { state: 'working' | 'cancelled' | 'completed'; message: string } {
  if (answer.status !== 'running') return { state: answer.status, message: answer.message ?? answer.status };
  const p = answer.progress;
  return { state: 'working', message: p ? `${p.models_finished} of ${p.models_total} models finished` : 'running' };
}

function jobTask<I, A extends JobAnswer>(parts: JobTaskParts<I, A>): TaskSupport<I> {
  return {
    async start(args, ctx) {
      const answer = await parts.begin(args, ctx, NOW);
      if (answer.status !== 'running') return { answer };
      return { answer, job: `${parts.idOf(answer)}${parts.named(args) !== undefined ? WAITING : ''}` };
    },
    async poll(job, ctx) {
      const answer = await parts.look(job.replace(WAITING, ''), ctx, NOW);
      return { answer, ...stateOf(answer), ...(answer.finished_at !== undefined ? { updatedAt: answer.finished_at } : {}) };
    },
    async cancel(job, ctx) {
      if (!job.endsWith(WAITING)) parts.stop(job, ctx, 'its task was cancelled');
    },
  };
}

/** The registry that keeps a kind of job: its answer about one now or after a wait, and its stop. */
export interface JobRegistry<A> {
  waitFor(id: string, wait: WaitOptions): Promise<A>;
  cancel(id: string, reason: string): boolean;
}

/**
 * A task over a job a registry keeps, whose id is `key` in both the tool's arguments (a job started
 * earlier) and its answers (eval_id, test_id).
 */
export function registryJobTask<K extends string, I extends { [k in K]?: string }, A extends JobAnswer & { [k in K]: string }>(
  key: K,
  registry: (runtime: Runtime) => JobRegistry<A>,
  begin: JobTaskParts<I, A>['begin'],
): TaskSupport<I> {
  return jobTask<I, A>({
    named: (args) => args[key],
    idOf: (answer) => answer[key],
    begin,
    look: (id, ctx, wait) => registry(ctx.runtime).waitFor(id, wait),
    stop: (id, ctx, reason) => void registry(ctx.runtime).cancel(id, reason),
  });
}
