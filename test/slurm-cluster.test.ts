/**
 * scripts/slurm-cluster.sh against the real Slurm (Debian's 22.05): private clusters come up side
 * by side (as two test files' do), run jobs whose steps start in order and stop the way a run's
 * processes are stopped, keep accounts when asked, and go down leaving no process behind.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { waitFor } from './helpers/fakeProcesses.js';
import { clusterProcesses, slurmMissing, startSlurmCluster, type SlurmCluster } from './helpers/slurm.js';

// The second step starts once the first is ready (its file written), as a run's processes do.
const BATCH_SCRIPT = `#!/bin/bash
step() { srun --ntasks=1 --cpus-per-task=1 --mem=50M --job-name="$1" --output="$1.out" bash -c "$2" & }
step first 'touch first.ready; exec sleep 600'
until [ -e first.ready ]; do sleep 0.1; done
step second 'trap "echo TERM received; exit 0" TERM; touch second.ready; while :; do sleep 0.1; done'
wait
`;

async function submit(cluster: SlurmCluster, args: string[]): Promise<string> {
  const job = (await cluster.run('sbatch', ['--parsable', '--no-requeue', ...args])).trim();
  assert.match(job, /^\d+$/, 'sbatch --parsable prints the job id alone');
  return job;
}

async function stopLeavingNothing(cluster: SlurmCluster): Promise<void> {
  await cluster.stop();
  assert.deepEqual(clusterProcesses(cluster.dir), [], 'no daemon, step or job process of the cluster is left');
  await cluster.stop();
}

// Concurrently: each cluster has its own ports, munge socket, node and cgroups.
describe('private Slurm clusters', { concurrency: 2, skip: slurmMissing({ accounting: true }) }, () => {
  test('a job of two ordered steps: one stopped with TERM, then the job cancelled', async () => {
    const cluster = await startSlurmCluster();
    assert.match(await cluster.run('sinfo', ['-h', '-o', '%P %a']), /^main\* up$/m);
    const work = join(cluster.dir, 'job');
    mkdirSync(work);
    writeFileSync(join(work, 'run.sh'), BATCH_SCRIPT);
    const job = await submit(cluster, ['--ntasks=2', '--mem=200M', '--time=5', `--chdir=${work}`, '--output=batch.out', join(work, 'run.sh')]);

    /** The job's running steps, by name: their ids ("<job>.<n>"). */
    const steps = async () => {
      const out = await cluster.run('squeue', ['-h', '-s', '-j', job, '-O', 'StepId:|,StepName:|']);
      return new Map(out.trim().split('\n').filter(Boolean).map((l) => { const [id, name] = l.split('|'); return [name!, id!]; }));
    };
    const both = await waitFor('both steps running', async () => { const s = await steps(); return s.has('first') && s.has('second') && s; });
    const [first, second] = [both.get('first')!, both.get('second')!];
    assert.ok(Number(first.split('.')[1]) < Number(second.split('.')[1]), `the steps were created in order: ${first}, ${second}`);
    await waitFor('the second step ready', () => readdirSync(work).includes('second.ready'));

    await cluster.run('scancel', ['--signal=TERM', second]);
    await waitFor('the second step gone', async () => !(await steps()).has('second'));
    assert.match(readFileSync(join(work, 'second.out'), 'utf8'), /TERM received/, 'the step\'s process got the TERM');
    assert.ok((await steps()).has('first'), 'a TERM to one step leaves the others running');

    await cluster.run('scancel', [job]);
    await waitFor('the job cancelled', async () => (await cluster.run('squeue', ['-h', '-t', 'all', '-j', job, '-o', '%T'])).trim() === 'CANCELLED');
    await stopLeavingNothing(cluster);
  });

  test('with accounting, sacct has the job and its steps with their ends', async () => {
    const cluster = await startSlurmCluster({ accounting: true });
    const job = await submit(cluster, ['--output=/dev/null', '--wrap', 'srun --job-name=only true; exit 3']);
    const accounted = await waitFor('the job accounted as ended', async () => {
      const out = await cluster.run('sacct', ['-j', job, '--parsable2', '--noheader', '--format=JobID,JobName,State,ExitCode']);
      return out.includes(`${job}|wrap|FAILED|3:0`) && out;
    });
    assert.match(accounted, new RegExp(`^${job}\\.0\\|only\\|COMPLETED\\|0:0$`, 'm'), accounted);
    await stopLeavingNothing(cluster);
  });
});
