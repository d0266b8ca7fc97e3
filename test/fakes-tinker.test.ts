/**
 * The fake Tinker SDK (test/fakes/python/tinker) behaves like the real one where the product relies
 * on it (key checks, error classes and statuses, billing rules, checkpoint paths, sizes and expiry,
 * state shared across processes, retries), and python/tinker_api.py answers each command against
 * it in its documented JSON, never printing the key.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { hourBucket, makeFakeTinker, type PythonResult } from './helpers/fakeTinker.js';

const KEY = 'tml-fake-tinker-test-billing-7f3c';
const NO_BILLING_KEY = 'tml-fake-tinker-test-plain-2b91';
const BASE = 'Qwen/Qwen3-8B';
const MIB = 1024 * 1024;

const fake = makeFakeTinker();
fake.addKey(KEY, { billingView: true });
fake.addKey(NO_BILLING_KEY);
fake.setModels([BASE, 'openai/gpt-oss-20b']);

/** Python prelude: `attempt(fn)` runs fn and reports its value or the exception's class, status and text. */
const ATTEMPT = `
import asyncio, json, sys, time, tinker
def attempt(fn):
    try:
        return {"ok": True, "value": fn()}
    except Exception as e:
        return {"ok": False, "type": type(e).__name__, "status": getattr(e, "status_code", None),
                "message": str(e), "classes": [c.__name__ for c in type(e).__mro__]}
def dump(x):
    return x.model_dump(mode="json")
`;

async function py(code: string, o: { key?: string; input?: string } = {}): Promise<any> {
  const result = await fake.python(ATTEMPT + code, o);
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout);
}

/** Every run of the helper in this file: checked for one JSON line, no traceback, and (at the end) no key. */
const helperOutputs: PythonResult[] = [];
async function api(command: string, args: unknown = {}, o: { key?: string; env?: Record<string, string> } = { key: KEY }) {
  const result = await fake.api(command, args, o);
  helperOutputs.push(result);
  assert.equal(result.stdout.trim().split('\n').length, 1, `one JSON line on stdout: ${result.stdout}`);
  assert.ok(result.json !== undefined, `stdout is JSON: ${result.stdout} ${result.stderr}`);
  assert.doesNotMatch(result.stderr, /Traceback/);
  return result;
}

const seconds = (a: string, b: string) => (Date.parse(b) - Date.parse(a)) / 1000;

test('a key without the tml-/eyJ prefix is refused by the SDK itself, on first use, before any request', async () => {
  const before = fake.calls().length;
  const code = `
client = tinker.ServiceClient()
print(json.dumps({"rest": attempt(lambda: client.create_rest_client() and None),
                  "caps": attempt(lambda: client.get_server_capabilities() and None)}))`;
  const wrong = await py(code, { key: 'sk-not-a-tinker-key' });
  for (const outcome of [wrong.rest, wrong.caps]) {
    assert.equal(outcome.ok, false);
    assert.equal(outcome.type, 'TinkerError');
    assert.equal(outcome.message, "The api_key must start with the 'tml-' prefix");
  }
  const none = await py(code);
  assert.equal(none.rest.type, 'TinkerError');
  assert.match(none.rest.message, /^The api_key client option must be set .* TINKER_API_KEY environment variable$/);
  assert.equal(fake.calls().length, before, 'nothing was sent');
  // A JWT-shaped credential passes the prefix check and reaches the service.
  const jwt = await py(code, { key: 'eyJhbGciOiJIUzI1NiJ9.e30.x' });
  assert.equal(jwt.rest.type, 'AuthenticationError');
});

test('an unknown key gets AuthenticationError 401 in the SDK message format; a known one is served', async () => {
  const code = `print(json.dumps(attempt(lambda: dump(tinker.ServiceClient().create_rest_client().list_sessions().result()))))`;
  const unknown = await py(code, { key: 'tml-nobody-knows-this-key' });
  assert.equal(unknown.ok, false);
  assert.equal(unknown.type, 'AuthenticationError');
  assert.equal(unknown.status, 401);
  assert.match(unknown.message, /^Error code: 401 - \{'detail': '.+'\}$/);
  assert.deepEqual(unknown.classes.slice(0, 5), ['AuthenticationError', 'APIStatusError', 'APIError', 'TinkerError', 'Exception']);
  const known = await py(code, { key: KEY });
  assert.equal(known.ok, true);
  assert.ok(Array.isArray(known.value.sessions));
});

