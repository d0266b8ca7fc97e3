/**
 * rl_get_rollouts: a few scored samples to read, from an inference test's groups, an
 * evaluation's rollouts, or a running run's latest scored group (the Atropos API's
 * `GET /latest_example`), so an agent sees what the model writes, not only a reward curve.
 */
import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { UserError } from '../../core/errors.js';
import { EVAL_ID_PATTERN, evaluationsRoot, inferenceTestsRoot, TEST_ID_PATTERN, WIRE_SUFFIX } from '../../core/files/home.js';
import { evaluationFileUri, inferenceTestFileUri, runLogUri } from '../../core/resourceUris.js';
import { realChildDir, realFileWithin } from '../../core/files/safePath.js';
import { pickRollouts, type PickedRollout, type RolloutFilter, type SourcedRollout } from '../evaluation/picking.js';
import { groupRollouts, readRolloutGroups, type GroupWire } from '../evaluation/rollouts.js';
import { readExchanges } from '../inference/wire/exchanges.js';
import { hostOf, isActive, isDamaged } from '../runs/seams/record.js';
import type { Runtime } from './runtime.js';

export interface RolloutsArgs {
  run_id?: string;
  test_id?: string;
  eval_id?: string;
  /** Only this model's rollouts (a model id of a test, or an evaluation's label such as base or step_5). */
  model?: string;
  limit: number;
  filter: RolloutFilter;
  seed: number;
}

export interface RolloutsAnswer {
  source: { kind: 'inference_test' | 'evaluation' | 'run'; id: string; models?: string[] };
  filter: RolloutFilter;
  order: string;
  total: number;
  returned: number;
  rollouts: PickedRollout[];
  message: string;
}

const LATEST_EXAMPLE_TIMEOUT_MS = 3000;

/** The files of a test's or an evaluation's directory ending with `suffix`, each held to the rule for readers of RL_HOME. */
async function filesIn(root: string, id: string, what: 'Inference test' | 'Evaluation', suffix: string): Promise<{ name: string; path: string }[]> {
  const dir = realChildDir(root, id, what.toLowerCase());
  if (dir === undefined) throw new UserError(`${what} '${id}' not found`, { hint: what === 'Inference test' ? 'rl_test_inference returns a test_id.' : 'rl_evaluate returns an eval_id.' });
  const names = (await readdir(dir)).filter((f) => f.endsWith(suffix)).sort();
  return names.flatMap((name) => {
    const path = realFileWithin(dir, join(dir, name), `file ${name} of ${what.toLowerCase()} ${id}`);
    return path === undefined ? [] : [{ name, path }];
  });
}

/** What the wire to a model's endpoint carried during a test (`<n>-<model>.wire.jsonl`), when it was recorded. */
async function testWire(groupsPath: string, testId: string, groupsFile: string): Promise<GroupWire | undefined> {
  const name = groupsFile.replace(/\.jsonl$/, WIRE_SUFFIX);
  const exchanges = await readExchanges(join(dirname(groupsPath), name));
  return exchanges.length > 0 ? { exchanges, file: inferenceTestFileUri(testId, name) } : undefined;
}

/** Each model's `process` groups of a test: `<n>-<model>.jsonl`. */
async function testRollouts(runtime: Runtime, testId: string): Promise<SourcedRollout[]> {
  const files = (await filesIn(inferenceTestsRoot(runtime.settings.home), testId, 'Inference test', '.jsonl')).filter((f) => !f.name.endsWith(WIRE_SUFFIX));
  const per = await Promise.all(
    files.map(async (f) => {
      const groups = (await readRolloutGroups(f.path, 'groups', await testWire(f.path, testId, f.name))) ?? [];
      return groups.flat().map((r) => ({ ...r, model: f.name.replace(/^\d+-/, '').replace(/\.jsonl$/, ''), file: inferenceTestFileUri(testId, f.name) }));
    }),
  );
  return per.flat();
}

/** Each model's rollouts of an evaluation: `<n>-<label>.rollouts.jsonl`. */
async function evaluationRollouts(runtime: Runtime, evalId: string): Promise<SourcedRollout[]> {
  const files = await filesIn(evaluationsRoot(runtime.settings.home), evalId, 'Evaluation', '.rollouts.jsonl');
  const per = await Promise.all(
    files.map(async (f) => ((await readRolloutGroups(f.path, 'rollouts')) ?? []).flat().map((r) => ({ ...r, model: f.name.replace(/^\d+-/, '').replace(/\.rollouts\.jsonl$/, ''), file: evaluationFileUri(evalId, f.name) }))),
  );
  return per.flat();
}

