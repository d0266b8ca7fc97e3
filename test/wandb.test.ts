/**
 * The W&B read side (src/runtime/wandb/) against the fake GraphQL server: which runs and keys the metrics
 * come from, history and sparklines, tolerant parsing, retries, budgets, and every failure as a
 * `wandb_error` a user can act on. The runtime API is driven directly; no MCP needed.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { Runtime } from '../src/runtime/wiring/runtime.js';
import { loadSettings } from '../src/runtime/config/settings.js';
import { evenlySpaced } from '../src/runtime/wandb/history.js';
import { WandbReader, type WandbReaderOptions } from '../src/runtime/wandb/reader.js';
import { sparkline } from '../src/runtime/wandb/sparkline.js';
import { parseTolerantJson } from '../src/runtime/wandb/tolerantJson.js';
import { appUrlFromApiUrl, runUrl } from '../src/runtime/wandb/urls.js';
import { ENTITY, ENV_RUN, KEY, PREFIX, PROJECT, RUN, seedTrainingRun, steps, TRAINER } from './fakes/wandbFixtures.js';
import { type FakeRun, FakeWandb, type FakeWandbOptions } from './fakes/wandbServer.js';
import { freePort, testEnv } from './helpers/tmp.js';

interface Setup {
  fake: FakeWandb;
  reader: WandbReader;
  runtime: Runtime;
  sleeps: number[];
}

async function setup(
  t: TestContext,
  opts: {
    env?: Record<string, string | undefined>;
    reader?: WandbReaderOptions;
    fake?: Partial<FakeWandbOptions>;
    seed?: (fake: FakeWandb) => void;
    /** Record retry waits without waiting them. */
    instantSleep?: boolean;
  } = {},
): Promise<Setup> {
  const fake = await FakeWandb.start({ apiKey: KEY, viewerEntity: ENTITY, ...opts.fake });
  t.after(() => fake.close());
  (opts.seed ?? seedTrainingRun)(fake);
  const runtime = new Runtime(loadSettings(testEnv({ WANDB_API_KEY: KEY, WANDB_BASE_URL: fake.url, LOG_LEVEL: 'error', ...opts.env })));
  t.after(() => runtime.close());
  const sleeps: number[] = [];
  const reader = new WandbReader(runtime, {
    retryBaseMs: 10,
    sleep: async (ms, signal) => {
      sleeps.push(ms);
      if (!opts.instantSleep) await delay(ms, undefined, { signal });
    },
    ...opts.reader,
  });
  return { fake, reader, runtime, sleeps };
}

const statuses = (fake: FakeWandb, op: string): (number | undefined)[] => fake.requests.filter((r) => r.op === op).map((r) => r.status);

test('status metrics come from the keys each run really logs; the viewer entity is asked once', async (t) => {
  const { fake, reader } = await setup(t);
  const status = await reader.statusMetrics(RUN);
  assert.equal(status.wandb_error, undefined);
  assert.deepEqual(status.metrics, {
    step: 30,
    reward_mean: 1,
    loss: 1 / 30,
    percent_correct: 30 / 60,
    eval_percent_correct: 0.8,
    state: 'running',
  });
  assert.equal(status.wandb_url, `${fake.url}/${ENTITY}/${PROJECT}/runs/${TRAINER}`);
  assert.deepEqual(fake.requests.map((r) => r.op), ['GetDefaultEntity', 'Runs']);

  const runs = fake.requests[1]!;
  assert.equal(typeof runs.variables.filters, 'string', 'filters travel as a JSON string');
  assert.deepEqual(JSON.parse(runs.variables.filters as string), { group: RUN.run_id });
  assert.equal(runs.variables.entity, ENTITY);
  assert.equal(runs.variables.project, PROJECT);
  assert.equal(runs.headers.authorization, `Basic ${Buffer.from(`api:${KEY}`).toString('base64')}`);
  assert.match(String(runs.headers['user-agent']), /rl-training-mcp/);

  await reader.statusMetrics(RUN);
  await reader.results(RUN);
  assert.equal(fake.count('GetDefaultEntity'), 1, 'the default entity is cached per reader');
  assert.equal(fake.count('Runs'), 3);
});

