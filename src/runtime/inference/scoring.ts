/**
 * Reading what `process` wrote and the Hermes arithmetic over it: one JSONL line per group,
 * a completion is correct when its score is > 0, rates rounded to 3 places.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { nodeReadline } from '../../core/onDemand.js';
import { parseTolerantJson } from '../wandb/tolerantJson.js';

export interface StepResult {
  step: number;
  completions: number;
  correct: number;
  scores: number[];
}

export interface ModelScores {
  steps: StepResult[];
  steps_tested: number;
  total_completions: number;
  correct_completions: number;
  accuracy: number;
  steps_with_correct: number;
  step_success_rate: number;
  /** Mean score over all completions: "score > 0" alone hides partial credit. */
  mean_score: number;
}

/**
 * Python's round(x, 3), as Hermes rounds: the thousandth nearest the exact value, an exact tie to
 * the even one. Only odd sixteenths are exact ties (1/16 = 0.0625 -> 0.062), and with the default
 * group_size 16 they are common; Math.round would send them up.
 */
function round3(x: number): number {
  const sixteenths = x * 16;
  if (!Number.isInteger(sixteenths) || sixteenths % 2 === 0) return Number(x.toFixed(3));
  const below = Math.floor(x * 1000);
  return (below % 2 === 0 ? below : below + 1) / 1000;
}

/**
 * The groups of a JSONL file, read line by line (a line holds every token of a group, so the
 * file can be large). Lines that are not JSON (a process killed mid-write) are skipped; bare NaN and
 * Infinity (Python's json) are read as their names.
 * Resolves to undefined when the file does not exist. `onGroup` sees each parsed line (lengths are counted from it).
 */
export async function readGroupScores(path: string, onGroup?: (group: unknown) => void): Promise<number[][] | undefined> {
  try {
    await stat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const groups: number[][] = [];
  const stream = createReadStream(path, { encoding: 'utf8' });
  try {
    for await (const line of nodeReadline().createInterface({ input: stream, crlfDelay: Infinity })) {
      if (line.trim() === '') continue;
      let item: unknown;
      try {
        item = JSON.parse(line);
      } catch {
        // Python's json writes a NaN or infinite score bare: kept (as "NaN"), so it counts as an invalid reward, not as a lost group.
        try {
          item = parseTolerantJson(line);
        } catch {
          continue;
        }
      }
      onGroup?.(item);
      const scores = (item as { scores?: unknown } | null)?.scores;
      groups.push(Array.isArray(scores) ? scores.filter((s): s is number => typeof s === 'number' && Number.isFinite(s)) : []);
    }
  } finally {
    stream.destroy();
  }
  return groups;
}

export function scoreGroups(groups: readonly number[][]): ModelScores {
  const steps = groups.map((scores, i) => ({ step: i + 1, completions: scores.length, correct: scores.filter((s) => s > 0).length, scores }));
  const total = steps.reduce((n, s) => n + s.completions, 0);
  const correct = steps.reduce((n, s) => n + s.correct, 0);
  const withCorrect = steps.filter((s) => s.correct > 0).length;
  const scoreSum = groups.reduce((n, g) => n + g.reduce((a, b) => a + b, 0), 0);
  return {
    steps,
    steps_tested: steps.length,
    total_completions: total,
    correct_completions: correct,
    accuracy: total > 0 ? round3(correct / total) : 0,
    steps_with_correct: withCorrect,
    step_success_rate: steps.length > 0 ? round3(withCorrect / steps.length) : 0,
    mean_score: total > 0 ? round3(scoreSum / total) : 0,
  };
}

export interface TestSummary {
  steps_requested: number;
  models_tested: number;
  models_succeeded: number;
  best_model: string | null;
  avg_accuracy: number;
  /** True when some model produced a group whose scores vary: a group GRPO can learn from. */
  environment_working: boolean;
  /** Why the environment is not working, when it is not. */
  environment_problem?: string;
  output_directory: string;
}

/** Scores of a group vary: the group carries a learning signal. */
export const isVaried = (scores: readonly number[]): boolean => scores.some((s) => s !== scores[0]);

function environmentProblem(models: readonly { steps_tested: number; steps: readonly { scores: readonly number[] }[] }[]): string | undefined {
  if (models.some((m) => m.steps.some((s) => isVaried(s.scores)))) return undefined;
  if (!models.some((m) => m.steps_tested > 0)) return 'No model produced a usable group: see each model\'s error.';
  return 'Every group any model produced scored the same for all its completions (all right or all wrong): GRPO learns nothing from such groups. Test models nearer the task\'s difficulty, or a larger group_size.';
}

/** A model worked when it produced at least one group (Hermes: steps_tested > 0). */
export function summarize(
  models: readonly { model: string; steps_tested: number; accuracy: number; steps: readonly { scores: readonly number[] }[] }[],
  stepsRequested: number,
  outputDirectory: string,
): TestSummary {
  const working = models.filter((m) => m.steps_tested > 0);
  const problem = environmentProblem(models);
  // First of the best wins a tie, as Python's max() does.
  const best = working.reduce<(typeof working)[number] | undefined>((b, m) => (b === undefined || m.accuracy > b.accuracy ? m : b), undefined);
  return {
    steps_requested: stepsRequested,
    models_tested: models.length,
    models_succeeded: working.length,
    best_model: best?.model ?? null,
    avg_accuracy: working.length > 0 ? round3(working.reduce((n, m) => n + m.accuracy, 0) / working.length) : 0,
    environment_working: problem === undefined,
    ...(problem !== undefined ? { environment_problem: problem } : {}),
    output_directory: outputDirectory,
  };
}
