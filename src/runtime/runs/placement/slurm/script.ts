/**
 * The job script of a run placed on Slurm: one job on one node, each of the run's processes an
 * `srun` step of it, started in the framework's order when the server asks (control.ts), so the
 * server's own readiness checks decide, as for a local run. Each step asks for its CPUs and memory
 * (without them a step takes the whole job and the next waits); the job asks for their sum, never
 * requeues (a requeued run would start again from nothing), and writes nothing secret: a step's
 * keys come from the file the server writes for it.
 */
import { UserError } from '../../../../core/errors.js';
import { processOf, runProcesses, type RunRecord } from '../../seams/record.js';
import { BATCH_OUTPUT, shellWord } from './control.js';
import type { JobResources } from './resources.js';

export interface ScriptPlan {
  run: RunRecord;
  resources: JobResources;
  /** The run's directory and its `slurm/` directory. */
  runDir: string;
  dir: string;
  /** Where a process without its own working directory runs (the install's root). */
  root: string;
}

export const jobName = (runId: string): string => `rl-${runId}`;

/** `#SBATCH` lines take a path in double quotes, and sbatch and srun read `%` in output paths as a pattern. */
const UNSAFE_IN_OPTIONS = /["%\\\n\r$`]/;

const STEP_FUNCTION = `# step NAME LOG CWD COMMAND...: waits until the server asks for the step (taking NAME.start by
# renaming it), runs it with its environment from NAME.env, then records srun's exit status.
step() {
  local name=$1 log=$2 cwd=$3
  shift 3
  until mv "$dir/$name.start" "$dir/$name.started" 2>/dev/null; do sleep 0.25; done
  (
    srun --ntasks=1 --nodes=1 --cpus-per-task="$cpus" --mem="$mem" --job-name="$name" \\
      --chdir="$cwd" --output="$log" --open-mode=append \\
      /bin/bash -c 'e=$1; shift; if [ -f "$e" ]; then . "$e"; rm -f "$e"; fi; exec "$@"' step "$dir/$name.env" "$@"
    echo $? >"$dir/$name.exit.tmp" && mv "$dir/$name.exit.tmp" "$dir/$name.exit"
  ) &
}`;

function options(plan: ScriptPlan): string[] {
  const { run, resources, runDir, dir } = plan;
  const count = runProcesses(run).length;
  return [
    `--job-name=${jobName(run.run_id)}`,
    `--output="${dir}/${BATCH_OUTPUT}"`,
    '--open-mode=append',
    `--chdir="${runDir}"`,
    '--nodes=1',
    '--ntasks=1',
    `--cpus-per-task=${resources.cpusPerProcess * count}`,
    `--mem=${resources.memPerProcessMb * count}M`,
    '--no-requeue',
    ...(resources.partition !== undefined ? [`--partition=${resources.partition}`] : []),
    ...(resources.account !== undefined ? [`--account=${resources.account}`] : []),
    ...(resources.timeLimit !== undefined ? [`--time=${resources.timeLimit}`] : []),
  ];
}

export function renderJobScript(plan: ScriptPlan): string {
  const { run, resources, runDir, dir, root } = plan;
  if (UNSAFE_IN_OPTIONS.test(runDir)) {
    throw new UserError(`The run directory ${runDir} cannot be named in a Slurm job script (it holds one of " % \\ $ \` or a line break): set RL_HOME to a path without them.`, { setting: 'RL_HOME' });
  }
  const names = runProcesses(run);
  const steps = names.map((name) => {
    const p = processOf(run, name);
    return `step ${[name, run.logs[name]!, p.cwd ?? root, ...p.command].map(shellWord).join(' ')}`;
  });
  return [
    '#!/bin/bash',
    `# rl-training-mcp run ${run.run_id} (${run.framework}): its processes ${names.join(', ')} as steps of this job, started`,
    '# in that order, each once the server found the one before ready. No key is in this script, its',
    "# job's environment or a command line: each step reads its environment from a 0600 file the",
    '# server writes for it, and removes it.',
    ...options(plan).map((o) => `#SBATCH ${o}`),
    '',
    `dir=${shellWord(dir)}`,
    `cpus=${resources.cpusPerProcess}`,
    `mem=${resources.memPerProcessMb}M`,
    '',
    STEP_FUNCTION,
    '',
    ...steps,
    'wait',
    '',
  ].join('\n');
}