test('WANDB_ENTITY skips the viewer query: one request per status check', async (t) => {
  const { fake, reader } = await setup(t, { env: { WANDB_ENTITY: 'team-rl' }, seed: (f) => seedTrainingRun(f, 'team-rl') });
  const status = await reader.statusMetrics(RUN);
  assert.equal(status.metrics?.step, 30);
  assert.equal(status.wandb_url, `${fake.url}/team-rl/${PROJECT}/runs/${TRAINER}`);
  assert.deepEqual(fake.requests.map((r) => r.op), ['Runs']);
});

test('results: trainer summary plus env accuracy, history joined on _step, sparklines', async (t) => {
  const { fake, reader } = await setup(t);
  const results = await reader.results(RUN, { samples: 500 });
  assert.equal(results.wandb_error, undefined);
  assert.equal(results.wandb_url, `${fake.url}/${ENTITY}/${PROJECT}/runs/${TRAINER}`);

  const fm = results.final_metrics!;
  assert.equal(fm['reward/mean'], 1);
  assert.equal(fm['train/loss'], 1 / 30);
  assert.equal(fm['train/learning_rate'], 4e-5);
  assert.equal(fm._step, 30);
  assert.equal(fm[`${PREFIX}train/percent_correct`], 0.5);
  assert.equal(fm[`${PREFIX}eval/percent_correct`], 0.8);
  assert.equal('_wandb' in fm, false, 'W&B internals are dropped');
  assert.equal('server/server_0_request_time_avg' in fm, false, 'only the env accuracy keys are added');

  const history = results.history!;
  assert.equal(history.length, 30);
  assert.deepEqual(history[9], {
    _step: 10,
    'reward/mean': 10 / 30,
    'train/loss': 0.1,
    'train/learning_rate': 4e-5,
    [`${PREFIX}train/percent_correct`]: 10 / 60,
    [`${PREFIX}eval/percent_correct`]: 0.6,
  });
  assert.deepEqual(history[10], { _step: 11, 'reward/mean': 11 / 30, 'train/loss': 1 / 11, 'train/learning_rate': 4e-5, [`${PREFIX}train/percent_correct`]: 11 / 60 });
  assert.deepEqual(
    history.map((r) => r._step),
    steps(30),
  );

  assert.deepEqual(Object.keys(results.sparklines!).sort(), ['eval_percent_correct', 'loss', 'percent_correct', 'reward_mean']);
  assert.equal(results.sparklines!.reward_mean!.at(0), '▁');
  assert.equal(results.sparklines!.reward_mean!.at(-1), '█');
  assert.equal(results.sparklines!.loss!.at(0), '█');
  assert.equal(results.sparklines!.eval_percent_correct, '▁▄█');

  // One spec per key; one request per W&B run; keys only from the run that logged them.
  const sampled = fake.requests.filter((r) => r.op === 'RunSampledHistory');
  assert.equal(sampled.length, 2);
  const specsFor = (name: string): { keys: string[] }[] =>
    (sampled.find((r) => r.variables.name === name)!.variables.specs as string[]).map((s) => JSON.parse(s) as { keys: string[] });
  assert.deepEqual(
    specsFor(TRAINER).map((s) => s.keys),
    [['_step', 'reward/mean'], ['_step', 'train/loss'], ['_step', 'train/learning_rate']],
  );
  assert.deepEqual(
    specsFor(ENV_RUN).map((s) => s.keys),
    [['_step', `${PREFIX}train/percent_correct`], ['_step', `${PREFIX}eval/percent_correct`]],
  );
});

test('results: history defaults to 10 rows (first and last kept), samples is clamped to 1..500', async (t) => {
  const { reader } = await setup(t);
  const byDefault = await reader.results(RUN);
  assert.equal(byDefault.history!.length, 10);
  assert.equal(byDefault.history![0]!._step, 1);
  assert.equal(byDefault.history!.at(-1)!._step, 30);
  assert.equal((await reader.results(RUN, { samples: 3 })).history!.length, 3);
  assert.equal((await reader.results(RUN, { samples: 0 })).history!.length, 1);
  assert.equal((await reader.results(RUN, { samples: 10_000 })).history!.length, 30);
});

