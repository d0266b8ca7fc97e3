/**
 * rl_check_environment's offline checks on the bundled environments (the Atropos examples, the fake
 * cookbook's math_rl recipe and its verifiers gsm8k), each the wall time of one check with 5 items,
 * beside the floor of any check measured in the same run: an interpreter importing the framework's
 * base module and nothing else.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Runtime } from '../src/runtime/wiring/runtime.js';
import { loadSettings } from '../src/runtime/config/settings.js';
import { FAKE_COOKBOOK_PYTHONPATH, FAKE_PYTHONPATH, pythonOnPath } from '../test/helpers/tmp.js';
import type { BenchFigure } from './run.js';

const ENVIRONMENTS = ['atropos:gsm8k', 'word_sort', 'countdown', 'math_rl', 'cookbook:gsm8k'];

export default async function readinessBench(): Promise<BenchFigure[]> {
  const home = mkdtempSync(join(tmpdir(), 'rlmcp-bench-readiness-'));
  const pythonPath = `${FAKE_PYTHONPATH}:${FAKE_COOKBOOK_PYTHONPATH}`;
  const runtime = new Runtime(loadSettings({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PYTHONPATH: pythonPath, RL_HOME: join(home, 'rl'), LOG_LEVEL: 'silent' }));
  try {
    const floorStart = performance.now();
    execFileSync(pythonOnPath(), ['-B', '-c', 'import atroposlib.envs.base'], { env: { PYTHONPATH: pythonPath } });
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
