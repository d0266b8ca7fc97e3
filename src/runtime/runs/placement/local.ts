/**
 * The local placement: each process a detached child of this host leading its own process group,
 * named by pid and start time (pids are reused), its output appended to its log; stopping signals
 * the whole group, so grandchildren go too. Nothing holds the run beyond its processes.
 */
import { UserError } from '../../../core/errors.js';
import type { Placement } from '../seams/placement.js';
import { launchDetached, stopGroup, watchAdopted } from '../supervision/processes.js';
import { isSameProcess } from '../../../core/os/processTable.js';
import { hostRelation, THIS_HOST } from '../../../core/os/host.js';

export const LOCAL: Placement = {
  name: 'local',
  bindHost: '127.0.0.1',
  limit: (settings) => ({ max: settings.maxConcurrentRuns, setting: 'RL_MAX_CONCURRENT_RUNS', where: 'on this host' }),
  resumeRefusal: undefined,
  prepare: (_run, options) => {
    const given = Object.keys(options);
    if (given.length > 0) {
      throw new UserError(`${given.join(', ')} ${given.length === 1 ? 'applies' : 'apply'} to runs placed on Slurm only: pass placement "slurm", or leave them out to run on this host.`, { placement: 'local', options: given });
    }
    return { write: () => undefined };
  },
  allocate: () => Promise.resolve('ready'),
  launcher: () =>
    Promise.resolve((spec) => {
      const launched = launchDetached(spec.command, { cwd: spec.cwd, env: spec.env, logPath: spec.logPath });
      const { pid } = launched;
      return { exited: launched.exited, ...(pid !== undefined ? { identity: { pid, pgid: pid, start_time: launched.startTime, host: THIS_HOST } } : {}) };
    }),
  // On another host its pid means nothing here: it is that host's to judge (its keeper's lease
  // says whether anything keeps it), and counts as alive; on an earlier boot of this host it is gone.
  isAlive: (p) => {
    const where = hostRelation(p.host);
    return where === 'elsewhere' || (where === 'here' && typeof p.pid === 'number' && isSameProcess(p.pid, p.start_time ?? null));
  },
  handle: (p) => ({ pid: p.pid, start_time: p.start_time, ...(p.host ? { host: p.host } : {}) }),
  describe: (p) => `process group ${p.pid}${hostRelation(p.host) === 'elsewhere' ? ` on ${p.host!.hostname}` : ''}`,
  watchAdopted: (p, pollMs) => watchAdopted(p.pid!, p.start_time, pollMs),
  // An exited leader may leave children in its group (e.g. a trainer that crashed): they go too.
  // Without its start time a long-dead leader's pid could name someone else's group.
  // A pid of another host names some process of this one: never signalled (only its host's keeper stops it).
  stop: async (p, graceMs, exited) => {
    const where = hostRelation(p.host);
    if (where === 'elsewhere') return 'unkillable';
    if (where === 'rebooted' || p.pid === null || (p.state !== 'running' && p.start_time === null)) return 'already_gone';
    return stopGroup({ pid: p.pid, startTime: p.start_time }, graceMs, exited);
  },
  release: () => Promise.resolve(undefined),
};
