/**
 * What runs placed on Slurm need (checked by their starts, and by the doctor when RL_PLACEMENT is
 * slurm): Slurm's commands on this host, a controller that answers, the partition the jobs go
 * to, and, for the doctor, accounting (sacct) and a node that sees RL_HOME, where the steps log
 * and the server and the job's script meet.
 */
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { failureText, runSlurm } from '../slurm/commands.js';
import { always, met, never, unmet, type Outcome, type Requirement, type StartContext } from './requirement.js';
import { SLURM_COMMANDS as NEEDED } from './slurmProbe.js';

const onSlurm = (ctx: StartContext): boolean => ctx.placement === 'slurm';
const INSTALL = "Install Slurm's client commands on this host (Debian: apt-get install slurm-client) and put them on the server's PATH; scripts/install-slurm.sh sets up a cluster of one machine to try it.";

export const SLURM_COMMANDS: Requirement = {
  check: 'slurm commands',
  applies: onSlurm,
  required: always,
  atStart: true,
  async evaluate(ctx) {
    const { missing, missingOptional } = await ctx.slurm();
    const optional = missingOptional.length > 0 ? `; not found: ${missingOptional.join(', ')} (optional)` : '';
    if (missing.length === 0) return met(`${NEEDED.join(', ')} found${optional}`);
    return unmet(`not found: ${[...missing, ...missingOptional].join(', ')}`, `Slurm's ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not found on this host: a run placed on Slurm is submitted, followed and cancelled with them. ${INSTALL}`, {
      missing,
    });
  },
};

export const SLURM_CONTROLLER: Requirement = {
  check: 'slurm controller',
  applies: onSlurm,
  required: always,
  atStart: true,
  async evaluate(ctx) {
    const { controller } = await ctx.slurm();
    return controller.up ? met(controller.detail) : unmet(controller.detail, controller.message);
  },
};

export const SLURM_PARTITION: Requirement = {
  check: 'slurm partition',
  applies: onSlurm,
  required: always,
  atStart: true,
  async evaluate(ctx) {
    const { controller, partitions } = await ctx.slurm();
    const wanted = ctx.settings.slurm.partition;
    if (!controller.up || partitions === undefined) return unmet('not checked: the controller does not answer', `The Slurm partition${wanted ? ` ${wanted}` : ''} cannot be checked: the controller does not answer.`);
    const names = wanted?.split(',') ?? partitions.filter((p) => p.isDefault).map((p) => p.name);
    if (names.length === 0) return unmet('no default partition', `Slurm has no default partition: set RL_SLURM_PARTITION to one of ${partitions.map((p) => p.name).join(', ')}.`, { setting: 'RL_SLURM_PARTITION' });
    const unknown = names.filter((n) => !partitions.some((p) => p.name === n));
    if (unknown.length > 0) {
      return unmet(`${unknown.join(', ')} not found`, `Slurm has no partition ${unknown.join(', ')} (RL_SLURM_PARTITION): use one of ${partitions.map((p) => p.name).join(', ')}.`, { setting: 'RL_SLURM_PARTITION' });
    }
    const down = partitions.filter((p) => names.includes(p.name) && p.state !== 'UP');
    if (down.length > 0) return unmet(`${down.map((p) => `${p.name} is ${p.state}`).join(', ')}`, `The Slurm partition ${down.map((p) => `${p.name} is ${p.state}`).join(', ')}: its jobs would wait until it is up. Ask the cluster's operator, or set RL_SLURM_PARTITION to another one.`);
    return met(`${names.join(', ')} up${wanted ? '' : ' (the default)'}`);
  },
};

/** Doctor only: without accounting a job the controller forgot (MinJobAge, 300 s by default) is known by its steps' files only. */
export const SLURM_ACCOUNTING: Requirement = {
  check: 'slurm accounting',
  applies: onSlurm,
  required: never,
  atStart: false,
  async evaluate(ctx) {
    const { env, missingOptional, controller } = await ctx.slurm();
    if (missingOptional.includes('sacct') || !controller.up) return undefined;
    const result = await runSlurm(env, 'sacct', ['-n', '-X', '-j', '1', '-o', 'JobID']);
    if (result.code === 0) return met('sacct answers: a job the controller forgot is looked up there');
    const detail = failureText(result);
    return unmet(detail, `sacct does not answer (${detail}): a run whose job ended while no server watched, more than the controller remembers jobs (MinJobAge, 300 s by default), is then judged from its steps' exit files and logs, without Slurm's reason.`);
  },
};

async function nodeSees(ctx: StartContext, marker: string): Promise<Outcome> {
  const { env } = await ctx.slurm();
  const partition = ctx.settings.slurm.partition?.split(',')[0];
  const args = ['-N1', '-n1', '-t', '1', '--mem=16M', '-J', 'rl-doctor', '--immediate=30', ...(partition ? ['-p', partition] : []), 'test', '-e', marker];
  const result = await runSlurm(env, 'srun', args, 60_000);
  if (result.code === 0) return met(`a node of ${partition ?? 'the default partition'} sees ${ctx.settings.home}`);
  if (/exit code 1\b/.test(result.stderr)) {
    return unmet(`a node does not see ${ctx.settings.home}`, `A Slurm node does not see RL_HOME (${ctx.settings.home}): a run's steps log there and start by the files the server writes there. Put RL_HOME on a file system the nodes share (NFS, Lustre, ...).`, { setting: 'RL_HOME' });
  }
  const detail = failureText(result);
  return unmet(`not checked: ${detail}`, `Whether the nodes see RL_HOME could not be checked (srun: ${detail}); it must be on a file system they share.`);
}

/** Doctor only (it takes an allocation): a node finds a file this server just wrote in RL_HOME. */
export const RL_HOME_SHARED: Requirement = {
  check: 'RL_HOME shared',
  applies: onSlurm,
  required: always,
  atStart: false,
  async evaluate(ctx) {
    const { missingOptional, controller } = await ctx.slurm();
    if (missingOptional.includes('srun') || !controller.up) return undefined;
    const marker = join(ctx.settings.home, `.shared-${randomBytes(4).toString('hex')}`);
    try {
      writeFileSync(marker, '');
    } catch {
      return undefined; // The RL_HOME check says it is not writable.
    }
    try {
      return await nodeSees(ctx, marker);
    } finally {
      rmSync(marker, { force: true });
    }
  },
};
