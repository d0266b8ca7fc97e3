/**
 * The local placement: each process a detached child of this host leading its own process group,
 * named by pid and start time (pids are reused), its output appended to its log; stopping signals
 * the whole group, so grandchildren go too. Nothing holds the run beyond its processes.
 */
import { UserError } from '../../../core/errors.js';
import type { Placement } from '../seams/placement.js';
import { launchDetached, stopGroup, watchAdopted } from '../supervision/processes.js';
import { isSameProcess } from '../../../core/os/processTable.js';

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
      return { exited: launched.exited, ...(pid !== undefined ? { identity: { pid, pgid: pid, start_time: launched.startTime } } : {}) };
    }),
  isAlive: (p) => typeof p.pid === 'number' && isSameProcess(p.pid, p.start_time ?? null),
  handle: (p) => ({ pid: p.pid, start_time: p.start_time }),
  describe: (p) => `process group ${p.pid}`,
  watchAdopted: (p, pollMs) => watchAdopted(p.pid!, p.start_time, pollMs),
  // An exited leader may leave children in its group (e.g. a trainer that crashed): they go too.
  // Without its start time a long-dead leader's pid could name someone else's group.
  stop: async (p, graceMs, exited) => (p.pid === null || (p.state !== 'running' && p.start_time === null) ? 'already_gone' : stopGroup({ pid: p.pid, startTime: p.start_time }, graceMs, exited)),
  release: () => Promise.resolve(undefined),
};