test('checkpoints saved by a training client in one process are listed by a RestClient in another, with sizes and expires_at from the TTL', async () => {
  const seeded = await fake.seedRun(KEY, {
    baseModel: BASE,
    rank: 8,
    checkpoints: [{ name: '000010', kind: 'state', ttl_seconds: 3600 }, { name: '000010', kind: 'sampler' }],
  });
  const run = seeded.training_run_id;
  assert.match(run, /^[0-9a-f-]{36}:train:0$/);
  assert.equal(run.split(':train:')[0], seeded.session_id);
  assert.deepEqual(seeded.paths, { '000010': `tinker://${run}/sampler_weights/000010` }, 'the later save of the same name wins the map');
  const listed = await py(`
rest = tinker.ServiceClient().create_rest_client()
run = sys.stdin.read()
parsed = tinker.ParsedCheckpointTinkerPath.from_tinker_path(f"tinker://{run}/weights/000010")
print(json.dumps({"list": dump(rest.list_checkpoints(run).result()), "run": dump(rest.get_training_run(run).result()),
                  "session": dump(rest.get_session(run.split(":train:")[0]).result()), "parsed": dump(parsed),
                  "by_path_async": dump(asyncio.run(rest.get_training_run_by_tinker_path_async(parsed.tinker_path)))}))`, { key: KEY, input: run });
  const [state, sampler] = listed.list.checkpoints;
  assert.deepEqual([state.checkpoint_id, state.checkpoint_type, state.tinker_path], ['weights/000010', 'training', `tinker://${run}/weights/000010`]);
  assert.deepEqual([sampler.checkpoint_id, sampler.checkpoint_type, sampler.tinker_path], ['sampler_weights/000010', 'sampler', `tinker://${run}/sampler_weights/000010`]);
  assert.equal(state.size_bytes, 8 * 12 * MIB);
  assert.equal(sampler.size_bytes, 8 * 4 * MIB);
  assert.equal(seconds(state.time, state.expires_at), 3600);
  assert.equal(sampler.expires_at, null);
  assert.equal(listed.run.base_model, BASE);
  assert.equal(listed.run.lora_rank, 8);
  assert.equal(listed.run.last_checkpoint.tinker_path, state.tinker_path);
  assert.equal(listed.run.last_sampler_checkpoint.tinker_path, sampler.tinker_path);
  assert.deepEqual(listed.session.training_run_ids, [run]);
  assert.deepEqual(listed.by_path_async, listed.run);
  assert.deepEqual(listed.parsed, { tinker_path: `tinker://${run}/weights/000010`, training_run_id: run, checkpoint_type: 'training', checkpoint_id: 'weights/000010' });
  const savedBy = fake.calls('save_state').find((c) => c.args.model_id === run)!.pid;
  const listedBy = fake.calls('list_checkpoints').find((c) => c.args.training_run_id === run)!.pid;
  assert.notEqual(savedBy, listedBy);
});

test('a deleted or expired checkpoint is gone: 404 on every call naming it; bad TTLs and paths are refused', async () => {
  const { training_run_id: run, paths } = await fake.seedRun(KEY, {
    baseModel: BASE,
    checkpoints: [{ name: 'short', kind: 'state', ttl_seconds: 1 }, { name: 'kept', kind: 'sampler' }],
  });
  const out = await py(`
rest = tinker.ServiceClient().create_rest_client()
short, kept = json.loads(sys.stdin.read())
r = {"ttl0": attempt(lambda: rest.set_checkpoint_ttl_from_tinker_path(kept, 0).result()),
     "delete": attempt(lambda: rest.delete_checkpoint_from_tinker_path(kept).result()),
     "again": attempt(lambda: rest.delete_checkpoint_from_tinker_path(kept).result()),
     "ttl": attempt(lambda: rest.set_checkpoint_ttl_from_tinker_path(kept, 60).result()),
     "archive": attempt(lambda: rest.get_checkpoint_archive_url_from_tinker_path(kept).result()),
     "sample": attempt(lambda: tinker.ServiceClient().create_sampling_client(model_path=kept) and None),
     "bad_path": attempt(lambda: rest.delete_checkpoint_from_tinker_path("tinker://run/checkpoints/x"))}
time.sleep(1.2)
r["after_expiry"] = [c.tinker_path for c in rest.list_checkpoints(short.split("/")[2]).result().checkpoints]
r["resume_expired"] = attempt(lambda: tinker.ServiceClient().create_training_client_from_state(short) and None)
print(json.dumps(r))`, { key: KEY, input: JSON.stringify([`tinker://${run}/weights/short`, paths.kept]) });
  assert.equal(out.ttl0.type, 'BadRequestError');
  assert.equal(out.ttl0.status, 400);
  assert.deepEqual(out.delete, { ok: true, value: null });
  for (const name of ['again', 'ttl', 'archive', 'sample', 'resume_expired']) {
    assert.equal(out[name].type, 'NotFoundError', name);
    assert.equal(out[name].status, 404, name);
  }
  assert.deepEqual([out.bad_path.type, out.bad_path.message], ['ValueError', 'Invalid tinker path: tinker://run/checkpoints/x']);
  assert.deepEqual(out.after_expiry, []);
});