test('a summary holding NaN and Infinity is read; non-finite values come back as strings', async (t) => {
  const { reader } = await setup(t, {
    seed: (f) =>
      f.addRun(ENTITY, PROJECT, {
        name: TRAINER,
        displayName: `gsm8k-${RUN.run_id}-trainer-q7zp`,
        tags: ['trainer'],
        group: RUN.run_id,
        state: 'crashed',
        history: [
          { _step: 1, 'reward/mean': 0.2, 'train/loss': 0.9 },
          { _step: 2, 'reward/mean': 0.3, 'train/loss': Number.NaN },
          { _step: 3, 'reward/mean': Number.POSITIVE_INFINITY, 'train/loss': Number.NaN, note: 'NaN is not a number' },
        ],
      }),
  });
  const status = await reader.statusMetrics(RUN);
  assert.equal(status.wandb_error, undefined);
  assert.deepEqual(status.metrics, { step: 3, reward_mean: 'Infinity', loss: 'NaN', percent_correct: null, eval_percent_correct: null, state: 'crashed' });

  const results = await reader.results(RUN);
  assert.equal(results.final_metrics!['train/loss'], 'NaN');
  assert.equal(results.final_metrics!.note, 'NaN is not a number', 'strings are left alone');
  assert.deepEqual(
    results.history!.map((r) => r['train/loss']),
    [0.9, 'NaN', 'NaN'],
  );
  assert.equal(results.sparklines!.loss, '▄··');
  assert.doesNotThrow(() => JSON.stringify(results));
});

test('metrics logged in separate calls still get their history (one spec per key)', async (t) => {
  const { fake, reader } = await setup(t, {
    seed: (f) =>
      f.addRun(ENTITY, PROJECT, {
        name: TRAINER,
        tags: ['trainer'],
        group: RUN.run_id,
        history: steps(8).map((s) => (s % 2 === 0 ? { _step: s, 'reward/mean': s / 8 } : { _step: s, 'train/loss': 1 / s })),
      }),
  });
  const results = await reader.results(RUN, { samples: 100 });
  assert.deepEqual(
    results.history!.map((r) => Object.keys(r).sort()),
    steps(8).map((s) => (s % 2 === 0 ? ['_step', 'reward/mean'] : ['_step', 'train/loss'])),
  );
  assert.equal(results.sparklines!.reward_mean!.length, 4);
  assert.equal(results.sparklines!.loss!.length, 4);

  // What the client works around: W&B answers a spec naming both keys with no rows at all.
  const combined = await fetch(`${fake.url}/graphql`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`api:${KEY}`).toString('base64')}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      query: 'query RunSampledHistory($project: String!, $entity: String!, $name: String!, $specs: [JSONString!]!) { project(name: $project, entityName: $entity) { run(name: $name) { sampledHistory(specs: $specs) } } }',
      variables: { project: PROJECT, entity: ENTITY, name: TRAINER, specs: [JSON.stringify({ keys: ['_step', 'reward/mean', 'train/loss'], samples: 100 })] },
    }),
  });
  assert.deepEqual(await combined.json(), { data: { project: { run: { sampledHistory: [[]] } } } });
});

test('only the environment run exists yet: its accuracy and state, no trainer metrics', async (t) => {
  const { fake, reader } = await setup(t, {
    seed: (f) => {
      seedTrainingRun(f);
      f.project(ENTITY, PROJECT).runs.splice(0, 3);
    },
  });
  const status = await reader.statusMetrics(RUN);
  assert.deepEqual(status.metrics, { step: null, reward_mean: null, loss: null, percent_correct: 0.5, eval_percent_correct: 0.8, state: 'running' });
  assert.equal(status.wandb_url, `${fake.url}/${ENTITY}/${PROJECT}/runs/${ENV_RUN}`);
});

test('429 with Retry-After: 1 is retried after that second and succeeds', async (t) => {
  const { fake, reader, sleeps } = await setup(t);
  fake.inject({ op: 'Runs', fault: { kind: 'rateLimited', retryAfter: '1', resetSeconds: 30 } });
  const status = await reader.statusMetrics(RUN);
  assert.equal(status.wandb_error, undefined);
  assert.equal(status.metrics?.step, 30);
  assert.deepEqual(statuses(fake, 'Runs'), [429, 200]);
  assert.deepEqual(sleeps, [1000], 'Retry-After wins over RateLimit-Reset and over the backoff');
});

