/**
 * Where runs are placed: RL_PLACEMENT (`local`, the default, or `slurm`), and what a run's Slurm
 * job asks for unless its start says otherwise: RL_SLURM_PARTITION and RL_SLURM_ACCOUNT (Slurm's
 * defaults when unset), RL_SLURM_TIME_LIMIT (the partition's when unset), RL_SLURM_CPUS_PER_PROCESS
 * and RL_SLURM_MEM_PER_PROCESS (each of the run's processes is one step), RL_MAX_SLURM_RUNS.
 */
import { SettingsError } from '../../core/errors.js';
import type { PlacementSettings } from '../../core/settings.js';
import { isSlurmName, isTimeLimit, memoryMb, MEMORY_FORMS, TIME_LIMIT_FORMS } from '../slurm/values.js';

export const PLACEMENT_KEYS = [
  'RL_PLACEMENT', 'RL_SLURM_PARTITION', 'RL_SLURM_ACCOUNT', 'RL_SLURM_TIME_LIMIT', 'RL_SLURM_CPUS_PER_PROCESS', 'RL_SLURM_MEM_PER_PROCESS', 'RL_MAX_SLURM_RUNS',
] as const;
type PlacementKey = (typeof PLACEMENT_KEYS)[number];

export const DEFAULT_SLURM_CPUS_PER_PROCESS = 2;
export const DEFAULT_SLURM_MEM_PER_PROCESS = '4G';

function count(key: PlacementKey, raw: string, max: number): number {
  const n = Number(raw.trim());
  if (!/^\d+$/.test(raw.trim()) || n < 1 || n > max) throw new SettingsError(`${key}=${JSON.stringify(raw)} is not a whole number from 1 to ${max}`);
  return n;
}

function name(key: PlacementKey, raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!isSlurmName(raw.trim())) throw new SettingsError(`${key}=${JSON.stringify(raw)} is not a Slurm ${key === 'RL_SLURM_ACCOUNT' ? 'account' : 'partition'} name (letters, digits, _ . + -; partitions may be a comma-separated list)`);
  return raw.trim();
}

export function placementSettings(get: (key: PlacementKey) => string | undefined): PlacementSettings {
  const placement = (get('RL_PLACEMENT') ?? 'local').trim().toLowerCase();
  if (placement !== 'local' && placement !== 'slurm') throw new SettingsError(`RL_PLACEMENT=${JSON.stringify(placement)} is not local or slurm`);
  const timeLimit = get('RL_SLURM_TIME_LIMIT')?.trim();
  if (timeLimit !== undefined && !isTimeLimit(timeLimit)) throw new SettingsError(`RL_SLURM_TIME_LIMIT=${JSON.stringify(timeLimit)} is not a Slurm time limit: ${TIME_LIMIT_FORMS}`);
  const memory = get('RL_SLURM_MEM_PER_PROCESS') ?? DEFAULT_SLURM_MEM_PER_PROCESS;
  const memPerProcessMb = memoryMb(memory);
  if (memPerProcessMb === undefined) throw new SettingsError(`RL_SLURM_MEM_PER_PROCESS=${JSON.stringify(memory)} is not an amount of memory: ${MEMORY_FORMS}`);
  const partition = name('RL_SLURM_PARTITION', get('RL_SLURM_PARTITION'));
  const account = name('RL_SLURM_ACCOUNT', get('RL_SLURM_ACCOUNT'));
  return {
    placement,
    slurm: {
      ...(partition !== undefined ? { partition } : {}),
      ...(account !== undefined ? { account } : {}),
      ...(timeLimit !== undefined ? { timeLimit } : {}),
      cpusPerProcess: count('RL_SLURM_CPUS_PER_PROCESS', get('RL_SLURM_CPUS_PER_PROCESS') ?? String(DEFAULT_SLURM_CPUS_PER_PROCESS), 1024),
      memPerProcessMb,
      maxRuns: count('RL_MAX_SLURM_RUNS', get('RL_MAX_SLURM_RUNS') ?? '4', 1024),
    },
  };
}