test('billing usage: 403 without the billing-view role; 400 for a window over 14 days, off the hour or in the future; rows in the wire shape', async () => {
  const [start, end] = hourBucket(2);
  fake.addBillingRows([
    { bucket_start: start, bucket_end: end, base_model: BASE, session_id: 'billing-shape-session', event_info: { type: 'training', token_count: 10 } },
    { bucket_start: start, bucket_end: end, base_model: BASE, session_id: 'billing-shape-session', event_info: { type: 'sampling_prefill', cached: true, token_count: 20 } },
  ]);
  const windowEnd = new Date(Date.parse(end) + 3600_000);
  const iso = (d: Date) => d.toISOString().replace('.000Z', 'Z');
  const daysBefore = (days: number) => iso(new Date(windowEnd.getTime() - days * 86_400_000));
  const cases = {
    over: [daysBefore(14.5), iso(windowEnd)],
    off_hour: [daysBefore(1).replace(':00:00Z', ':30:00Z'), iso(windowEnd)],
    future: [iso(new Date(windowEnd.getTime() + 86_400_000)), iso(new Date(windowEnd.getTime() + 2 * 86_400_000))],
    exactly_14_days: [daysBefore(14), iso(windowEnd)],
  };
  const code = `
rest = tinker.ServiceClient().create_rest_client()
cases = json.loads(sys.stdin.read())
print(json.dumps({**{k: attempt(lambda v=v: dump(rest.get_billing_usage(*v).result())) for k, v in cases.items()},
                  "not_a_time": attempt(lambda: rest.get_billing_usage("yesterday", "today"))}))`;
  const refused = await py(code, { key: NO_BILLING_KEY, input: JSON.stringify(cases) });
  assert.equal(refused.exactly_14_days.type, 'PermissionDeniedError');
  assert.equal(refused.exactly_14_days.status, 403);
  const out = await py(code, { key: KEY, input: JSON.stringify(cases) });
  for (const name of ['over', 'off_hour', 'future']) assert.deepEqual([out[name].type, out[name].status], ['BadRequestError', 400], name);
  assert.match(out.over.message, /14 days/);
  assert.ok(out.not_a_time.classes.includes('ValueError'), 'refused before sending');
  const rows = out.exactly_14_days.value.data.filter((r: any) => r.session_id === 'billing-shape-session');
  assert.deepEqual(rows.map((r: any) => r.event_info), [{ type: 'sampling_prefill', cached: true, token_count: 20 }, { type: 'training', token_count: 10 }], 'ordered by bucket, then the larger count first');
  assert.equal(rows[0].bucket_start, start);
  assert.deepEqual(out.exactly_14_days.value.sessions['billing-shape-session'], { user_metadata: null });
});