test('429 without Retry-After waits RateLimit-Reset; one the budget cannot cover is reported at once', async (t) => {
  const { fake, reader, sleeps } = await setup(t, { instantSleep: true });
  fake.inject({ op: 'Runs', fault: { kind: 'rateLimited', resetSeconds: 2 } });
  assert.equal((await reader.statusMetrics(RUN)).metrics?.step, 30);
  assert.deepEqual(sleeps, [2000]);

  fake.inject({ op: 'Runs', fault: { kind: 'rateLimited', retryAfter: '120' } });
  const status = await reader.statusMetrics(RUN);
  assert.match(status.wandb_error!, /rate limit/);
  assert.match(status.wandb_error!, /retry in 120 s/);
  assert.deepEqual(sleeps, [2000], 'no sleep beyond the budget');
});

test('500 with an HTML body and 503 are retried with backoff; 501 is not', async (t) => {
  const { fake, reader, sleeps } = await setup(t);
  fake.inject({ op: 'Runs', fault: { kind: 'serverError', status: 500 } });
  fake.inject({ op: 'Runs', fault: { kind: 'serverError', status: 503 } });
  assert.equal((await reader.statusMetrics(RUN)).metrics?.step, 30);
  assert.deepEqual(statuses(fake, 'Runs'), [500, 503, 200]);
  assert.equal(sleeps.length, 2);
  assert.ok(sleeps[1]! > sleeps[0]!, `exponential backoff: ${sleeps.join(', ')}`);

  fake.inject({ op: 'Runs', fault: { kind: 'serverError', status: 501, html: false } });
  const status = await reader.statusMetrics(RUN);
  assert.match(status.wandb_error!, /server error/);
  assert.deepEqual(statuses(fake, 'Runs'), [500, 503, 200, 501]);
});

test('a W&B that keeps failing with 502 gives up after maxAttempts and says so', async (t) => {
  const { fake, reader } = await setup(t, { reader: { maxAttempts: 3 } });
  fake.inject({ op: 'Runs', times: Infinity, fault: { kind: 'serverError', status: 502 } });
  const status = await reader.statusMetrics(RUN);
  assert.equal(status.metrics, undefined);
  assert.match(status.wandb_error!, /server error at http:\/\/127\.0\.0\.1:\d+\/graphql after 3 attempts \(HTTP 502 Bad Gateway\)/);
  assert.equal(fake.count('Runs'), 3);
});

test('a wrong key (401) is not retried and the error says the key was rejected', async (t) => {
  const { fake, reader } = await setup(t, { env: { WANDB_API_KEY: 'wrong-key-0123456789' } });
  const status = await reader.statusMetrics(RUN);
  assert.match(status.wandb_error!, /W&B rejected the API key \(HTTP 401: user is not logged in\)/);
  assert.match(status.wandb_error!, /check WANDB_API_KEY/);
  assert.equal(status.wandb_error!.includes('wrong-key-0123456789'), false);
  assert.deepEqual(statuses(fake, 'GetDefaultEntity'), [401]);
  assert.equal(fake.count(), 1);
});

test('a key answered with viewer: null is a rejected key too', async (t) => {
  const { fake, reader } = await setup(t, { env: { WANDB_API_KEY: 'wrong-key-0123456789' }, fake: { badKey: 'viewer-null' } });
  const status = await reader.statusMetrics(RUN);
  assert.match(status.wandb_error!, /rejected the API key/);
  assert.deepEqual(statuses(fake, 'GetDefaultEntity'), [200]);
});

test('403, 404, an unknown project and 200-with-errors are final, each with its own reason', async (t) => {
  const { fake, reader } = await setup(t);
  fake.inject({ op: 'Runs', fault: { kind: 'forbidden' } });
  assert.match((await reader.statusMetrics(RUN)).wandb_error!, /denied access to alice\/atropos-tinker .*set WANDB_ENTITY if the runs are logged under a team/);

  fake.inject({ op: 'Runs', fault: { kind: 'notFound' } });
  assert.match((await reader.statusMetrics(RUN)).wandb_error!, /project alice\/atropos-tinker not found \(HTTP 404: project not found\)/);

  assert.match((await reader.statusMetrics({ ...RUN, wandb_project: 'nope' })).wandb_error!, /project alice\/nope not found/);

  fake.inject({ op: 'Runs', fault: { kind: 'graphqlErrors', messages: ['Cannot query field "x" on type "Run".'], data: { project: null } } });
  assert.match((await reader.statusMetrics(RUN)).wandb_error!, /W&B refused the query: Cannot query field "x"/);

  fake.inject({ op: 'Runs', fault: { kind: 'malformed' } });
  assert.match((await reader.statusMetrics(RUN)).wandb_error!, /not GraphQL JSON/);

  assert.deepEqual(statuses(fake, 'Runs'), [403, 404, 200, 200, 200]);
});

