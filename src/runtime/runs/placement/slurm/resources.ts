/**
 * What a run's Slurm job asks for: the settings' values (RL_SLURM_*), each replaced by the start's
 * own when it gives one, checked before any of them reaches a job script.
 */
import { UserError } from '../../../../core/errors.js';
import type { Settings } from '../../../../core/settings.js';
import { isSlurmName, isTimeLimit, memoryMb, MEMORY_FORMS, TIME_LIMIT_FORMS } from '../../../slurm/values.js';
import type { PlacementOptions } from '../../seams/placement.js';

export interface JobResources {
  partition?: string;
  account?: string;
  timeLimit?: string;
  cpusPerProcess: number;
  memPerProcessMb: number;
}

function refuse(field: string, value: unknown, expected: string): never {
  throw new UserError(`slurm.${field} ${JSON.stringify(value)} is not ${expected}.`, { field: `slurm.${field}`, expected });
}

export function jobResources(settings: Settings['slurm'], options: PlacementOptions): JobResources {
  const { partition = settings.partition, account = settings.account, time_limit: timeLimit = settings.timeLimit } = options;
  if (partition !== undefined && !isSlurmName(partition)) refuse('partition', partition, 'a Slurm partition name (or a comma-separated list)');
  if (account !== undefined && !isSlurmName(account)) refuse('account', account, 'a Slurm account name');
  if (timeLimit !== undefined && !isTimeLimit(timeLimit)) refuse('time_limit', timeLimit, `a Slurm time limit: ${TIME_LIMIT_FORMS}`);
  const cpus = options.cpus_per_process ?? settings.cpusPerProcess;
  if (!Number.isInteger(cpus) || cpus < 1) refuse('cpus_per_process', cpus, 'a whole number of CPUs >= 1');
  const mem = options.mem_per_process === undefined ? settings.memPerProcessMb : memoryMb(options.mem_per_process);
  if (mem === undefined) refuse('mem_per_process', options.mem_per_process, `an amount of memory: ${MEMORY_FORMS}`);
  return {
    ...(partition !== undefined ? { partition } : {}),
    ...(account !== undefined ? { account } : {}),
    ...(timeLimit !== undefined ? { timeLimit } : {}),
    cpusPerProcess: cpus,
    memPerProcessMb: mem,
  };
}
