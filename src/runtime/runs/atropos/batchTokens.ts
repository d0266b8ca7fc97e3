/**
 * The real lengths of what a run trains: tinker-atropos rewrites temp.json in its working
 * directory with every batch it takes (the groups with their `tokens` and `masks`). Each new
 * version is counted once, so spend follows the rollouts the run really makes, not only those an
 * inference test saw.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { TRAINER_BATCH_FILE } from '../../../core/files/home.js';
import { statSignature } from '../../../core/files/watch.js';
import { LengthCounter } from '../../cost/lengths.js';
import type { BatchTokens } from '../seams/record.js';

/** A batch bigger than this is not read (it would only refine an estimate). */
const MAX_BATCH_BYTES = 64 * 1024 * 1024;

export function addBatch(total: BatchTokens | undefined, batch: { rollouts: number; prompt: number; completion: number }): BatchTokens {
  const t = total ?? { batches: 0, sequences: 0, prompt_tokens: 0, completion_tokens: 0 };
  return { batches: t.batches + 1, sequences: t.sequences + batch.rollouts, prompt_tokens: t.prompt_tokens + batch.prompt, completion_tokens: t.completion_tokens + batch.completion };
}

export class BatchReader {
  private seen?: string;

  constructor(private readonly trainerDir: string | undefined) {}

  /** The tokens of a batch not counted before, or undefined. Never throws: the file is rewritten under us. */
  async next(): Promise<{ rollouts: number; prompt: number; completion: number } | undefined> {
    if (this.trainerDir === undefined) return undefined;
    const path = join(this.trainerDir, TRAINER_BATCH_FILE);
    try {
      const info = await stat(path);
      const key = statSignature(info);
      if (key === this.seen || info.size > MAX_BATCH_BYTES) return undefined;
      const doc = JSON.parse(await readFile(path, 'utf8')) as { batch?: unknown };
      this.seen = key;
      if (!Array.isArray(doc.batch)) return undefined;
      const counter = new LengthCounter();
      for (const group of doc.batch) counter.add(group);
      const totals = counter.totals();
      return totals.rollouts > 0 ? totals : undefined;
    } catch {
      // Missing, or caught half-written: the next look reads it again.
      return undefined;
    }
  }
}