test('no run in the group yet: the error says so and names the group', async (t) => {
  const { reader } = await setup(t);
  const status = await reader.statusMetrics({ ...RUN, run_id: '0badc0de' });
  assert.equal(status.metrics, undefined);
  assert.match(status.wandb_error!, /No W&B run in group '0badc0de' in alice\/atropos-tinker yet/);
  assert.match(status.wandb_error!, /still be starting.*use_wandb is off/);
  const results = await reader.results({ ...RUN, run_id: '0badc0de' });
  assert.deepEqual(Object.keys(results), ['wandb_error']);
});

test('no WANDB_API_KEY: the error says what to set and nothing is sent', async (t) => {
  const { fake, reader } = await setup(t, { env: { WANDB_API_KEY: undefined } });
  for (const answer of [await reader.statusMetrics(RUN), await reader.results(RUN)]) {
    assert.match(answer.wandb_error!, /WANDB_API_KEY is not set: set WANDB_API_KEY/);
  }
  assert.equal(fake.count(), 0);
});

test('a hanging W&B gives a wandb_error within the budget', async (t) => {
  const { fake, reader } = await setup(t, { env: { WANDB_ENTITY: ENTITY }, reader: { budgetMs: 1500, requestTimeoutMs: 500 } });
  fake.inject({ op: 'Runs', times: Infinity, fault: { kind: 'hang' } });
  const status = await reader.statusMetrics(RUN);
  assert.match(status.wandb_error!, /W&B did not answer in time at http:\/\/127\.0\.0\.1:\d+\/graphql after \d attempts \(no answer within 1\.5 s in all\)/);
  assert.ok(fake.count('Runs') >= 2, 'a timed-out attempt is retried while the budget lasts');
});

test('RL_WANDB_TIMEOUT_SECONDS is the budget of the runtime\'s reader', async (t) => {
  const { fake, runtime } = await setup(t, { env: { RL_WANDB_TIMEOUT_SECONDS: '1' } });
  fake.inject({ op: 'GetDefaultEntity', times: Infinity, fault: { kind: 'hang' } });
  assert.match((await runtime.wandb.statusMetrics(RUN)).wandb_error!, /did not answer in time .*\(no answer within 0\.5 s per request\)/);
  assert.throws(() => loadSettings(testEnv({ RL_WANDB_TIMEOUT_SECONDS: '0' })), /RL_WANDB_TIMEOUT_SECONDS="0" is not a number of seconds >= 1/);
});

test('results keep the summaries when only the history request fails', async (t) => {
  const { fake, reader } = await setup(t, { reader: { maxAttempts: 1 } });
  fake.inject({ op: 'RunSampledHistory', times: Infinity, fault: { kind: 'serverError', status: 503 } });
  const results = await reader.results(RUN);
  assert.equal(results.final_metrics!['reward/mean'], 1);
  assert.equal(results.wandb_url, `${fake.url}/${ENTITY}/${PROJECT}/runs/${TRAINER}`);
  assert.equal(results.history, undefined);
  assert.match(results.wandb_error!, /server error .*HTTP 503/);
});

test("the caller's AbortSignal stops the lookup", async (t) => {
  const { fake, reader } = await setup(t);
  fake.inject({ op: 'Runs', fault: { kind: 'hang' } });
  const controller = new AbortController();
  const pending = reader.statusMetrics(RUN, controller.signal);
  while (fake.count('Runs') === 0) await delay(10);
  controller.abort();
  assert.deepEqual(await pending, { wandb_error: 'W&B lookup cancelled by the client' });
  assert.equal(fake.count('Runs'), 1);
});

test('an unreachable W&B is retried, then named in the error', async (t) => {
  const port = await freePort();
  const { reader } = await setup(t, { env: { WANDB_BASE_URL: `http://127.0.0.1:${port}` }, reader: { maxAttempts: 2 } });
  const status = await reader.statusMetrics(RUN);
  assert.equal(status.wandb_error, `W&B unreachable at http://127.0.0.1:${port}/graphql after 2 attempts (ECONNREFUSED): check the network and WANDB_BASE_URL`);
});

