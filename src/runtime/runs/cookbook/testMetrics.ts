/**
 * What a cookbook recipe measured of its own test set while it trained: tinker_cookbook's RL
 * trainer runs its evaluators (the test set's RLTestSetEvaluator, rl/metric_util.py) before
 * training batch i whenever i is a multiple of eval_every, and logs their `test/...` keys in that
 * batch's metrics.jsonl row. So step 0 is the base model (the untrained LoRA) and step N the
 * weights after N batches: a base-versus-trained comparison that costs nothing more.
 */
import { readFile } from 'node:fs/promises';
import { isMissing } from '../../../core/files/safePath.js';
import type { RunRecord } from '../seams/record.js';
import { cookbookFile } from './files.js';

export const TEST_PREFIX = 'test/';
/** At most this many keys are shown: the reward and correctness first, then the rest in logged order. */
const SHOWN_KEYS = 8;
const FIRST_KEYS = ['test/env/all/reward/total', 'test/env/all/correct'];

export interface LoggedTestMetrics {
  /** The first and last steps that logged test/ keys. */
  steps: [number, number];
  metrics: Record<string, { base: number; trained: number; diff: number }>;
  note: string;
}

const r4 = (x: number): number => Math.round(x * 10000) / 10000;

/** The rows with test/ keys, by step (a step logged twice after a resume: its last row). */
export function testRows(text: string): Map<number, Record<string, number>> {
  const rows = new Map<number, Record<string, number>>();
  for (const line of text.split('\n')) {
    if (!line.includes(TEST_PREFIX)) continue;
    try {
      const row = JSON.parse(line) as Record<string, unknown>;
      if (typeof row.step !== 'number') continue;
      const tests = Object.entries(row).filter((e): e is [string, number] => e[0].startsWith(TEST_PREFIX) && typeof e[1] === 'number' && Number.isFinite(e[1]));
      if (tests.length > 0) rows.set(row.step, Object.fromEntries(tests));
    } catch {
      // A line cut by a killed trainer.
    }
  }
  return rows;
}

/** The comparison of the first and last logged test/ rows; undefined when fewer than two steps logged them. */
export function compareTestRows(rows: Map<number, Record<string, number>>): LoggedTestMetrics | undefined {
  const steps = [...rows.keys()].sort((a, b) => a - b);
  if (steps.length < 2) return undefined;
  const [first, last] = [steps[0]!, steps[steps.length - 1]!];
  const base = rows.get(first)!;
  const trained = rows.get(last)!;
  const keys = Object.keys(base).filter((k) => k in trained);
  const ordered = [...FIRST_KEYS.filter((k) => keys.includes(k)), ...keys.filter((k) => !FIRST_KEYS.includes(k))].slice(0, SHOWN_KEYS);
  const metrics = Object.fromEntries(ordered.map((k) => [k, { base: r4(base[k]!), trained: r4(trained[k]!), diff: r4(trained[k]! - base[k]!) }]));
  const baseIs = first === 0 ? 'the base model (step 0, before any training)' : `the weights after ${first} batches`;
  return {
    steps: [first, last],
    metrics,
    note: `The recipe's own test-set evaluation, logged in metrics.jsonl every eval_every batches before the batch trains: ${baseIs} against the weights after ${last} batches, at no cost. No interval: rl_evaluate adds one and a verdict (paid sampling).`,
  };
}

export async function loggedTestMetrics(run: Pick<RunRecord, 'config_path'>): Promise<LoggedTestMetrics | undefined> {
  try {
    return compareTestRows(testRows(await readFile(cookbookFile(run, 'metrics'), 'utf8')));
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
}
