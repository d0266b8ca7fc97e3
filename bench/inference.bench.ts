/**
 * rl_test_inference with three models whose endpoint answers after a fixed delay: the wall time
 * of one test running them concurrently beside the sum of three one-model tests run one after
 * the other (Hermes' sequential loop), both measured here against the same endpoint and
 * environment (the bundled gsm8k in `process` mode with the fake atroposlib).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Runtime } from '../src/runtime/wiring/runtime.js';
import { loadSettings } from '../src/runtime/config/settings.js';
import { GSM8K_FILE, gsm8kSolver } from '../test/fakes/gsm8kAnswers.js';
import { startFakeOpenAI } from '../test/fakes/openaiServer.js';
import { FAKE_PYTHONPATH } from '../test/helpers/tmp.js';
import type { BenchFigure } from './run.js';

const DELAY_MS = 1500;
const MODELS = ['bench/a', 'bench/b', 'bench/c'];
const KEY = 'sk-bench-inference-key';

export default async function inferenceBench(): Promise<BenchFigure[]> {
  const home = mkdtempSync(join(tmpdir(), 'rlmcp-bench-inference-'));
  const fake = await startFakeOpenAI({
    apiKey: KEY,
    models: Object.fromEntries(MODELS.map((m) => [m, { mode: 'right' as const, delayMs: DELAY_MS }])),
    solve: gsm8kSolver(),
  });
  const runtime = new Runtime(
    loadSettings({ PATH: process.env.PATH, HOME: process.env.HOME, PYTHONPATH: FAKE_PYTHONPATH, RL_HOME: home, OPENROUTER_API_KEY: KEY, LOG_LEVEL: 'warn' }),
  );
  const runTest = async (models: string[]): Promise<number> => {
    const started = performance.now();
    const out = await runtime.inferenceTests.startAndWait(
      {
        environment: { name: 'gsm8k', file_path: GSM8K_FILE },
        num_steps: 2,
        group_size: 4,
        models,
        base_url: fake.baseUrl,
        api_key_env: 'OPENROUTER_API_KEY',
        server_type: 'openai',
        timeout_seconds: 300,
        use_wandb: false,
      },
      { waitSeconds: 280 },
    );
    const failed = out.models_tested?.filter((m) => m.error) ?? [];
    if (out.status !== 'completed' || failed.length > 0) throw new Error(`bench test failed: ${JSON.stringify(failed.map((m) => m.error))}`);
    return (performance.now() - started) / 1000;
  };
  try {
    let sequential = 0;
    for (const model of MODELS) sequential += await runTest([model]);
    const concurrent = await runTest(MODELS);
    return [
      {
        name: `rl_test_inference, 3 models concurrently (endpoint delay ${DELAY_MS} ms, 2 steps x 4)`,
        value: concurrent,
        unit: 's',
        baseline: { name: 'sum of the 3 models run one after the other', value: sequential, unit: 's' },
        target: '<= 0.45 of the sum',
        note: `ratio ${(concurrent / sequential).toFixed(2)}`,
      },
    ];
  } finally {
    await runtime.close();
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  }
}
