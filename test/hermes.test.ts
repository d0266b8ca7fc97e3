/**
 * Hermes Agent drives the built server configured as clients/hermes/config.yaml says
 * (test/fakes/hermesClient.ts: Hermes 0.16.0's MCP client): where the runs land (HERMES_HOME set,
 * unset, a profile), the refusals a model can fix never tripping Hermes's breaker, each answer
 * reaching the model once, input schemas keeping their meaning through Hermes's conversion, a
 * number in the env block, and the doctor with a placeholder W&B key.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, test, type TestContext } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { convertInputSchema, HermesServer, withProfile, type HermesEntry } from './fakes/hermesClient.js';
import { FakeWandb } from './fakes/wandbServer.js';
import { SERVER_INSTRUCTIONS } from '../src/server/instructions.js';
import { makeFakeInstall, type FakeInstall } from './helpers/fakeInstall.js';
import { killLeftovers, newHome, runServerEnv, runsTinker, TINKER_KEY, waitUntil } from './helpers/runs.js';
import { FAKE_PYTHONPATH, REPO_ROOT, tempDir } from './helpers/tmp.js';

const NAME = 'rl-training';
const tool = (name: string): string => `mcp_rl_training_${name}`;

/** The README's Hermes entry, its path filled in, as a user copies it. */
function snippetEntry(): HermesEntry {
  const config = parseYaml(readFileSync(join(REPO_ROOT, 'clients/hermes/config.yaml'), 'utf8')) as { mcp_servers: Record<string, HermesEntry> };
  const entry = config.mcp_servers[NAME]!;
  return { ...entry, args: entry.args?.map((a) => String(a).replace('/absolute/path/to/rl-training-mcp', REPO_ROOT)) };
}

let install: Promise<FakeInstall> | undefined;

interface Setup {
  entry: HermesEntry;
  /** Hermes's own process environment. */
  hermesEnv: Record<string, string | undefined>;
  home: string;
}

/**
 * The snippet's entry over a fake install and Tinker, as a user fills it in (their paths, and the
 * settings this machine needs, every value a string); RL_HOME left to its default, the Hermes home's.
 */
async function setUp(t: TestContext, hermesEnv: Record<string, string | undefined> = {}, extra: Record<string, unknown> = {}): Promise<Setup> {
  // In a run home's folder: removed when the file ends, after every server and trainer using it.
  const inst = await (install ??= makeFakeInstall({ dir: dirname(newHome()) }));
  const tinker = runsTinker();
  const runsHome = newHome();
  const { RL_HOME: _, TINKER_API_KEY: __, ...server } = await runServerEnv(inst, runsHome, { tinker });
  const entry = snippetEntry();
  const env = { ...entry.env, ...server, TINKER_ATROPOS_ROOT: inst.root, PYTHONPATH: FAKE_PYTHONPATH, LOG_LEVEL: 'warn', ...extra };
  entry.env = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined));
  const home = tempDir('rlmcp-hermes-user-');
  t.after(() => killLeftovers([inst.root, home]));
  return { entry, hermesEnv: { PATH: process.env.PATH, HOME: home, USER: 'hermes-user', LANG: 'C.UTF-8', TINKER_API_KEY: TINKER_KEY, ...hermesEnv }, home };
}

async function connect(t: TestContext, s: Setup): Promise<HermesServer> {
  const hermes = await HermesServer.connect(NAME, s.entry, s.hermesEnv);
  t.after(() => hermes.close());
  assert.equal(hermes.startFailure, undefined, `the server starts: ${existsSync(hermes.stderrLog) ? readFileSync(hermes.stderrLog, 'utf8') : ''}`);
  return hermes;
}

const parse = (output: string): Record<string, any> => JSON.parse(output) as Record<string, any>;
/** The tool's answer inside what Hermes gave the model. */
const answerIn = (output: string): Record<string, any> => parse(output).structuredContent ?? JSON.parse(parse(output).result);

/** Starts gsm8k and stops it: where its record landed. */
async function startAndStop(hermes: HermesServer): Promise<string> {
  assert.equal(answerIn(await hermes.call(tool('rl_select_environment'), { name: 'gsm8k' })).environment, 'gsm8k');
  const started = answerIn(await hermes.call(tool('rl_start_training')));
  assert.ok(started.run_id, JSON.stringify(started));
  answerIn(await hermes.call(tool('rl_stop_training'), { run_id: started.run_id }));
  return started.run_id as string;
}

