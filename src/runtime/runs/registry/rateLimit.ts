/**
 * The rl_check_status rate limit: one full check per run per window, stamped
 * in run.json so it holds across restarts and servers. Only full checks of existing runs open a
 * window, and a run that has ended since the last full check is always reported in full.
 */
import { isEnded, type RunRecord } from '../seams/record.js';

export type WindowDecision = { limited: false } | { limited: true; next_check_in_seconds: number; message: string };

function waitText(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

export function statusWindow(record: RunRecord, intervalSeconds: number, now: number): WindowDecision {
  const last = Date.parse(record.last_full_check_at ?? '');
  if (intervalSeconds <= 0 || Number.isNaN(last)) return { limited: false };
  const endedMs = Date.parse(record.ended_at ?? '');
  if (isEnded(record.status) && !(endedMs <= last)) return { limited: false };
  const remainingMs = last + intervalSeconds * 1000 - now;
  if (remainingMs <= 0) return { limited: false };
  // Rounded up, so the answer is never "0" and waiting that long always suffices.
  const seconds = Math.ceil(remainingMs / 1000);
  return { limited: true, next_check_in_seconds: seconds, message: `Rate limited. Next check available in ${waitText(seconds)}.` };
}
