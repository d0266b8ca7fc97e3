/**
 * rl_evaluate's wall time for 2 models x 20 items on the fakes: a cookbook recipe run's evaluation
 * (method recipe: python/cookbook_eval.py per model, math_rl's arithmetic envs over the fake Tinker
 * SDK) beside an Atropos one (method process: the bundled gsm8k with the fake atroposlib against the
 * fake Tinker OpenAI-compatible endpoint), both started through the same evaluations service.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Runtime } from '../src/runtime/wiring/runtime.js';
import { loadSettings } from '../src/runtime/config/settings.js';
import { chzArgument } from '../src/runtime/runs/cookbook/start.js';
import type { EvaluationRequest } from '../src/runtime/evaluation/registry.js';
import { GSM8K_FILE, gsm8kSolver } from '../test/fakes/gsm8kAnswers.js';
import { startFakeTinkerOai } from '../test/fakes/tinkerOaiServer.js';
import { makeFakeInstall } from '../test/helpers/fakeInstall.js';
import { makeFakeTinker } from '../test/helpers/fakeTinker.js';
import { FAKE_PYTHONPATH } from '../test/helpers/tmp.js';
import type { BenchFigure } from './run.js';

const KEY = 'tml-bench-evaluate-key-5e2a9c';
const MODEL = 'Qwen/Qwen3.5-9B';
const ROUNDS = 3;

const models = (checkpoint: string): EvaluationRequest['models'] => [
  { label: 'base', model: MODEL, role: 'baseline', stem: '0-base' },
  { label: 'step_1', model: checkpoint, role: 'checkpoint', step: 1, stem: '1-step_1' },
];

export default async function evaluateBench(): Promise<BenchFigure[]> {
  const tinker = makeFakeTinker();
  tinker.addKey(KEY);
  tinker.setModels([MODEL]);
  tinker.setService({ answer_skill: { untrained: 0.2, trained: 0.9 } });
  const install = await makeFakeInstall({ cookbook: true, tinkerState: tinker.dir });
  const oai = await startFakeTinkerOai({ apiKey: KEY, baseModels: { [MODEL]: 0.2 }, checkpoint: () => 0.9, solve: gsm8kSolver() });
  const home = mkdtempSync(join(tmpdir(), 'rlmcp-bench-evaluate-'));
  const base = { PATH: process.env.PATH, HOME: process.env.HOME, RL_HOME: home, TINKER_API_KEY: KEY, TINKER_OAI_BASE_URL: oai.baseUrl, LOG_LEVEL: 'warn' };
  const atropos = new Runtime(loadSettings({ ...base, PYTHONPATH: FAKE_PYTHONPATH }));
  const cookbook = new Runtime(loadSettings({ ...base, RL_PYTHON: install.python, ...tinker.env(KEY) }));
  const common = { run_id: 'bench0001', run_at_start: { status: 'completed', steps_completed: 1 }, method_may_fall_back: false, serverEntries: 1 as const, numItems: 20, groupSize: 1, timeoutSeconds: 300 };
  const argv = Object.entries({ groups_per_batch: 20, group_size: 1, log_path: join(home, 'unused'), behavior_if_log_dir_exists: 'resume' }).map(([k, v]) => chzArgument(k, v));
  const time = async (runtime: Runtime, req: EvaluationRequest): Promise<number> => {
    const started = performance.now();
    const out = await runtime.evaluations.start(req, { waitSeconds: 280 });
    const failed = out.models?.filter((m) => m.error) ?? [];
    if (out.status !== 'completed' || failed.length > 0) throw new Error(`bench evaluation failed: ${JSON.stringify(failed.map((m) => m.error))}`);
    return (performance.now() - started) / 1000;
  };
  const recipeTimes: number[] = [];
  const processTimes: number[] = [];
  try {
    for (let i = 0; i < ROUNDS; i++) {
      processTimes.push(await time(atropos, { ...common, environment: 'gsm8k', method: 'process', method_reason: 'bench', models: models('tinker://bench:train:0/sampler_weights/000001'), envFile: GSM8K_FILE, envConfig: {} }));
      // The fake SDK samples a checkpoint only if its service holds it: both models are the base model here, sampled twice.
      recipeTimes.push(await time(cookbook, { ...common, environment: 'math_rl', method: 'recipe', method_reason: 'bench', models: models(MODEL), envFile: '', envConfig: {}, recipe: { recipe: 'math_rl', argv } }));
    }
  } finally {
    await Promise.all([atropos.close(), cookbook.close(), oai.close()]);
    rmSync(home, { recursive: true, force: true });
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return [
    {
      name: 'recipe evaluation, 2 models x 20 items (median of 3)',
      value: median(recipeTimes),
      unit: 's',
      baseline: { name: 'Atropos process evaluation, 2 models x 20 items', value: median(processTimes), unit: 's' },
      note: `all: recipe ${recipeTimes.map((t) => t.toFixed(2)).join(', ')}; process ${processTimes.map((t) => t.toFixed(2)).join(', ')}`,
    },
  ];
}
