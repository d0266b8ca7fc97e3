/**
 * One look at Slurm from this server, shared by the checks a start and the doctor make: which of
 * its commands are on PATH, whether SLURM_CONF names a file (a wrong path makes every command
 * retry for a minute), whether the controller answers (`scontrol ping` says at once), and its
 * partitions.
 */
import { existsSync } from 'node:fs';
import type { Settings } from '../../core/settings.js';
import { failureText, missingPrograms, runSlurm, slurmEnv } from '../slurm/commands.js';

/** What a run needs on the server's host: submitting, following and cancelling its job. */
export const SLURM_COMMANDS = ['sbatch', 'squeue', 'scancel', 'scontrol'] as const;
/** sacct looks up jobs the controller forgot (where accounting is on); srun lets the doctor ask a node. */
export const OPTIONAL_SLURM_COMMANDS = ['sacct', 'srun'] as const;

export interface SlurmPartition {
  name: string;
  isDefault: boolean;
  state: string;
}

export interface SlurmProbe {
  env: Record<string, string>;
  missing: string[];
  missingOptional: string[];
  /** The controller answers, or why it does not (as a detail and a whole sentence with the fix). */
  controller: { up: true; detail: string } | { up: false; detail: string; message: string };
  /** Known when the controller answers. */
  partitions?: SlurmPartition[];
}

const CONTROLLER_FIX = 'Start it (or ask the cluster\'s operator), or point SLURM_CONF at the cluster\'s slurm.conf in the server\'s environment.';

async function controller(env: Record<string, string>, missing: string[]): Promise<SlurmProbe['controller']> {
  if (missing.includes('scontrol')) return { up: false, detail: 'not asked: scontrol is not installed', message: "Slurm's controller cannot be asked: scontrol is not installed on this host." };
  const conf = env.SLURM_CONF;
  if (conf !== undefined && !existsSync(conf)) {
    return { up: false, detail: `SLURM_CONF=${conf} does not exist`, message: `SLURM_CONF names ${conf}, which does not exist: every Slurm command would wait a minute and fail. Point SLURM_CONF at the cluster's slurm.conf, or unset it.` };
  }
  const ping = await runSlurm(env, 'scontrol', ['ping'], 20_000);
  const said = ping.stdout.trim().split('\n').filter(Boolean).join('; ');
  if (ping.code === 0 && /\bis UP\b/.test(said)) return { up: true, detail: said };
  const detail = said || failureText(ping);
  return { up: false, detail, message: `Slurm's controller does not answer (${detail}): runs placed on Slurm cannot be submitted or followed. ${CONTROLLER_FIX}` };
}

/** `scontrol -o show partition` lines: PartitionName=... Default=YES|NO ... State=UP|DOWN|... */
export function parsePartitions(text: string): SlurmPartition[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('PartitionName='))
    .map((line) => ({
      name: /^PartitionName=(\S+)/.exec(line)![1]!,
      isDefault: /\bDefault=YES\b/.test(line),
      state: /\bState=(\S+)/.exec(line)?.[1] ?? 'UNKNOWN',
    }));
}

export async function probeSlurm(settings: Settings): Promise<SlurmProbe> {
  const env = slurmEnv(settings.processEnv);
  const missing = missingPrograms(env, SLURM_COMMANDS);
  const missingOptional = missingPrograms(env, OPTIONAL_SLURM_COMMANDS);
  const state = await controller(env, missing);
  if (!state.up) return { env, missing, missingOptional, controller: state };
  const shown = await runSlurm(env, 'scontrol', ['-o', 'show', 'partition']);
  return { env, missing, missingOptional, controller: state, ...(shown.code === 0 ? { partitions: parsePartitions(shown.stdout) } : {}) };
}