test('WANDB_BASE_URL with a trailing slash reaches /graphql', async (t) => {
  const fake = await FakeWandb.start({ apiKey: KEY, viewerEntity: ENTITY });
  t.after(() => fake.close());
  seedTrainingRun(fake);
  const runtime = new Runtime(loadSettings(testEnv({ WANDB_API_KEY: KEY, WANDB_BASE_URL: `${fake.url}/` })));
  t.after(() => runtime.close());
  const status = await runtime.wandb.statusMetrics(RUN);
  assert.equal(status.wandb_error, undefined);
  assert.equal(status.wandb_url, `${fake.url}/${ENTITY}/${PROJECT}/runs/${TRAINER}`);
});

test('a custom api.<host> base URL: requests go to it, run links to app.<host>, parts percent-encoded', async (t) => {
  const seen: string[] = [];
  let target = '';
  const { fake, reader } = await setup(t, {
    env: { WANDB_BASE_URL: 'https://api.acme.test/', WANDB_ENTITY: "team (rl)'s" },
    seed: (f) => seedTrainingRun(f, "team (rl)'s", 'my project!'),
    reader: {
      fetch: (input, init) => {
        seen.push(String(input));
        return fetch(String(input).replace('https://api.acme.test', target), init);
      },
    },
  });
  target = fake.url;
  const status = await reader.statusMetrics({ ...RUN, wandb_project: 'my project!' });
  assert.equal(status.wandb_error, undefined);
  assert.deepEqual(seen, ['https://api.acme.test/graphql']);
  assert.equal(status.wandb_url, `https://app.acme.test/team%20%28rl%29%27s/my%20project%21/runs/${TRAINER}`);
});

test('app URL derivation and run URL encoding follow the SDK', () => {
  assert.equal(appUrlFromApiUrl('https://api.wandb.ai'), 'https://wandb.ai');
  assert.equal(appUrlFromApiUrl('https://api.wandb.test'), 'https://app.wandb.test');
  assert.equal(appUrlFromApiUrl('https://api.acme.com'), 'https://app.acme.com');
  assert.equal(appUrlFromApiUrl('http://wandb.local:8080'), 'http://wandb.local:8080');
  assert.equal(runUrl('https://wandb.ai', 'a/b', 'p q', 'x*y'), 'https://wandb.ai/a%2Fb/p%20q/runs/x%2Ay');
});

test('tolerant JSON: bare NaN/Infinity outside strings, raw control characters inside them', () => {
  assert.deepEqual(parseTolerantJson('{"a": NaN, "b": -Infinity, "c": [Infinity, 1e999], "s": "NaN, Infinity", "t": "say \\"NaN\\""}'), {
    a: 'NaN',
    b: '-Infinity',
    c: ['Infinity', 'Infinity'],
    s: 'NaN, Infinity',
    t: 'say "NaN"',
  });
  assert.deepEqual(parseTolerantJson('{"line": "a\nb\tc"}'), { line: 'a\nb\tc' });
  assert.throws(() => parseTolerantJson('{"a": nan}'));
});

