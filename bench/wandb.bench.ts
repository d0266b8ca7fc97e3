/**
 * W&B lookups against the fake GraphQL server answering every request after 50 ms (a realistic
 * round trip to api.wandb.ai): HTTP requests and wall time of one status check with the viewer's
 * entity cached (target <= 2 requests) and cold, and of one results fetch. Baseline from the same
 * run: the Hermes lookup, replayed as the SDK sends it, assuming its display-name filter matched
 * (in reality it never did): `wandb.Api()` asks the viewer, `api.runs(filters={display_name})`
 * lists lightweight runs, and `run.summary` re-fetches the run with the full fragment.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Runtime } from '../src/runtime/wiring/runtime.js';
import { loadSettings } from '../src/runtime/config/settings.js';
import { WandbReader } from '../src/runtime/wandb/reader.js';
import { ENTITY, KEY, PROJECT, RUN, seedTrainingRun, TRAINER } from '../test/fakes/wandbFixtures.js';
import { FakeWandb } from '../test/fakes/wandbServer.js';
import type { BenchFigure } from './run.js';

const LATENCY_MS = 50;
const REPEATS = 7;

const LIGHT_RUN_FIELDS = 'id tags name displayName sweepName state group jobType commit readOnly createdAt heartbeatAt description notes historyLineCount user { name username }';
const HERMES_SEQUENCE = [
  { query: 'query GetDefaultEntity { viewer { id entity } }', variables: {} },
  {
    query: `query Runs($project: String!, $entity: String!, $cursor: String, $perPage: Int = 50, $order: String, $filters: JSONString) { project(name: $project, entityName: $entity) { internalId runCount(filters: $filters) readOnly runs(filters: $filters, after: $cursor, first: $perPage, order: $order) { edges { node { projectId ${LIGHT_RUN_FIELDS} } cursor } pageInfo { endCursor hasNextPage } } } }`,
    variables: { project: PROJECT, entity: ENTITY, order: '+created_at', filters: JSON.stringify({ display_name: `gsm8k-${RUN.run_id}-trainer-q7zp` }), perPage: 50, cursor: null },
  },
  {
    query: `query Run($project: String!, $entity: String!, $name: String!) { project(name: $project, entityName: $entity) { run(name: $name) { projectId ${LIGHT_RUN_FIELDS} config systemMetrics summaryMetrics historyKeys } } }`,
    variables: { project: PROJECT, entity: ENTITY, name: TRAINER },
  },
];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Median wall time and requests per call of `fn` over REPEATS calls. */
async function measure(fake: FakeWandb, fn: () => Promise<unknown>): Promise<{ ms: number; requests: number }> {
  const times: number[] = [];
  const before = fake.count();
  for (let i = 0; i < REPEATS; i++) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  return { ms: median(times), requests: (fake.count() - before) / REPEATS };
}

export default async function wandbBench(): Promise<BenchFigure[]> {
  const home = mkdtempSync(join(tmpdir(), 'rlmcp-bench-wandb-'));
  const fake = await FakeWandb.start({ apiKey: KEY, viewerEntity: ENTITY, latencyMs: LATENCY_MS });
  seedTrainingRun(fake);
  const runtime = new Runtime(loadSettings({ HOME: home, RL_HOME: home, WANDB_API_KEY: KEY, WANDB_BASE_URL: fake.url, LOG_LEVEL: 'silent' }));
  try {
    const warmReader = new WandbReader(runtime);
    const check = async (reader: WandbReader): Promise<void> => {
      const status = await reader.statusMetrics(RUN);
      if (!status.metrics) throw new Error(`bench lookup failed: ${status.wandb_error}`);
    };
    await check(warmReader);
    const warm = await measure(fake, () => check(warmReader));
    const cold = await measure(fake, () => check(new WandbReader(runtime)));
    const results = await measure(fake, () => warmReader.results(RUN));
    const auth = `Basic ${Buffer.from(`api:${KEY}`).toString('base64')}`;
    const hermes = await measure(fake, async () => {
      for (const body of HERMES_SEQUENCE) {
        const res = await fetch(`${fake.url}/graphql`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
        if (!res.ok) throw new Error(`baseline request failed: HTTP ${res.status}`);
        await res.json();
      }
    });
    const hermesBaseline = (unit: 'requests' | 'ms') => ({ name: 'Hermes-style lookup (viewer, display-name Runs, Run)', value: unit === 'ms' ? hermes.ms : hermes.requests, unit });
    const note = `fake W&B answers after ${LATENCY_MS} ms; median of ${REPEATS}`;
    return [
      { name: 'status check, entity cached: HTTP requests', value: warm.requests, unit: 'requests', target: '<= 2', baseline: hermesBaseline('requests') },
      { name: 'status check, entity cached: wall time', value: warm.ms, unit: 'ms', baseline: hermesBaseline('ms'), note },
      { name: 'status check, cold entity (viewer query): HTTP requests', value: cold.requests, unit: 'requests' },
      { name: 'status check, cold entity: wall time', value: cold.ms, unit: 'ms', note },
      { name: 'results (summaries + history of 2 runs, parallel): HTTP requests', value: results.requests, unit: 'requests' },
      { name: 'results: wall time', value: results.ms, unit: 'ms', note },
    ];
  } finally {
    await runtime.close();
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  }
}