test('server errors and lost connections are retried as the SDK retries them, then raised', async () => {
  try {
    fake.setFaults({ list_sessions: { status: 500, times: 1 } });
    const started = Date.now();
    const recovered = await py(`print(json.dumps(attempt(lambda: dump(tinker.ServiceClient().create_rest_client().list_sessions().result()))))`, { key: KEY });
    assert.equal(recovered.ok, true);
    assert.ok(Date.now() - started >= 1000, 'one backoff of 1 s');
    fake.setService({ retry_window_seconds: 0 });
    fake.setFaults({ list_sessions: { status: 503, detail: 'overloaded' } });
    const failed = await py(`print(json.dumps(attempt(lambda: tinker.ServiceClient().create_rest_client().list_sessions().result())))`, { key: KEY });
    assert.deepEqual([failed.type, failed.status, failed.message], ['InternalServerError', 503, "Error code: 503 - {'detail': 'overloaded'}"]);
    // 402 (billing): paused with a warning, not failed, while the pause lasts.
    fake.setService({ retry_window_seconds: 0 });
    fake.setFaults({ list_sessions: { status: 402, detail: 'payment required', times: 1 } });
    const paused = await fake.python(`${ATTEMPT}\nprint(json.dumps(attempt(lambda: dump(tinker.ServiceClient().create_rest_client().list_sessions().result()))))`, { key: KEY });
    assert.equal(JSON.parse(paused.stdout).ok, true);
    assert.match(paused.stderr, /The job is paused due to billing status\. Error: Error code: 402 - \{'detail': 'payment required'\}/);
    fake.setService({ retry_window_seconds: 0, billing_pause_seconds: 0 });
    fake.setFaults({ list_sessions: { status: 402, detail: 'payment required' } });
    const unpaid = await py(`print(json.dumps(attempt(lambda: tinker.ServiceClient().create_rest_client().list_sessions().result())))`, { key: KEY });
    assert.deepEqual([unpaid.type, unpaid.status], ['APIStatusError', 402]);
    fake.setFaults({ '*': { connection_error: true } });
    const offline = await py(`print(json.dumps(attempt(lambda: tinker.ServiceClient().create_rest_client())))`, { key: KEY });
    assert.deepEqual([offline.type, offline.message], ['APIConnectionError', 'Connection error.']);
  } finally {
    fake.setFaults(null);
    fake.setService({});
  }
});

test('tinker_api.py models: the live base models, without creating a session', async () => {
  const sessionsBefore = fake.calls('create_session').length;
  const { code, json } = await api('models');
  assert.equal(code, 0);
  assert.deepEqual(json, { models: [{ name: BASE, max_context_length: null }, { name: 'openai/gpt-oss-20b', max_context_length: null }] });
  assert.equal(fake.calls('create_session').length, sessionsBefore);
});

test('tinker_api.py sessions: training runs mapped to their sessions and back', async () => {
  const { session_id, training_run_id } = await fake.seedRun(KEY, { baseModel: BASE });
  const { json } = await api('sessions', { training_run_ids: [training_run_id, 'no-such-session:train:0'], session_ids: ['no-such-session-either'] });
  assert.deepEqual(json, {
    sessions: { [session_id]: { training_run_ids: [training_run_id], sampler_ids: [] } },
    training_runs: { [training_run_id]: session_id, 'no-such-session:train:0': null },
    not_found: ['no-such-session-either'],
  });
});

