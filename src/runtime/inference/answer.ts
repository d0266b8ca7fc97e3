/**
 * What rl_test_inference answers of a test: its result without the per-completion scores, which
 * stay in result.json. At 8 models x 50 steps x 64 completions the scores alone are some 80,000
 * characters; the counts per step and the per-model rates say what a caller decides on.
 */
import { join } from 'node:path';
import { INFERENCE_TEST_RESULT } from '../../core/files/home.js';
import type { StepResult } from './scoring.js';
import type { ModelReport, TestOutput } from './testReport.js';

export type StepCounts = Omit<StepResult, 'scores'>;

export type TestAnswer = Omit<TestOutput, 'models_tested'> & {
  models_tested?: (Omit<ModelReport, 'steps'> & { steps: StepCounts[] })[];
  /** result.json: the same result with every step's scores. */
  result_file?: string;
};

export function testAnswer(output: TestOutput): TestAnswer {
  if (output.models_tested === undefined) return output;
  const models_tested = output.models_tested.map((m) => ({ ...m, steps: m.steps.map(({ step, completions, correct }) => ({ step, completions, correct })) }));
  const directory = output.summary?.output_directory;
  return { ...output, models_tested, ...(directory !== undefined ? { result_file: join(directory, INFERENCE_TEST_RESULT) } : {}) };
}
