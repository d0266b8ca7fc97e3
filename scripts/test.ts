/**
 * The suite's command, in its two tiers:
 *
 *   npm test                     every test (test/ and test/unit/), after installing what they need
 *   npm run test:unit            test/unit/ only: no process started, no port opened (under a minute)
 *   npm run test:prerequisites   only the installing (root with apt), as `npm test` does first
 *
 * `npm test` checks the machine (scripts/prerequisites.ts): what is missing is installed when it can
 * be, else it stops before building anything, with the one command that installs it. Then it builds
 * (the stdio tests start dist/index.js) and runs the files. The unit tier preloads
 * test/helpers/unit-tier.mjs, under which a test that starts a process or listens on a port fails.
 * Both resolve `python3` once for every test file (RL_TEST_PYTHON, test/helpers/tmp.ts).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { canInstall, missingSystemPackages, plan, pythonProblems } from './prerequisites.js';

const ROOT = join(import.meta.dirname, '..');
/**
 * Test files run at once per core: a file of the whole suite spends most of its time waiting (on
 * its servers' processes, stages, deadlines, Slurm), using about a fifth to a third of a core.
 */
const FILES_PER_CORE = 3;
const tier = process.argv[2] ?? 'all';

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): void {
  const result = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit', env });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function stop(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

/** Installs what the suite lacks, or stops with the command that would. */
function prerequisites(): void {
  const python = pythonProblems();
  if (python.length > 0) stop(`The suite cannot run yet:\n${python.map((p) => `  - ${p}`).join('\n')}`);
  const next = plan(missingSystemPackages(process.env), canInstall(process.env, process.getuid?.() ?? -1));
  if (next.kind === 'stop') stop(next.message);
  if (next.kind === 'install') {
    for (const [command, ...args] of next.commands) {
      process.stderr.write(`npm test installs what the suite needs: ${[command, ...args].join(' ')}\n`);
      run(command!, args, { ...process.env, DEBIAN_FRONTEND: 'noninteractive' });
    }
  }
}

function testFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).filter((name) => name.endsWith('.test.ts')).map((name) => join(dir, name));
}

/** A JSON file of seconds by test file, or nothing. */
function timesIn(file: string): Record<string, number> {
  try {
    return JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

/**
 * The files, longest first by the last run's times here (test/helpers/durations.mjs keeps them in
 * node_modules/.cache), else by test/durations.json (a full run's, committed for a clean clone),
 * files neither timed first of all: the runner starts them in this order, so no long file starts last.
 */
function longestFirst(files: string[]): string[] {
  const last = { ...timesIn('test/durations.json'), ...timesIn('node_modules/.cache/rl-training-mcp/test-durations.json') };
  return [...files].sort((a, b) => (last[b] ?? Infinity) - (last[a] ?? Infinity));
}

function resolvedPython(): string {
  const probe = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' });
  // Without python3 the unit tier still runs (it starts none); the whole suite stopped before this.
  return probe.status === 0 ? probe.stdout.trim() : 'python3';
}

/** node --test over `files`, with the usual report and, after it, the time each file took. */
function runTests(files: string[], flags: string[]): void {
  const reporter = process.stdout.isTTY ? 'spec' : 'tap';
  const reporters = ['--test-reporter', reporter, '--test-reporter-destination', 'stdout', '--test-reporter', './test/helpers/durations.mjs', '--test-reporter-destination', 'stdout'];
  run(process.execPath, ['--import', 'tsx', ...flags, '--test', ...reporters, ...longestFirst(files)], { ...process.env, RL_TEST_PYTHON: resolvedPython() });
}

if (tier === 'unit') {
  // Its files only compute: one at a time per core.
  runTests(testFiles('test/unit'), ['--import', './test/helpers/unit-tier.mjs', `--test-concurrency=${availableParallelism()}`]);
} else if (tier === 'prerequisites') {
  prerequisites();
} else if (tier === 'all') {
  prerequisites();
  run('npm', ['run', 'build']);
  // A test over 8 minutes has hung; the longest, answer-size (every tool at its limits), took 98 s in a run of 3 files at once on a busy 2-core machine.
  runTests([...testFiles('test'), ...testFiles('test/unit')], [`--test-concurrency=${FILES_PER_CORE * availableParallelism()}`, '--test-timeout=480000']);
} else {
  stop(`usage: node --import tsx scripts/test.ts [all|unit|prerequisites], not ${tier}`);
}
