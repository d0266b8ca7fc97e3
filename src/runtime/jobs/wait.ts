/**
 * Waiting on a long job (an inference test, an evaluation) for at most a bounded time: clients
 * cancel calls after about 60 s, so a call answers early and the job goes on. Progress rises
 * with every notification (a heartbeat and each change of the job).
 */
const HEARTBEAT_MS = 5000;

export interface WaitableJob {
  readonly status: string;
  readonly done: Promise<void>;
  progressValue(): { progress: number; total: number; message: string };
  onChange(listener: () => void): () => void;
}

export interface WaitOptions {
  waitSeconds: number;
  signal?: AbortSignal;
  onProgress?: (progress: number, total: number, message: string) => void | Promise<void>;
}

/** Resolves when the job is done, `waitSeconds` (at most `maxSeconds`) passed, or `signal` aborted. */
export async function waitOnJob(job: WaitableJob, { waitSeconds, signal, onProgress }: WaitOptions, maxSeconds: number): Promise<void> {
  if (job.status !== 'running' || waitSeconds <= 0 || signal?.aborted) return;
  let last = -1;
  const report = (): void => {
    const { progress, total, message } = job.progressValue();
    // Progress must rise with every notification.
    if (!onProgress || progress <= last) return;
    last = progress;
    Promise.resolve(onProgress(progress, total, message)).catch(() => undefined);
  };
  report();
  const heartbeat = setInterval(report, HEARTBEAT_MS);
  const unsubscribe = job.onChange(report);
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    await Promise.race([
      job.done,
      new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.min(waitSeconds, maxSeconds) * 1000))),
      new Promise<void>((resolve) => {
        onAbort = resolve;
        signal?.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    clearInterval(heartbeat);
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
    unsubscribe();
  }
}
