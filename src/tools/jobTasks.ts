/**
 * The one task adapter over the job registry (../runtime/jobs/registry.ts): an evaluation or an
 * inference test run as a task (tasks.ts). The call starts the job without waiting and the task is
 * the job, read back from its registry by id at each poll. A task whose call started the job owns
 * it, as that call would: cancelling the task stops the job. A task made from a call that only
 * named a job (eval_id, test_id) waits on it: cancelling the task ends the wait, the job goes on.
 */
import type { CancelOutcome, JobKind, JobStatus } from '../runtime/jobs/registry.js';
import type { WaitOptions } from '../runtime/jobs/wait.js';
import type { Runtime } from '../runtime/wiring/runtime.js';
import type { TaskJob, TaskSupport, ToolContext } from './define.js';

/** What the registries answer of a job, in the parts a task reads. */
export interface JobAnswer {
  status: JobStatus;
  message?: string;
  progress?: { models_total: number; models_finished: number };
  finished_at?: string;
}

/** A kind of job's registry as a task sees it: its answer about one now, and its cancel. */
export interface JobRegistryView<A> {
  waitFor(id: string, wait: WaitOptions): Promise<A>;
  cancel(id: string, reason: string): Promise<CancelOutcome>;
}

/** No wait: the answer as it stands. */
const NOW: WaitOptions = { waitSeconds: 0 };

function stateOf(answer: JobAnswer): { state: 'working' | 'cancelled' | 'completed'; message: string } {
  if (answer.status !== 'running') return { state: answer.status, message: answer.message ?? answer.status };
  const p = answer.progress;
  return { state: 'working', message: p ? `${p.models_finished} of ${p.models_total} models finished` : 'running' };
}

function idOf(job: TaskJob, kind: JobKind): string {
  if (job.kind !== kind) throw new Error(`a ${kind} task was given a ${job.kind} job`);
  return (job as { id: string }).id;
}

/**
 * A task over the jobs of `kind`, whose id is `key` in both the tool's arguments (a job started
 * earlier) and its answers (eval_id, test_id); `begin` is the tool's own start or look.
 */
export function registryJobTask<K extends string, I extends { [k in K]?: string }, A extends JobAnswer & { [k in K]: string }>(
  kind: JobKind,
  key: K,
  registry: (runtime: Runtime) => JobRegistryView<A>,
  begin: (args: I, ctx: ToolContext, wait: WaitOptions) => Promise<A>,
): TaskSupport<I> {
  return {
    async start(args, ctx) {
      const answer = await begin(args, ctx, NOW);
      if (answer.status !== 'running') return { answer };
      return { answer, job: { kind, id: answer[key], owned: args[key] === undefined } };
    },
    async poll(job, ctx) {
      const answer = await registry(ctx.runtime).waitFor(idOf(job, kind), NOW);
      return { answer, ...stateOf(answer), ...(answer.finished_at !== undefined ? { updatedAt: answer.finished_at } : {}) };
    },
    cancel: (job, ctx) => registry(ctx.runtime).cancel(idOf(job, kind), 'its task was cancelled'),
  };
}
