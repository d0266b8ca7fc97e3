/**
 * rl_check_environment's offline checks on the bundled environments (the Atropos examples, the fake
 * cookbook's math_rl recipe and its verifiers gsm8k), each the wall time of one check with 5 items,
 * beside the floor of any check measured in the same run: an interpreter importing the framework's
 * base module and nothing else. The interpreter is a fake install's venv (test/helpers/fakeInstall.ts)
 * with tinker-cookbook and the verifiers gsm8k environment installed as pip installs them: a
 * verifiers environment is found among installed distributions, so a bare PYTHONPATH would offer
 * no `cookbook:gsm8k`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Runtime } from '../src/runtime/wiring/runtime.js';
import { loadSettings } from '../src/runtime/config/settings.js';
import { makeFakeInstall } from '../test/helpers/fakeInstall.js';
import type { BenchFigure } from './run.js';

const ENVIRONMENTS = ['atropos:gsm8k', 'word_sort', 'countdown', 'math_rl', 'cookbook:gsm8k'];

export default async function readinessBench(): Promise<BenchFigure[]> {
  const home = mkdtempSync(join(tmpdir(), 'rlmcp-bench-readiness-'));
  const install = await makeFakeInstall({ dir: home, cookbook: true });
  const runtime = new Runtime(loadSettings({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TINKER_ATROPOS_ROOT: install.root, RL_PYTHON: install.python, RL_HOME: join(home, 'rl'), LOG_LEVEL: 'silent' }));
  try {
    const floorStart = performance.now();
    execFileSync(install.python, ['-B', '-c', 'import atroposlib.envs.base'], { env: {} });
    const floor = (performance.now() - floorStart) / 1000;
    const figures: BenchFigure[] = [];
    let total = 0;
    for (const name of ENVIRONMENTS) {
      const { config } = await runtime.selection.forRun({ environment: name });
      const started = performance.now();
      const record = await runtime.readiness.check(config, { items: 5 });
      const seconds = (performance.now() - started) / 1000;
      total += seconds;
      figures.push({ name: `rl_check_environment offline, ${name} (5 items, verdict ${record.verdict})`, value: seconds, unit: 's', baseline: { name: 'python importing atroposlib.envs.base', value: floor, unit: 's' } });
    }
    figures.push({ name: `all ${ENVIRONMENTS.length} bundled environments, one after the other`, value: total, unit: 's', target: '< 30 s' });
    return figures;
  } finally {
    await runtime.close();
    rmSync(home, { recursive: true, force: true });
  }
}
