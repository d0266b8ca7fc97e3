/**
 * When to try a W&B request again and how long to wait first: 429 and 5xx except
 * 501 are retried, every other 4xx is final; the server's own wait wins over our backoff.
 */

export function isRetryableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status !== 501);
}

/**
 * The wait the server asked for, in ms: `Retry-After` (seconds or an HTTP date), else on a 429 the
 * documented `RateLimit-Reset` seconds. Undefined when neither is usable.
 */
export function serverRequestedDelayMs(status: number, headers: Headers, now = Date.now()): number | undefined {
  const retryAfter = headers.get('retry-after')?.trim();
  if (retryAfter) {
    const secs = Number(retryAfter);
    if (Number.isFinite(secs) && secs >= 0) return secs * 1000;
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.max(0, date - now);
  }
  if (status === 429) {
    const reset = Number(headers.get('ratelimit-reset')?.trim() || Number.NaN);
    if (Number.isFinite(reset) && reset >= 0) return reset * 1000;
  }
  return undefined;
}

/** Exponential backoff with up to 25 % jitter (as wandb-core), attempt counted from 0. */
export function backoffDelayMs(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  return Math.min(maxMs, baseMs * 2 ** attempt * (1 + 0.25 * random()));
}
