/**
 * Whether a run has ended, for every framework and placement: a process its placement ended (a
 * Slurm job ended by its time limit, a cancel, a node failure) ends the run with the placement's
 * reason, whatever the framework would make of the exits that followed; otherwise the framework's
 * outcome rules decide.
 */
import type { RunFramework, Verdict } from '../seams/framework.js';
import { processOf, runProcesses, type RunRecord } from '../seams/record.js';

/** The placement's verdict: the first process (in start order) it ended, with its reason; a failure points at that process's log. */
export function placementVerdict(record: RunRecord): Verdict | undefined {
  for (const name of runProcesses(record)) {
    const end = processOf(record, name).ended_by;
    if (end !== undefined) return { status: end.status, error: end.reason, ...(end.status === 'failed' ? { error_process: name } : {}) };
  }
  return undefined;
}

export async function judgeRun(framework: RunFramework, record: RunRecord): Promise<Verdict | undefined> {
  return placementVerdict(record) ?? (await framework.judge(record));
}