test('tinker_api.py billing: a run\'s rows summed per hour and type (cached prefill apart), as_of the newest hour billed, windows over 14 days asked in pieces', async () => {
  const { session_id, training_run_id } = await fake.seedRun(KEY, { baseModel: BASE });
  const [h2, h2end] = hourBucket(3);
  const [h1, h1end] = hourBucket(1);
  const [h0, h0end] = hourBucket(0);
  const row = (bucket: [string, string], session: string | null, event_info: any) => ({ bucket_start: bucket[0], bucket_end: bucket[1], base_model: BASE, session_id: session, event_info });
  fake.addBillingRows([
    row([h2, h2end], session_id, { type: 'training', token_count: 1000 }),
    row([h2, h2end], session_id, { type: 'sampling_prefill', cached: false, token_count: 300 }),
    row([h2, h2end], session_id, { type: 'sampling_prefill', cached: true, token_count: 700 }),
    row([h2, h2end], session_id, { type: 'sampling_sample', token_count: 50 }),
    row([h1, h1end], session_id, { type: 'training', token_count: 500 }),
    row([h1, h1end], session_id, { type: 'checkpoint', count: 2 }),
    row([h1, h1end], null, { type: 'storage', gigabyte_hours: 1.5 }),
    row([h0, h0end], 'some-other-session', { type: 'training', token_count: 99_999 }),
  ]);
  const since = new Date(Date.parse(h0) - 20 * 86_400_000).toISOString();
  const callsBefore = fake.calls('get_billing_usage').length;
  const { code, json } = await api('billing', { start: since, training_run_ids: [training_run_id] });
  assert.equal(code, 0, JSON.stringify(json));
  const zero = { training: 0, sampling_prefill: 0, sampling_prefill_cached: 0, sampling_sample: 0, checkpoint: 0, storage_gigabyte_hours: 0 };
  assert.deepEqual(json.hours, [
    { hour: h2, base_model: BASE, ...zero, training: 1000, sampling_prefill: 300, sampling_prefill_cached: 700, sampling_sample: 50 },
    { hour: h1, base_model: BASE, ...zero, training: 500, checkpoint: 2 },
  ]);
  assert.deepEqual(json.totals, [{ base_model: BASE, ...zero, training: 1500, sampling_prefill: 300, sampling_prefill_cached: 700, sampling_sample: 50, checkpoint: 2 }]);
  assert.deepEqual(json.session_ids, [session_id]);
  assert.equal(json.as_of, h0end, 'the newest hour with any row, whoever it belongs to');
  assert.equal(json.window.end, h0end);
  const pieces = fake.calls('get_billing_usage').slice(callsBefore).map((c) => [c.args.starting_on as string, c.args.ending_before as string]);
  assert.equal(pieces.length, 2);
  assert.equal(pieces[0]![1], pieces[1]![0], 'contiguous');
  for (const [from, to] of pieces) assert.ok(seconds(from, to) <= 14 * 86_400);
  assert.equal(seconds(pieces[0]![0], json.window.start), 0);

  const everyone = await api('billing', { start: h0, end: h0end });
  assert.equal(everyone.json.session_ids, null);
  assert.equal(everyone.json.totals[0].training, 99_999);

  const denied = await api('billing', { start: h0 }, { key: NO_BILLING_KEY });
  assert.equal(denied.code, 1);
  assert.equal(denied.json.error.kind, 'permission');
  assert.equal(denied.json.error.status, 403);
});