test('runs land in the Hermes home: HERMES_HOME set, unset, and a profile (hermes -p work)', async (t) => {
  const homes: Array<[string, (s: Setup) => string, Record<string, string>]> = [
    ['set', (s) => join(s.home, 'elsewhere'), {}],
    ['unset', (s) => join(s.home, '.hermes'), {}],
    ['a profile', (s) => join(s.home, '.hermes', 'profiles', 'work'), {}],
  ];
  for (const [how, expected] of homes) {
    const s = await setUp(t);
    if (how === 'set') s.hermesEnv.HERMES_HOME = expected(s);
    if (how === 'a profile') s.hermesEnv = withProfile(s.hermesEnv, 'work');
    const hermes = await connect(t, s);
    const id = await startAndStop(hermes);
    assert.ok(existsSync(join(expected(s), 'rl_training', 'runs', id, 'run.json')), `HERMES_HOME ${how}: the run is in ${expected(s)}/rl_training`);
    assert.ok(!existsSync(join(s.home, '${HERMES_HOME}')) && !existsSync(join(REPO_ROOT, '${HERMES_HOME}')), 'no folder named after the placeholder');
    await hermes.close();
  }
});

test("a model's fixable mistakes never trip Hermes's breaker: four refused starts, then rl_get_current_config, all reach the server", async (t) => {
  // TINKER_API_KEY unset where Hermes runs: the snippet's ${TINKER_API_KEY} reaches the server as that text.
  const s = await setUp(t, { TINKER_API_KEY: undefined });
  const hermes = await connect(t, s);
  answerIn(await hermes.call(tool('rl_select_environment'), { name: 'gsm8k' }));
  const refusals = [
    await hermes.call(tool('rl_start_training')),
    await hermes.call(tool('rl_start_training'), { config: { no_such_field: 1 } }),
    await hermes.call(tool('rl_start_training'), { config: { total_steps: 10 } }),
    await hermes.call(tool('rl_start_training'), { config: { group_size: 'many' } }),
  ];
  const config = await hermes.call(tool('rl_get_current_config'));
  const last5 = hermes.calls.slice(-5);
  assert.deepEqual(last5.map((c) => c.reachedServer), [true, true, true, true, true], last5.map((c) => c.output).join('\n'));
  for (const [i, output] of refusals.entries()) {
    assert.ok(!('error' in parse(output)), `refusal ${i + 1} is not a failure to Hermes: ${output}`);
    assert.match(answerIn(output).error, /./, `refusal ${i + 1} reaches the model with its reason: ${output}`);
  }
  assert.match(answerIn(refusals[0]!).error, /TINKER_API_KEY/);
  assert.match(answerIn(refusals[1]!).error, /no_such_field/);
  assert.match(answerIn(refusals[2]!).error, /total_steps/);
  assert.match(answerIn(refusals[3]!).error, /group_size/);
  assert.equal(answerIn(config).environment, 'gsm8k');
});

test('a real failure still reaches Hermes as one', async (t) => {
  const s = await setUp(t);
  const hermes = await connect(t, s);
  // A tool the server does not have: what Hermes sends when its list is stale.
  (hermes as unknown as { originals: Map<string, string> }).originals.set(tool('rl_gone'), 'rl_gone');
  hermes.tools.push({ name: tool('rl_gone'), description: '', parameters: {} });
  assert.match(parse(await hermes.call(tool('rl_gone'))).error, /Unknown tool/);
});

/** The 17 calls of a session: discover, configure, start, follow, read, stop. */
async function workflow(hermes: HermesServer): Promise<void> {
  const call = async (name: string, args: Record<string, unknown> = {}): Promise<Record<string, any>> => answerIn(await hermes.call(tool(name), args));
  await call('rl_doctor');
  await call('rl_list_environments');
  await call('rl_select_environment', { name: 'gsm8k' });
  await call('rl_get_current_config');
  await call('rl_edit_config', { field: 'group_size', value: 4 });
  await call('rl_get_current_config');
  await call('rl_estimate_cost');
  const { run_id } = await call('rl_start_training');
  assert.ok(run_id);
  await call('rl_wait_for_run', { run_id, until: 'running', timeout_seconds: 50 });
  await call('rl_check_status', { run_id });
  await call('rl_list_runs');
  await call('rl_read_log', { run_id });
  await call('rl_wait_for_run', { run_id, until: 'ended', timeout_seconds: 50 });
  await call('rl_get_results', { run_id });
  await call('rl_check_status', { run_id });
  await call('rl_list_runs');
  await call('rl_read_log', { run_id });
}

