/**
 * What a Slurm job's state means for its run, as pure decisions over what squeue and sacct print
 * (Slurm 22.05's state names): queued, running, completing, or ended, and then whether Slurm
 * ended it (a time limit, a cancel, a node failure, a preemption) and with which words.
 */
import type { PlacementEnd } from '../../seams/record.js';

export type JobPhase = 'queued' | 'running' | 'completing' | 'ended';

export interface JobView {
  phase: JobPhase;
  /** Slurm's state (`sacct` may add who cancelled: `CANCELLED by 0`). */
  state: string;
  /** Slurm's reason (`None` when it gives none). */
  reason: string;
  /** The node list of a job that got one. */
  nodes?: string;
}

const QUEUED = new Set(['PENDING', 'CONFIGURING', 'REQUEUED', 'REQUEUE_FED', 'REQUEUE_HOLD', 'RESV_DEL_HOLD']);
const RUNNING = new Set(['RUNNING', 'SUSPENDED', 'STOPPED', 'SIGNALING', 'STAGE_OUT', 'RESIZING', 'UPDATE_DB', 'POWER_UP_NODE']);

function phaseOf(state: string): JobPhase {
  const name = state.split(' ')[0]!;
  if (QUEUED.has(name)) return 'queued';
  if (RUNNING.has(name)) return 'running';
  return name === 'COMPLETING' ? 'completing' : 'ended';
}

/** squeue's `%T|%r|%N` line. */
export function parseQueueLine(line: string): JobView {
  const [state = '', reason = '', nodes = ''] = line.trim().split('|');
  return { phase: phaseOf(state), state, reason: reason || 'None', ...(nodes ? { nodes } : {}) };
}

/** sacct's `State|Reason|ExitCode` job row. */
export function parseAccountingLine(line: string): JobView {
  const [state = '', reason = ''] = line.trim().split('|');
  return { phase: phaseOf(state), state, reason: reason || 'None' };
}

/** Why a job waits, for the run's health: the queue reason in Slurm's word and what it means. */
const WAITING: Record<string, string> = {
  None: 'the scheduler has not looked at it yet',
  Resources: 'the nodes are busy: it starts when enough CPUs and memory are free',
  Priority: 'jobs of higher priority go first',
  Dependency: 'it waits for another job',
  JobHeldUser: 'a user holds it (scontrol release)',
  JobHeldAdmin: 'an administrator holds it',
  BeginTime: 'its start time has not come',
  PartitionDown: 'its partition is down',
  PartitionInactive: 'its partition is inactive',
  PartitionTimeLimit: "its time limit is over the partition's: lower RL_SLURM_TIME_LIMIT or the start's slurm.time_limit",
  PartitionConfig: "it asks more than the partition's nodes have: lower RL_SLURM_CPUS_PER_PROCESS or RL_SLURM_MEM_PER_PROCESS",
  ReqNodeNotAvail: 'the nodes it may use are not available (down, drained or reserved)',
};

export function queuedReason(jobId: string, view: JobView): string {
  const word = view.reason.split(',')[0]!;
  const meaning = WAITING[word] ?? (word.startsWith('Assoc') || word.startsWith('QOS') ? 'a limit of its account or QOS holds it' : undefined);
  return `Slurm job ${jobId} is ${view.state.toLowerCase()}: ${view.reason}${meaning ? ` (${meaning})` : ''}.`;
}

/**
 * The run's outcome when Slurm ended its job while its processes ran: a cancel from outside the
 * server is a stop; a time limit, a node failure, a preemption or anything else is a failure. A
 * job that completed (its script's own end), or has not ended, is no verdict: its processes' exits speak.
 */
export function jobEnd(jobId: string, view: JobView): PlacementEnd | undefined {
  if (view.phase !== 'ended') return undefined;
  const name = view.state.split(' ')[0]!;
  const said = `${view.state}${view.reason !== 'None' ? `, ${view.reason}` : ''}`;
  switch (name) {
    case 'COMPLETED':
      return undefined;
    case 'CANCELLED':
      return { status: 'stopped', reason: `Slurm job ${jobId} was cancelled outside this server (${said}).` };
    case 'TIMEOUT':
      return { status: 'failed', reason: `Slurm ended job ${jobId} at its time limit (${said}): give runs more time with RL_SLURM_TIME_LIMIT or the start's slurm.time_limit.` };
    case 'NODE_FAIL':
      return { status: 'failed', reason: `Slurm ended job ${jobId}: its node failed (${said}${view.nodes ? `, node ${view.nodes}` : ''}).` };
    case 'PREEMPTED':
      return { status: 'failed', reason: `Slurm preempted job ${jobId} for a job of higher priority (${said}).` };
    case 'OUT_OF_MEMORY':
      return { status: 'failed', reason: `Slurm ended job ${jobId}: a step used more memory than it asked for (${said}); raise RL_SLURM_MEM_PER_PROCESS.` };
    default:
      return { status: 'failed', reason: `Slurm ended job ${jobId} (${said}).` };
  }
}

/** srun's exit status of a step: the process's code, or 128 + the signal that ended it. */
export function stepExit(status: number): { exit_code: number | null; signal: string | null } {
  const SIGNALS: Record<number, string> = { 1: 'SIGHUP', 2: 'SIGINT', 6: 'SIGABRT', 9: 'SIGKILL', 15: 'SIGTERM' };
  const signal = status > 128 ? SIGNALS[status - 128] : undefined;
  return signal ? { exit_code: null, signal } : { exit_code: status, signal: null };
}
