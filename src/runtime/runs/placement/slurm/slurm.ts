/**
 * The Slurm placement: a run is one job on one node, submitted with sbatch from a script the
 * server renders (script.ts), each of its processes an srun step started when the server asks
 * (control.ts), so start-up, readiness, supervision and stopping stay the server's. The run's
 * directory must be on a file system the nodes share: the steps log there, and the server and the
 * job's script meet there. See docs/architecture.md, "Runs on Slurm".
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_FILES, runFilePath, runsRoot } from '../../../../core/files/home.js';
import type { Settings } from '../../../../core/settings.js';
import type { Placement, ProcessIdentity } from '../../seams/placement.js';
import type { RunRecord } from '../../seams/record.js';
import { slurmEnv } from '../../../slurm/commands.js';
import { allocateJob } from './allocate.js';
import { BATCH_OUTPUT, JOB_SCRIPT, requestStart, stepEnded } from './control.js';
import { jobResources } from './resources.js';
import { renderJobScript } from './script.js';
import { releaseJob, stopStep } from './stop.js';
import { watchStep } from './watch.js';

/** A step's exit file is checked this often (the job itself every few checks). */
const STEP_POLL_MS = 1_000;

/** A step lives until the job's script recorded its end (or the server withdrew it before it started). */
export const SLURM_PROCESSES: ProcessIdentity = {
  isAlive: (p) => p.slurm_step !== undefined && stepEnded(p.slurm_step) === undefined,
  handle: (p) => (p.slurm_step !== undefined ? { slurm_step: p.slurm_step } : {}),
  describe: (p) => (p.slurm_step !== undefined ? `step ${p.slurm_step.name} of Slurm job ${p.slurm_step.job_id}` : 'a step never started'),
};

export function slurmPlacement(settings: Settings): Placement {
  const env = slurmEnv(settings.processEnv);
  const dirOf = (run: Pick<RunRecord, 'run_id'>): string => runFilePath(settings.home, run.run_id, RUN_FILES.slurm);
  return {
    ...SLURM_PROCESSES,
    name: 'slurm',
    // The server reaches the processes from another host than their node.
    bindHost: '0.0.0.0',
    limit: (s) => ({ max: s.slurm.maxRuns, setting: 'RL_MAX_SLURM_RUNS', where: 'on Slurm' }),
    // The run's job ended with it, and the job's script was rendered for that job's steps.
    resumeRefusal: 'a run placed on Slurm cannot be resumed in place yet: its job ended with it. Start a new run (rl_start_training with placement "slurm")',
    prepare: (run, options) => {
      const dir = dirOf(run);
      const script = renderJobScript({ run, resources: jobResources(settings.slurm, options), runDir: join(runsRoot(settings.home), run.run_id), dir, root: settings.root });
      return {
        script,
        write: () => {
          mkdirSync(dir);
          writeFileSync(join(dir, JOB_SCRIPT), script, { mode: 0o644 });
          // sbatch fails a job whose output file's directory is missing; the file itself is made here so a reader finds it.
          writeFileSync(join(dir, BATCH_OUTPUT), '', { flag: 'a' });
        },
      };
    },
    allocate: (ctx) => allocateJob(env, ctx, join(dirOf(ctx.record()), JOB_SCRIPT)),
    // The script holds each step's command and working directory; a launch hands it the step's environment and the go.
    launcher: (run) =>
      Promise.resolve((spec) => {
        if (run.slurm_job_id === undefined) return { exited: Promise.resolve({ exit_code: null, signal: null, spawn_error: 'the run has no Slurm job yet' }) };
        const step = { job_id: run.slurm_job_id, name: spec.process, dir: dirOf(run) };
        try {
          requestStart(step, spec.env);
        } catch (err) {
          return { exited: Promise.resolve({ exit_code: null, signal: null, spawn_error: `cannot ask the job's script for the step (${(err as NodeJS.ErrnoException).code ?? String(err)})` }) };
        }
        return { identity: { slurm_step: step }, exited: watchStep(env, step, STEP_POLL_MS).exited };
      }),
    watchAdopted: (p, pollMs) => watchStep(env, p.slurm_step!, pollMs),
    stop: (p, graceMs, exited) => stopStep(env, p, graceMs, exited),
    release: (run) => releaseJob(env, run, dirOf(run)),
  };
}