test('each answer reaches a Hermes model once: a 17-call workflow costs at most 1.1x the answers', async (t) => {
  const s = await setUp(t);
  const hermes = await connect(t, s);
  await workflow(hermes);
  assert.equal(hermes.calls.length, 17);
  assert.ok(hermes.calls.every((c) => c.reachedServer && c.answerJson !== undefined), 'every call answered');
  const answers = hermes.calls.reduce((sum, c) => sum + c.answerJson!.length, 0);
  const ratio = hermes.charactersToModel / answers;
  t.diagnostic(`${hermes.charactersToModel} characters reached the model for ${answers} of answers (${ratio.toFixed(3)}x)`);
  assert.ok(ratio <= 1.1, `${ratio.toFixed(3)}x: ${hermes.charactersToModel} characters for ${answers}`);
  for (const c of hermes.calls) assert.ok(isDeepStrictEqual(parse(c.output).structuredContent, JSON.parse(c.answerJson!)), `${c.tool}: the whole answer reached the model`);
  // Hermes keeps the instructions from the model: the descriptions carry the workflow they give.
  const descriptions = new Map(hermes.tools.map((d) => [d.name, d.description]));
  const leadsTo = (next: string): boolean => [...descriptions].some(([name, text]) => name !== tool(next) && text.includes(next));
  for (const step of SERVER_INSTRUCTIONS.split('\n')[1]!.match(/rl_\w+/g)!.slice(1)) assert.ok(leadsTo(step), `a description leads to ${step}`);
  assert.match(descriptions.get(tool('rl_list_environments'))!, /Call it first/);
  assert.match(descriptions.get(tool('rl_doctor'))!, /when something does not work/);
  assert.match(descriptions.get(tool('rl_select_environment'))!, /RL_HOME/);
  assert.match(descriptions.get(tool('rl_start_training'))!, /sweep is one call per value/);
});

test('every input schema, converted as Hermes converts it, means what ours means', async (t) => {
  const s = await setUp(t);
  const hermes = await connect(t, s);
  const listed = await (hermes as unknown as { client: { listTools(): Promise<{ tools: Array<{ name: string; inputSchema: unknown }> }> } }).client.listTools();
  for (const ours of listed.tools) {
    const converted = convertInputSchema(ours.inputSchema);
    // Hermes adds `properties: {}` to objects without them: no change of meaning.
    const added = (node: unknown, original: unknown): unknown => {
      if (Array.isArray(node)) return node.map((n, i) => added(n, (original as unknown[] | undefined)?.[i]));
      if (typeof node !== 'object' || node === null) return node;
      const o = original as Record<string, unknown> | undefined;
      return Object.fromEntries(
        Object.entries(node)
          .filter(([k, v]) => !(k === 'properties' && o !== undefined && !('properties' in o) && typeof v === 'object' && v !== null && Object.keys(v).length === 0))
          .map(([k, v]) => [k, added(v, o?.[k])]),
      );
    };
    assert.deepEqual(added(converted, ours.inputSchema), ours.inputSchema, `${ours.name}: the converted schema means what ours means`);
  }
});

test('a number in the env block keeps the server from starting; the reason is only in $HERMES_HOME/logs/mcp-stderr.log', async (t) => {
  const s = await setUp(t, {}, { RL_STATUS_MIN_INTERVAL_SECONDS: 0 });
  const hermes = await HermesServer.connect(NAME, s.entry, s.hermesEnv);
  after(() => hermes.close());
  assert.notEqual(hermes.startFailure, undefined);
  assert.deepEqual(hermes.tools, []);
  assert.match(readFileSync(join(s.home, '.hermes', 'logs', 'mcp-stderr.log'), 'utf8'), /env\.RL_STATUS_MIN_INTERVAL_SECONDS\s+Input should be a valid string/);
  // The published snippet has only strings: it starts (the tests above).
  for (const value of Object.values(snippetEntry().env ?? {})) assert.equal(typeof value, 'string');
});

test('rl_doctor does not call W&B with the placeholder key it flags', async (t) => {
  const wandb = await FakeWandb.start({ apiKey: 'wandb-real' });
  after(() => wandb.close());
  // WANDB_API_KEY unset where Hermes runs: ${WANDB_API_KEY} reaches the server as that text.
  const s = await setUp(t, { WANDB_API_KEY: undefined }, { WANDB_BASE_URL: wandb.url, RL_MCP_CONFIG: undefined });
  const hermes = await connect(t, s);
  const doctor = answerIn(await hermes.call(tool('rl_doctor')));
  assert.match(JSON.stringify(doctor), /WANDB_API_KEY/);
  await waitUntil('the doctor answered', () => true);
  assert.equal(wandb.requests.length, 0, 'W&B was not asked');
});
