/** Shared set-up of the inference-test files: the fake endpoint, the key, process checks. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after } from 'node:test';
import { gsm8kSolver } from '../fakes/gsm8kAnswers.js';
import { startFakeOpenAI, type FakeOpenAI, type ModelBehaviour } from '../fakes/openaiServer.js';
import type { InMemoryHarness } from './client.js';
import { filesUnder } from './runs.js';

/** Looks like an OpenRouter key, and is long enough that finding it anywhere is no accident. */
export const KEY = `sk-or-v1-${randomBytes(24).toString('hex')}`;

export interface Endpoint extends FakeOpenAI {
  models: Record<string, ModelBehaviour>;
}

/** The fake endpoint for the bundled gsm8k example; `models` may be changed between calls. */
export async function startEndpoint(models: Record<string, ModelBehaviour>): Promise<Endpoint> {
  const fake = await startFakeOpenAI({ apiKey: KEY, models, solve: gsm8kSolver() });
  after(() => fake.close());
  return { ...fake, models };
}

export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

export async function selectGsm8k(h: InMemoryHarness): Promise<void> {
  const answer = await h.call('rl_select_environment', { name: 'gsm8k' });
  assert.equal(answer.isError, false, JSON.stringify(answer.json));
}

/** Asserts the key is in no file under `dir` (RL_HOME: run files, test output, server.log). */
export function assertKeyNowhereUnder(dir: string): void {
  for (const file of filesUnder(dir)) assert.ok(!readFileSync(file, 'utf8').includes(KEY), `the key is in ${file}`);
}