test('sparkline and even sampling', () => {
  assert.equal(sparkline([0, 1, 2, 3, 4, 5, 6, 7]), '▁▂▃▄▅▆▇█');
  assert.equal(sparkline([2, 2, 2]), '▄▄▄');
  assert.equal(sparkline(['NaN', null, 'Infinity']), '···');
  assert.equal(sparkline(Array.from({ length: 100 }, (_, i) => i)).length, 40);
  assert.deepEqual(evenlySpaced([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 4), [1, 4, 7, 10]);
  assert.deepEqual(evenlySpaced([1, 2, 3], 1), [3]);
});

test('fake W&B behaves like the real schema: filters must be a JSON string, unknown fields and ops fail', async (t) => {
  const fake = await FakeWandb.start({ apiKey: KEY });
  t.after(() => fake.close());
  seedTrainingRun(fake);
  const gql = async (query: string, variables: Record<string, unknown> = {}): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${fake.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`api:${KEY}`).toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    return { status: res.status, body: await res.json() };
  };
  const runsQuery = (selection: string): string =>
    `# comment first\nquery Runs($project: String!, $entity: String!, $cursor: String, $perPage: Int, $order: String, $filters: JSONString) { project(name: $project, entityName: $entity) { runCount(filters: $filters) runs(filters: $filters, after: $cursor, first: $perPage, order: $order) { edges { node { ${selection} } cursor } pageInfo { endCursor hasNextPage } } } }`;
  const vars = { project: PROJECT, entity: ENTITY };

  assert.equal((await gql(runsQuery('name'), { ...vars, filters: { group: RUN.run_id } })).status, 400);
  assert.equal((await gql(runsQuery('name'), { ...vars, filters: '{group' })).status, 400);
  assert.deepEqual((await gql(runsQuery('summary'), vars)).body.errors, [{ message: 'Cannot query field "summary" on type "Run".' }]);
  assert.match((await gql(runsQuery('sampledHistory { step }'), vars)).body.errors[0].message, /must not have a selection/);
  assert.match((await gql('query Mystery { viewer { id } }')).body.errors[0].message, /unsupported operation Mystery/);

  // Mongo-style filters, ordering and cursors.
  const page1 = await gql(runsQuery('name tags'), { ...vars, perPage: 2, order: '+created_at', filters: JSON.stringify({ $or: [{ tags: 'trainer' }, { display_name: { $regex: '-trainer-old' } }] }) });
  assert.equal(page1.body.data.project.runCount, 3);
  assert.deepEqual(page1.body.data.project.runs.edges.map((e: any) => e.node.name), ['old1trnr', 'decoy001']);
  assert.equal(page1.body.data.project.runs.pageInfo.hasNextPage, true);
  const page2 = await gql(runsQuery('name'), { ...vars, perPage: 2, order: '+created_at', cursor: page1.body.data.project.runs.pageInfo.endCursor, filters: JSON.stringify({ $or: [{ tags: 'trainer' }, { display_name: { $regex: '-trainer-old' } }] }) });
  assert.deepEqual(page2.body.data.project.runs.edges.map((e: any) => e.node.name), [TRAINER]);
  assert.equal(page2.body.data.project.runs.pageInfo.hasNextPage, false);
  const inNe = await gql(runsQuery('name'), { ...vars, filters: JSON.stringify({ tags: { $in: ['trainer'] }, group: { $ne: 'ffffffff' } }) });
  assert.deepEqual(inNe.body.data.project.runs.edges.map((e: any) => e.node.name), [TRAINER]);
  const env = await gql(runsQuery('name summaryMetrics config'), { ...vars, filters: JSON.stringify({ $and: [{ group: RUN.run_id }, { 'config.group_size': { $gte: 16 } }] }) });
  const node = env.body.data.project.runs.edges[0].node;
  assert.equal(node.name, ENV_RUN);
  assert.equal(typeof node.summaryMetrics, 'string');
  assert.deepEqual(JSON.parse(node.config), { group_size: { value: 16, desc: null } });

  // historyKeys is an object; history lines are Python-written strings.
  const nan: FakeRun = fake.addRun(ENTITY, PROJECT, { name: 'nanrun01', history: [{ _step: 0, loss: Number.NaN }] });
  const one = await gql('query RunFullHistory($project: String!, $entity: String!, $name: String!, $samples: Int) { project(name: $project, entityName: $entity) { run(name: $name) { historyKeys history(samples: $samples) summaryMetrics } } }', { ...vars, name: nan.name, samples: 10 });
  assert.deepEqual(one.body.data.project.run.historyKeys, { lastStep: 0, keys: { _step: { typeCounts: [{ type: 'number', count: 1 }] }, loss: { typeCounts: [{ type: 'number', count: 1 }] } } });
  assert.deepEqual(one.body.data.project.run.history, ['{"_step": 0, "loss": NaN}']);
  assert.equal(one.body.data.project.run.summaryMetrics, '{"_step": 0, "loss": NaN, "_wandb": {"runtime": 1}}');

  const anonymous = await fetch(`${fake.url}/graphql`, { method: 'POST', body: JSON.stringify({ query: runsQuery('name'), variables: vars }) });
  assert.equal(anonymous.status, 401);
  assert.deepEqual(await anonymous.json(), { errors: [{ message: 'user is not logged in' }] });
  assert.equal((await fetch(`${fake.url}/graphql`)).status, 404);
});
