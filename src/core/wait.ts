/** Bounded waiting that leaves no timer or listener behind. */

/** Resolves after `ms`, or at once when `signal` aborts; leaves no timer or listener behind. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Waits for `work`, but no longer than `ms` (or until `signal` aborts). */
export async function waitAtMost(work: Promise<unknown>, ms: number, signal?: AbortSignal): Promise<void> {
  const settled = new AbortController();
  void work.finally(() => settled.abort());
  await delay(ms, signal ? AbortSignal.any([signal, settled.signal]) : settled.signal);
}
