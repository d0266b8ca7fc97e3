/**
 * What Tinker itself knows, through the MCP client with our own processes running for real: the
 * trainer saves its checkpoints through the fake Tinker SDK (test/fakes/python/tinker), and the
 * server asks the same fake service through python/tinker_api.py for a run's billed usage (rows the
 * test writes), its checkpoints (listed, expired, deleted, exported) and the live base models.
 */
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { connectInMemory } from './helpers/client.js';
import { makeFakeInstall, type FakeInstall } from './helpers/fakeInstall.js';
import { hourBucket, type BillingRow, type FakeTinker } from './helpers/fakeTinker.js';
import { filesUnder, leftovers, record, runServer, runsTinker, TINKER_KEY, waitForRun, waitUntil, type RunServer } from './helpers/runs.js';
import { tempDir } from './helpers/tmp.js';
import { isEnded } from '../src/runtime/runs/seams/record.js';

const TODAY = new Date().toISOString().slice(0, 10);
const SAMPLER_BYTES = 4 * 1024 * 1024 * 32; // the fake's 4 MiB per LoRA rank, rank 32 (locked)

/** The session a tinker:// path's training run belongs to (`<session>:train:<n>`). */
const sessionOfPath = (path: string): string => /^tinker:\/\/([^/]+):train:\d+\//.exec(path)![1]!;

function row(session: string | null, bucket: [string, string], info: BillingRow['event_info'], model: string | null = 'Qwen/Qwen3-8B'): BillingRow {
  return { bucket_start: bucket[0], bucket_end: bucket[1], base_model: model, session_id: session, event_info: info };
}

/**
 * RL_PYTHON as a wrapper that logs every command line it runs (and whether the key came in the
 * environment), beside the install's interpreter so that run-api is found next to it.
 */
function loggingPython(install: FakeInstall): { path: string; log: string } {
  const path = join(dirname(install.python), 'python-logged');
  const log = join(tempDir('rlmcp-argv-'), 'argv.log');
  writeFileSync(path, `#!/bin/sh\nprintf '%s key_in_env=%s\\n' "$*" "\${TINKER_API_KEY:+yes}" >> '${log}'\nexec '${install.python}' "$@"\n`);
  chmodSync(path, 0o755);
  return { path, log };
}

/** Elicitation answers by the test: `reply` decides, every question is kept. */
function answering(h: RunServer): { questions: { message: string; field: string }[]; reply: 'accept' | 'decline' } {
  const state = { questions: [] as { message: string; field: string }[], reply: 'accept' as 'accept' | 'decline' };
  h.client.setRequestHandler('elicitation/create', (request) => {
    const params = request.params as { message: string; requestedSchema: { properties: Record<string, unknown> } };
    const field = Object.keys(params.requestedSchema.properties)[0]!;
    state.questions.push({ message: params.message, field });
    return state.reply === 'accept' ? { action: 'accept', content: { [field]: true } } : { action: 'decline' };
  });
  return state;
}

async function completedRun(h: RunServer): Promise<{ id: string; session: string; latest: string }> {
  const started = await h.call('rl_start_training');
  assert.equal(started.isError, false, JSON.stringify(started.json));
  const id = started.json.run_id as string;
  const done = await waitForRun(h, id, 'completed with nothing running', (r) => r.status !== 'starting' && r.status !== 'running' && r.status !== 'stopping' && Object.values(r.processes).every((p) => p.state !== 'running'), 120);
  assert.equal(done.status, 'completed', `${done.error}\n${readFileSync(done.logs.trainer, 'utf8').slice(-2000)}`);
  const latest = [...readFileSync(done.logs.trainer, 'utf8').matchAll(/^Sampling client updated: (\S+)$/gm)].at(-1)![1]!;
  return { id, session: sessionOfPath(latest), latest };
}