test('tinker_api.py checkpoints, set_ttl, publish, archive_url and delete', async () => {
  const { training_run_id: run, paths } = await fake.seedRun(KEY, {
    baseModel: BASE,
    rank: 4,
    checkpoints: [{ name: 's1', kind: 'state' }, { name: 'p1', kind: 'sampler' }, { name: 'p2', kind: 'sampler', ttl_seconds: 7200 }],
  });
  const state = `tinker://${run}/weights/s1`;
  const listing = async () => (await api('checkpoints', { training_run_ids: [run] })).json.checkpoints as any[];
  const first = await listing();
  assert.deepEqual(first.map((c) => [c.path, c.name, c.kind, c.size_bytes, c.training_run_id, c.public]), [
    [state, 's1', 'state', 4 * 12 * MIB, run, false],
    [paths.p1, 'p1', 'sampler', 4 * 4 * MIB, run, false],
    [paths.p2, 'p2', 'sampler', 4 * 4 * MIB, run, false],
  ]);
  assert.equal(first[0].expires_at, null);
  assert.equal(seconds(first[2].created_at, first[2].expires_at), 7200);
  const byPath = await api('checkpoints', { paths: [paths.p1, `tinker://${run}/sampler_weights/missing`], training_run_ids: ['nobody:train:0'] });
  assert.deepEqual(byPath.json.checkpoints.map((c: any) => c.path), [paths.p1]);
  assert.deepEqual(byPath.json.not_found, ['nobody:train:0', `tinker://${run}/sampler_weights/missing`]);

  const ttl = await api('set_ttl', { paths: [paths.p1], ttl_seconds: 600 });
  assert.deepEqual(ttl.json, { results: [{ path: paths.p1, ok: true }] });
  const afterTtl = (await listing()).find((c) => c.path === paths.p1);
  assert.ok(Math.abs(seconds(new Date().toISOString(), afterTtl.expires_at) - 600) < 30);
  assert.deepEqual(fake.calls('set_checkpoint_ttl_from_tinker_path').at(-1)!.args, { tinker_path: paths.p1, ttl_seconds: 600 });
  await api('set_ttl', { paths: [paths.p1], ttl_seconds: null });
  assert.equal((await listing()).find((c) => c.path === paths.p1).expires_at, null);
  const zero = await api('set_ttl', { paths: [paths.p1], ttl_seconds: 0 });
  assert.deepEqual([zero.json.results[0].ok, zero.json.results[0].error.kind, zero.json.results[0].error.status], [false, 'bad_request', 400]);

  const published = await api('publish', { paths: [state] });
  assert.deepEqual(published.json, { results: [{ path: state, ok: true }] });
  assert.equal((await listing())[0].public, true);
  // Publishing again would get a 409, which the SDK retries for five minutes: the helper does not send it.
  const publishCalls = fake.calls('publish_checkpoint_from_tinker_path').length;
  const again = await api('publish', { paths: [state], timeout_seconds: 10 });
  assert.deepEqual(again.json, { results: [{ path: state, ok: true, already_public: true }] });
  assert.equal(fake.calls('publish_checkpoint_from_tinker_path').length, publishCalls);

  const archive = await api('archive_url', { paths: [state] });
  assert.match(archive.json.results[0].url, /^https:\/\//);
  assert.ok(Date.parse(archive.json.results[0].expires) > Date.now());

  const deleted = await api('delete', { paths: [paths.p1, paths.p1, 'not-a-tinker-path'] });
  assert.deepEqual(deleted.json.results.map((r: any) => [r.ok, r.error?.kind, r.error?.status]), [
    [true, undefined, undefined],
    [false, 'not_found', 404],
    [false, 'bad_request', null],
  ]);
  assert.deepEqual((await listing()).map((c) => c.name), ['s1', 'p2']);
});

test('tinker_api.py errors: JSON with a kind and a nonzero exit, never a bare traceback', async () => {
  const malformed = await api('models', {}, { key: 'sk-wrong-prefix' });
  assert.deepEqual([malformed.code, malformed.json.error.kind, malformed.json.error.status], [1, 'auth', null]);
  assert.match(malformed.json.error.message, /tml-/);
  const missing = await api('models', {}, {});
  assert.equal(missing.json.error.kind, 'auth');
  const unknown = await api('models', {}, { key: 'tml-unknown-to-the-service' });
  assert.deepEqual([unknown.json.error.kind, unknown.json.error.status], ['auth', 401]);
  const noSdk = await api('models', {}, { key: KEY, env: { PYTHONPATH: '' } });
  assert.deepEqual([noSdk.code, noSdk.json.error.kind], [1, 'sdk_missing']);
  try {
    // A service that echoes the credential in its error message: the helper still never prints it.
    fake.setFaults({ get_session: { status: 401, detail: `invalid credential ${KEY}` } });
    const echoed = await api('sessions', { session_ids: ['any'] });
    assert.deepEqual([echoed.json.error.kind, echoed.json.error.status], ['auth', 401]);
    assert.match(echoed.json.error.message, /invalid credential \[redacted\]/);
  } finally {
    fake.setFaults(null);
  }
  const usage = await api('frobnicate');
  assert.deepEqual([usage.code, usage.json.error.kind], [2, 'usage']);
  const badArgs = await api('checkpoints', { paths: 'tinker://x/weights/y' });
  assert.deepEqual([badArgs.code, badArgs.json.error.kind], [2, 'usage']);
  try {
    fake.setFaults({ '*': { status: 500 } });
    const started = Date.now();
    const down = await api('models', { timeout_seconds: 1 });
    assert.deepEqual([down.code, down.json.error.kind], [1, 'unavailable']);
    assert.ok(Date.now() - started < 15_000, 'the deadline, not the SDK\'s five minutes of retries');
  } finally {
    fake.setFaults(null);
  }
});

test('no key in anything the helper printed or the service logged', () => {
  assert.ok(helperOutputs.length >= 20);
  for (const secret of [KEY, NO_BILLING_KEY, 'sk-wrong-prefix', 'tml-unknown-to-the-service']) {
    for (const { stdout, stderr } of helperOutputs) {
      assert.ok(!stdout.includes(secret) && !stderr.includes(secret), `${secret} printed`);
    }
    assert.ok(!readFileSync(join(fake.dir, 'calls.jsonl'), 'utf8').includes(secret), `${secret} logged`);
  }
});