/** The latest scored group the run's API holds; a reason when there is none to read. */
async function latestExample(runtime: Runtime, runId: string): Promise<{ rollouts: SourcedRollout[] } | { reason: string }> {
  const run = runtime.runs.get(runId);
  if (isDamaged(run)) return { reason: `Run '${runId}' has a damaged record: its API cannot be found.` };
  if (!isActive(run.status)) {
    const evals = await runtime.evaluations.ofRun(runId);
    const pointer = evals.length ? ` Its evaluations (read them with rl_get_rollouts({eval_id})): ${evals.map((e) => e.eval_id).join(', ')}.` : ' Evaluate its checkpoints with rl_evaluate({run_id}) to get rollouts to read.';
    return { reason: `Run '${runId}' is ${run.status}: its Atropos API is gone with it, so there is no live example.${pointer}` };
  }
  let body: unknown;
  try {
    const res = await fetch(`http://${hostOf(run)}:${run.ports.api}/latest_example`, { signal: AbortSignal.timeout(LATEST_EXAMPLE_TIMEOUT_MS) });
    if (!res.ok) return { reason: `The run's Atropos API answered HTTP ${res.status} to /latest_example.` };
    body = await res.json();
  } catch (err) {
    return { reason: `The run's Atropos API (port ${run.ports.api}) did not answer /latest_example (${err instanceof Error ? err.message : String(err)}): it may not be up yet (status ${run.status}, phase ${run.phase}).` };
  }
  const group = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  return { rollouts: groupRollouts(group).map((r) => ({ ...r, file: runLogUri(runId, 'env') })) };
}

/** Rollouts whose group atroposlib filled with placeholders: where their texts come from. */
function placeholderNote(count: number, total: number): string {
  if (count === 0) return '';
  return (
    ` ${count} of the ${total} rollouts come from groups atroposlib wrote with placeholder tokens (the model was sampled on an OpenAI-compatible endpoint): ` +
    'their prompts and completions are the ones the wire to the endpoint carried, or are marked "not available" where that cannot tell which completion earned which score.'
  );
}

function sourceOf(args: RolloutsArgs): { kind: RolloutsAnswer['source']['kind']; id: string } {
  const given = [args.run_id, args.test_id, args.eval_id].filter((x) => x !== undefined).length;
  if (given !== 1) throw new UserError('Give exactly one of run_id, test_id or eval_id', { expected: 'run_id (a running run: its latest example), test_id (an inference test) or eval_id (an evaluation)' });
  if (args.test_id !== undefined) return { kind: 'inference_test', id: args.test_id };
  if (args.eval_id !== undefined) return { kind: 'evaluation', id: args.eval_id };
  return { kind: 'run', id: args.run_id! };
}

export async function getRollouts(runtime: Runtime, args: RolloutsArgs): Promise<RolloutsAnswer> {
  const source = sourceOf(args);
  let all: SourcedRollout[];
  let note = '';
  if (source.kind === 'run') {
    const latest = await latestExample(runtime, source.id);
    if ('reason' in latest) return { source, filter: args.filter, order: '', total: 0, returned: 0, rollouts: [], message: latest.reason };
    all = latest.rollouts;
    note = all.length ? 'The latest scored group the Atropos API received (GET /latest_example). ' : 'The API holds no scored group yet: the environment has sent nothing so far. ';
  } else if (source.kind === 'inference_test') {
    if (!TEST_ID_PATTERN.test(source.id)) throw new UserError('test_id is 8 lowercase hex characters');
    all = await testRollouts(runtime, source.id);
  } else {
    if (!EVAL_ID_PATTERN.test(source.id)) throw new UserError('eval_id is 8 lowercase hex characters');
    all = await evaluationRollouts(runtime, source.id);
  }
  const models = [...new Set(all.flatMap((r) => (r.model !== undefined ? [r.model] : [])))];
  if (args.model !== undefined) {
    if (!models.includes(args.model)) throw new UserError(`No rollouts of model '${args.model}' here`, { available: models });
    all = all.filter((r) => r.model === args.model);
  }
  // Redacted before the long texts are cut: a cut inside a key leaves a part redact() cannot recognise.
  const redact = (text: string) => runtime.redactor.redact(text);
  const rollouts = pickRollouts(all.map((r) => ({ ...r, prompt: redact(r.prompt), completion: redact(r.completion) })), args.filter, args.limit, args.seed);
  const order = args.filter === 'random' ? `random, seed ${args.seed} (the same seed picks the same rollouts)` : `${args.filter === 'best' ? 'highest' : 'lowest'} score first, file order among equal scores`;
  return {
    source: { ...source, ...(models.length ? { models } : {}) },
    filter: args.filter,
    order,
    total: all.length,
    returned: rollouts.length,
    rollouts,
    message: `${note}${rollouts.length} of ${all.length} rollouts; texts longer than a few thousand characters are cut in the middle, whole in the file each names.${placeholderNote(all.filter((r) => r.placeholder).length, all.length)}`,
  };
}