test('billed usage, checkpoints and the key: one run on the fake Tinker, asked through python/tinker_api.py', async (t: TestContext) => {
  const tinker: FakeTinker = runsTinker();
  tinker.addKey(TINKER_KEY, { billingView: true });
  const install = await makeFakeInstall();
  const wrapper = loggingPython(install);
  const h = await runServer(t, { install, tinker, env: { RL_PYTHON: wrapper.path, RL_BILLING_REFRESH_SECONDS: '1' }, capabilities: { elicitation: {} } });
  const answers: string[] = [];
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const answer = await h.call(name, args);
    answers.push(JSON.stringify(answer.json));
    return answer;
  };
  const asked = answering(h);
  const run = await completedRun(h);
  const runPrefix = run.latest.replace(/step_\d+$/, 'step_');
  const ended = record(h, run.id).ended_at!;
  const bucket = hourBucket(0, new Date(ended));

  await t.test('billed dollars from known rows equal the hand calculation, cached prefill included, with as_of', async () => {
    tinker.addBillingRows([
      row(run.session, bucket, { type: 'training', token_count: 1_000_000 }),
      row(run.session, bucket, { type: 'sampling_prefill', cached: false, token_count: 400_000 }),
      row(run.session, bucket, { type: 'sampling_prefill', cached: true, token_count: 100_000 }),
      row(run.session, bucket, { type: 'sampling_sample', token_count: 250_000 }),
      row(run.session, bucket, { type: 'checkpoint', count: 4 }),
      row('another-session', bucket, { type: 'training', token_count: 9_999_999 }),
      row(null, bucket, { type: 'storage', gigabyte_hours: 123 }, null),
    ]);
    const status = (await call('rl_check_status', { run_id: run.id })).json;
    const billed = status.cost.billed;
    // The shipped Qwen/Qwen3-8B rates per million: train 0.44, prefill 0.195, cached prefill 20% of it, sample 0.6.
    const tokensUsd = 1 * 0.44 + 0.4 * 0.195 + 0.1 * 0.195 * 0.2 + 0.25 * 0.6;
    assert.ok(Math.abs(billed.usd - tokensUsd - billed.by_type.storage.usd) < 1e-6, JSON.stringify(billed));
    assert.ok(billed.by_type.storage.usd < 1e-4, 'four small checkpoints kept for seconds');
    assert.deepEqual(billed.by_type.sampling_prefill_cached, { amount: 100_000, unit: 'tokens', usd: 0.0039 });
    assert.deepEqual(billed.by_type.training, { amount: 1_000_000, unit: 'tokens', usd: 0.44 }, "another session's rows are not the run's");
    assert.equal(billed.by_type.checkpoint.amount, 4);
    assert.equal(billed.as_of, bucket[1]);
    assert.match(billed.note, /lags real time by up to a few hours/);
    assert.equal(typeof status.cost.spent_usd, 'number', 'the estimate stays beside it');
    assert.equal(status.cost.estimate, true);

    const results = (await call('rl_get_results', { run_id: run.id })).json;
    assert.equal(results.cost.billed.usd, billed.usd);
    assert.deepEqual({ ...results.storage, checked_at: undefined, note: undefined }, { checkpoints: 4, size_bytes: 4 * SAMPLER_BYTES, monthly_cost_usd: Math.round(4 * SAMPLER_BYTES * 1e-10 * 1e6) / 1e6, checked_at: undefined, note: undefined });
    const listed = (await call('rl_list_runs')).json.runs[0].cost;
    assert.deepEqual([listed.billed_usd, listed.billed_as_of], [billed.usd, bucket[1]]);
    assert.ok(tinker.calls('get_billing_usage').length >= 1);
  });

  await t.test('rl_checkpoints lists, expires and deletes the intermediate checkpoints, keeping the latest; a decline or a client that cannot ask deletes nothing until confirm_affected names them', async () => {
    const list = (await call('rl_checkpoints', { run_id: run.id, action: 'list' })).json;
    assert.equal(list.checkpoints_total, 4);
    assert.deepEqual(list.checkpoints.map((c: { step: number; kind: string }) => [c.step, c.kind]), [[0, 'sampler'], [1, 'sampler'], [2, 'sampler'], [3, 'sampler']]);
    assert.ok(list.checkpoints.every((c: { size_bytes: number; expires_at: null; monthly_cost_usd: number }) => c.size_bytes === SAMPLER_BYTES && c.expires_at === null && c.monthly_cost_usd === 0.013422));
    const intermediate = [0, 1, 2].map((n) => `${runPrefix}${n}`);

    const ttl = (await call('rl_checkpoints', { run_id: run.id, action: 'set_ttl', ttl_seconds: 86_400 })).json;
    assert.equal(ttl.done, true, JSON.stringify(ttl));
    assert.deepEqual(ttl.affected, [`${runPrefix}{0..2}`]);
    assert.deepEqual(ttl.kept, [{ path: run.latest, why: "the run's trained weights (rl_get_results names them): never removed" }]);
    assert.deepEqual(tinker.calls('set_checkpoint_ttl_from_tinker_path').map((c) => [c.args.tinker_path, c.args.ttl_seconds]), intermediate.map((p) => [p, 86_400]));
    assert.equal(asked.questions.at(-1)!.field, 'expire');

    asked.reply = 'decline';
    const declined = (await call('rl_checkpoints', { run_id: run.id, action: 'delete' })).json;
    assert.deepEqual([declined.done, declined.confirmation], [false, 'decline']);
    assert.match(asked.questions.at(-1)!.message, new RegExp(`^Delete 3 checkpoint\\(s\\) of run ${run.id} from Tinker for good\\? .*${runPrefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\{0\\.\\.2\\}\\. Kept: ${run.latest.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(the run's trained weights \\(rl_get_results names them\\): never removed\\)\\.$`));
    assert.deepEqual(tinker.calls('delete_checkpoint_from_tinker_path'), [], 'a decline deletes nothing');
    assert.equal((await call('rl_checkpoints', { run_id: run.id, action: 'list' })).json.checkpoints_total, 4);

    // A decline may come from a client with nobody to ask: the answer says how to confirm, never that a user declined.
    assert.match(declined.message, /^Nothing was deleted: not confirmed \(the client answered the question "decline".*call again with the same arguments plus confirm_affected set to affected; if the user said no, do not\.$/);

    // A client without elicitation (Hermes) on the same RL_HOME: refused until the call names exactly what it deletes.
    const plain = await connectInMemory(h.env);
    const unasked = (await plain.call('rl_checkpoints', { run_id: run.id, action: 'delete' })).json;
    assert.deepEqual([unasked.done, unasked.confirmation, unasked.affected], [false, 'unsupported', [`${runPrefix}{0..2}`]]);
    assert.match(unasked.message, /^Nothing was deleted: not confirmed \(this client cannot ask its user: it declared no elicitation\)\. .*confirm_affected set to affected/);
    const other = (await plain.call('rl_checkpoints', { run_id: run.id, action: 'delete', confirm_affected: [`${runPrefix}{0..1}`] })).json;
    assert.deepEqual([other.done, other.confirmation], [false, 'not_asked']);
    assert.match(other.message, /confirm_affected does not name exactly what this call acts on now/);
    assert.deepEqual(tinker.calls('delete_checkpoint_from_tinker_path'), [], 'nothing deleted without the exact confirmation');
    const questionsBefore = asked.questions.length;
    const deleted = (await plain.call('rl_checkpoints', { run_id: run.id, action: 'delete', confirm_affected: unasked.affected })).json;
    assert.deepEqual([deleted.done, deleted.confirmation, deleted.affected, deleted.affected_count], [true, 'argument', [`${runPrefix}{0..2}`], 3]);
    assert.equal(asked.questions.length, questionsBefore);
    await plain.close();
    assert.deepEqual(tinker.calls('delete_checkpoint_from_tinker_path').map((c) => c.args.tinker_path), intermediate);
    const after = (await call('rl_checkpoints', { run_id: run.id, action: 'list' })).json;
    assert.deepEqual(after.checkpoints.map((c: { path: string }) => c.path), [run.latest]);
    assert.equal((await call('rl_get_results', { run_id: run.id })).json.storage.checkpoints, 1);

    asked.reply = 'accept';
    const exported = (await call('rl_checkpoints', { run_id: run.id, action: 'export', publish: true })).json;
    assert.equal(exported.path, run.latest);
    assert.match(exported.url, /^https:\/\/storage\.fake-tinker\.invalid\/archives\//);
    assert.equal(exported.published, true);
    assert.deepEqual(tinker.calls('publish_checkpoint_from_tinker_path').map((c) => c.args.tinker_path), [run.latest]);
  });

  await t.test('without the billing-view role the answer says so, the estimate stays, and the server keeps answering', async () => {
    tinker.addKey(TINKER_KEY, { billingView: false });
    await new Promise((resolve) => setTimeout(resolve, 1100)); // past RL_BILLING_REFRESH_SECONDS
    const status = await call('rl_check_status', { run_id: run.id });
    assert.equal(status.isError, false);
    assert.equal(status.json.cost.billed.usd, null);
    assert.match(status.json.cost.billed.note, /^No billed figure: TINKER_API_KEY lacks the billing-view role .*403.*The estimate \(spent_usd\) stands\.$/);
    assert.equal(typeof status.json.cost.spent_usd, 'number');
    const listed = await call('rl_list_runs');
    assert.equal(listed.isError, false);
    assert.equal(listed.json.runs[0].cost.billed_usd, null);
    assert.equal((await call('rl_get_results', { run_id: run.id })).isError, false);
  });

  await t.test('no key in argv, files or answers, the helper included', () => {
    const argv = readFileSync(wrapper.log, 'utf8').trim().split('\n');
    const helper = argv.filter((l) => l.includes('tinker_api.py'));
    assert.ok(helper.some((l) => /\/tinker_api\.py usage key_in_env=yes$/.test(l)), argv.join('\n'));
    assert.ok(helper.some((l) => /\/tinker_api\.py delete key_in_env=yes$/.test(l)));
    assert.ok(helper.every((l) => l.endsWith(' key_in_env=yes')), 'the helper gets the key in its environment');
    for (const line of argv) assert.ok(!line.includes(TINKER_KEY), `the key in a command line: ${line}`);
    for (const file of [...filesUnder(h.home), ...filesUnder(tinker.dir).filter((f) => !f.endsWith('keys.json'))]) {
      assert.ok(!readFileSync(file, 'utf8').includes(TINKER_KEY), `the key in ${file}`);
    }
    for (const answer of answers) assert.ok(!answer.includes(TINKER_KEY));
    assert.deepEqual(leftovers([h.install.root, h.home]), []);
  });
});

/**
 * The path of the run's first sampler checkpoint, from its trainer log. A run that ends first fails
 * at once, and a timeout says the run's status; both with the trainer log's end.
 */
function firstCheckpoint(h: RunServer, id: string): Promise<string> {
  const seen = (): string => {
    const run = record(h, id);
    return `the run is ${run.status}${run.error ? ` (${run.error})` : ''}; the trainer log ends:\n${readFileSync(run.logs.trainer, 'utf8').slice(-1500)}`;
  };
  return waitUntil('the first checkpoint', () => {
    const path = /^Initial sampling client created: (\S+)$/m.exec(readFileSync(record(h, id).logs.trainer, 'utf8'))?.[1];
    if (path === undefined && isEnded(record(h, id).status)) assert.fail(`the run ended before its first checkpoint: ${seen()}`);
    return path;
  }, 120, seen);
}

test('a budget stops a run on billed spend when Tinker billed more than the estimate', async (t) => {
  const tinker = runsTinker();
  tinker.addKey(TINKER_KEY, { billingView: true });
  const prices = { 'Qwen/Qwen3-8B': { prefill: 0.001, sample: 0.001, train: 0.001, as_of: TODAY, source: 'test' } };
  const h = await runServer(t, { tinker, lockedEnv: { total_steps: 40 }, config: { prices }, env: { RL_MAX_RUN_COST_USD: '1', RL_BILLING_REFRESH_SECONDS: '1' } });
  h.install.trainerControl({ step_seconds: 1 });
  const started = await h.call('rl_start_training');
  assert.equal(started.isError, false, JSON.stringify(started.json));
  const id = started.json.run_id as string;
  assert.ok(started.json.cost_estimate.total_usd.high.usd < 1, 'the estimate fits the budget');
  const first = await firstCheckpoint(h, id);
  // $2 of training at $0.001 per million tokens.
  tinker.addBillingRows([row(sessionOfPath(first), hourBucket(0), { type: 'training', token_count: 2_000_000_000 })]);

  const stopped = await waitForRun(h, id, 'stopped at its budget', (r) => r.status === 'stopped' && Object.values(r.processes).every((p) => p.state !== 'running'), 120);
  assert.match(stopped.error!, /^budget reached: billed spend \$2 reached RL_MAX_RUN_COST_USD=\$1 \(Tinker's billing up to \S+, above the estimate of \$[\d.]+; the latest checkpoint is kept\)$/);
  const status = (await h.call('rl_check_status', { run_id: id })).json;
  assert.ok(status.cost.spent_usd < 1, `the estimate alone would not have stopped it: ${status.cost.spent_usd}`);
  assert.equal(status.cost.billed.usd, 2);
  // The listing says what budgets count: the ledger's figure, Tinker's billing here, not the estimate.
  const listed = (await h.call('rl_list_runs')).json;
  assert.deepEqual([listed.runs[0].cost.spent_usd, listed.spend.total_usd], [2, 2]);
  assert.match(listed.runs[0].cost.basis, /^Tinker's billing \(spend ledger\)/);
  assert.deepEqual(leftovers([h.install.root, h.home]), []);
});

test('a base model Tinker no longer serves is refused at start and flagged by the doctor, naming the live ones; an unanswered question blocks nothing', async (t) => {
  const retired = runsTinker();
  retired.setModels(['Qwen/Qwen3-32B', 'meta-llama/Llama-3.3-70B-Instruct']);
  const h = await runServer(t, { tinker: retired });
  const refused = await h.call('rl_start_training');
  assert.equal(refused.isError, true);
  assert.match(refused.json.error, /^Tinker no longer serves the base model Qwen\/Qwen3-8B .*Live base models: Qwen\/Qwen3-32B, meta-llama\/Llama-3\.3-70B-Instruct\./);
  assert.equal((await h.call('rl_list_runs')).json.total, 0, 'nothing was started');
  const doctor = (await h.call('rl_doctor')).json;
  const check = doctor.checks.find((c: { check: string }) => c.check === 'base model on Tinker');
  assert.deepEqual([check.ok, check.required, doctor.ready], [false, true, false]);
  assert.match(check.fix, /Live base models: Qwen\/Qwen3-32B, meta-llama\/Llama-3\.3-70B-Instruct\./);
  const config = (await h.call('rl_get_current_config')).json;
  assert.deepEqual([config.base_model.name, config.base_model.live], ['Qwen/Qwen3-8B', false]);
  assert.match(config.base_model.note, /Live base models: Qwen\/Qwen3-32B, meta-llama\/Llama-3\.3-70B-Instruct\.$/);
  assert.equal(retired.calls('get_server_capabilities').length, 1, 'asked once: the list is cached an hour');

  const down = runsTinker();
  down.setService({ retry_window_seconds: 1 });
  down.setFaults({ get_server_capabilities: { status: 503, detail: 'Service Unavailable' } });
  const unanswered = await runServer(t, { tinker: down });
  const doctorDown = (await unanswered.call('rl_doctor')).json;
  const checkDown = doctorDown.checks.find((c: { check: string }) => c.check === 'base model on Tinker');
  assert.equal(checkDown.ok, true);
  assert.match(checkDown.detail, /^Qwen\/Qwen3-8B: not checked \(Tinker did not answer/);
  assert.equal((await unanswered.call('rl_get_current_config')).json.base_model.live, null);
});
