/**
 * The tool layer itself, through the SDK client: bad arguments answer isError with JSON
 * `{error, field, expected}` like every other error, the tool list is built once and portable,
 * and rl_read_log reads logs bounded, paged and redacted.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import { argumentError, describeSchema } from '../../src/tools/argumentErrors.js';
import { defineTool } from '../../src/tools/define.js';
import { toolJsonSchema } from '../../src/tools/jsonSchema.js';
import { listedTool } from '../../src/tools/catalog.js';
import { rlCheckpoints } from '../../src/tools/rl_checkpoints.js';
import { tailLines } from '../../src/core/files/logTail.js';
import { connectInMemory } from '../helpers/client.js';
import { runRecord, writeRunDir } from '../helpers/registry.js';
import { TINKER_KEY } from '../helpers/runs.js';
import { tempDir } from '../helpers/tmp.js';

test('argument errors name the field and what it accepts (table)', () => {
  const input = z
    .object({
      run_id: z.string().regex(/^[0-9a-f]{8}$/, 'a run_id is 8 hex characters'),
      samples: z.number().int().min(1).max(500).default(10),
      until: z.enum(['running', 'step', 'ended']).optional(),
      models: z.array(z.string().max(8)).min(1).max(8).optional(),
      config: z.record(z.string().min(1), z.union([z.string(), z.number()])).optional(),
      note: z.string().nullable().optional(),
    })
    .strict();
  const schema = toolJsonSchema(input, 'input');
  const cases: Array<[Record<string, unknown>, string, string, RegExp]> = [
    [{}, 'run_id', 'string matching /^[0-9a-f]{8}$/', /'run_id': it is required/],
    [{ run_id: 5 }, 'run_id', 'string matching /^[0-9a-f]{8}$/', /expected string, received number/],
    [{ run_id: 'zz' }, 'run_id', 'string matching /^[0-9a-f]{8}$/', /a run_id is 8 hex characters/],
    [{ run_id: 'deadbeef', samples: 501 }, 'samples', 'integer between 1 and 500', /'samples'/],
    [{ run_id: 'deadbeef', samples: 1.5 }, 'samples', 'integer between 1 and 500', /expected int/],
    [{ run_id: 'deadbeef', until: 'soon' }, 'until', 'one of: running, step, ended', /'until'/],
    [{ run_id: 'deadbeef', models: [] }, 'models', 'array of 1 to 8 items of string of at most 8 characters', /'models'/],
    [{ run_id: 'deadbeef', models: ['waytoolongname'] }, 'models[0]', 'string of at most 8 characters', /'models\[0\]'/],
    [{ run_id: 'deadbeef', config: { a: true } }, 'config.a', 'string or number', /not string or number/],
    [{ run_id: 'deadbeef', config: { '': 1 } }, 'config.', 'a name that is a string of at least 1 characters', /the name is not/],
    [{ run_id: 'deadbeef', note: 3 }, 'note', 'string or null', /'note'/],
    [{ run_id: 'deadbeef', bogus: 1 }, 'bogus', 'one of the accepted arguments: run_id, samples, until, models, config, note', /Unknown argument 'bogus'/],
  ];
  for (const [args, field, expected, error] of cases) {
    const parsed = input.safeParse(args);
    assert.equal(parsed.success, false, JSON.stringify(args));
    const answer = argumentError(schema, parsed.error!.issues, args);
    assert.deepEqual([answer.field, answer.expected], [field, expected], JSON.stringify(args));
    assert.match(answer.error, error, JSON.stringify(args));
  }
  assert.equal(describeSchema({ type: 'number', minimum: 0 }), 'number of at least 0');
  assert.equal(describeSchema({ type: 'boolean' }), 'true or false');
});

test("a refusal names every problem: rl_checkpoints({steps: []}) names the missing run_id and action and the empty steps", () => {
  const { input } = rlCheckpoints;
  const parsed = input.safeParse({ steps: [] });
  assert.equal(parsed.success, false);
  const answer = argumentError(toolJsonSchema(input, 'input'), parsed.error!.issues, { steps: [] });
  assert.deepEqual(answer.problems?.map((p) => p.field), ['run_id', 'action', 'steps']);
  assert.match(answer.error, /^3 problems with the arguments: Invalid argument 'run_id': it is required\. Invalid argument 'action': it is required\. Invalid argument 'steps': it is empty; give at least 1 item or leave it out\.$/);
  assert.equal(answer.problems![2]!.expected, 'array of 1 to 500 items of integer of at least 0');
  assert.ok(input.safeParse({ run_id: 'deadbeef', action: 'delete', keep: { steps: [] } }).success, 'keep.steps may be empty: it keeps nothing more');
});

test('an output schema spells two levels of fields; deeper ones keep their type, values and description; inputs are whole', () => {
  const deep = z.object({ c: z.object({ d: z.number() }).describe('third level'), kind: z.enum(['x', 'y']) });
  const schema = z.object({ a: z.object({ b: deep, list: z.array(deep), maybe: deep.nullable() }) });
  const out = toolJsonSchema(schema, 'output') as any;
  const a = out.properties.a;
  assert.deepEqual(Object.keys(a.properties), ['b', 'list', 'maybe']);
  assert.deepEqual(a.properties.b, { type: 'object' });
  assert.deepEqual(a.properties.list, { type: 'array' });
  assert.deepEqual(a.properties.maybe, { anyOf: [{ type: 'object' }, { type: 'null' }] });
  assert.deepEqual(a.required, ['b', 'list', 'maybe']);
  const flat = toolJsonSchema(z.object({ a: z.object({ kind: z.enum(['x', 'y']).describe('k'), c: z.object({ d: z.number() }).describe('third level') }) }), 'output') as any;
  assert.deepEqual(flat.properties.a.properties.kind, { type: 'string', enum: ['x', 'y'], description: 'k' });
  assert.deepEqual(flat.properties.a.properties.c, { type: 'object', description: 'third level' });
  const input = toolJsonSchema(schema, 'input') as any;
  assert.deepEqual(input.properties.a.properties.b.properties.c.properties.d, { type: 'number' });
});

test('a listed schema is portable: no type arrays, no bare {} schemas, no safe-integer noise; _meta passes through', () => {
  const tool = defineTool({
    name: 'probe',
    title: 'Probe',
    description: 'd',
    input: z.object({ n: z.number().int().nullable(), any: z.array(z.unknown()) }).strict(),
    output: z.object({ free: z.record(z.string(), z.unknown()), maybe: z.string().nullable() }),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    ui: { resourceUri: 'ui://probe' },
    handler: () => ({ free: {}, maybe: null }),
  });
  const listed = listedTool(tool);
  assert.deepEqual(listed.inputSchema, {
    type: 'object',
    properties: { n: { anyOf: [{ type: 'integer' }, { type: 'null' }] }, any: { type: 'array' } },
    required: ['n', 'any'],
    additionalProperties: false,
  });
  assert.deepEqual(listed.outputSchema, {
    type: 'object',
    properties: { free: { type: 'object', additionalProperties: true }, maybe: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
    required: ['free', 'maybe'],
  });
  assert.deepEqual(listed._meta, { ui: { resourceUri: 'ui://probe' }, 'ui/resourceUri': 'ui://probe' });
});

describe('through the SDK client', async () => {
  const home = join(tempDir('rlmcp-calls-'), 'rl_training');
  const h = await connectInMemory({ RL_HOME: home, TINKER_API_KEY: TINKER_KEY });

  test('bad arguments answer isError {error, field, expected}; the server goes on answering', async () => {
    const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
      ['rl_get_results', { run_id: 'deadbeef', samples: 501 }, 'samples', /^integer between 1 and 500$/],
      ['rl_get_results', { run_id: 'deadbeef', samples: 'ten' }, 'samples', /^integer between 1 and 500$/],
      ['rl_wait_for_run', { run_id: 'deadbeef', until: 'soon' }, 'until', /^one of: running, step, ended$/],
      ['rl_list_runs', { limit: 5, bogus: true }, 'bogus', /accepted arguments: limit, cursor, status, environment/],
      ['rl_check_status', { run_id: 'NOT-AN-ID' }, 'run_id', /matching/],
      ['rl_start_training', { config: Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`f${i}`, 1])) }, '(arguments)', /at most 1000 elements/],
      ['rl_no_such_tool', {}, 'name', /rl_list_environments/],
    ];
    for (const [tool, args, field, expected] of cases) {
      const answer = await h.call(tool, args);
      assert.equal(answer.isError, true, `${tool} ${JSON.stringify(args).slice(0, 80)}`);
      assert.equal(typeof answer.json.error, 'string', JSON.stringify(answer.json));
      assert.equal(answer.json.field, field, JSON.stringify(answer.json));
      assert.match(answer.json.expected, expected, JSON.stringify(answer.json));
      const next = await h.call('rl_list_runs', {});
      assert.equal(next.isError, false, 'the next call is answered');
    }
  });

  test('an argument the call does not read is refused, naming the one it reads; a refusal names every problem', async () => {
    // export reads `step`: `steps` (set_ttl / delete) would have been ignored, exporting the latest checkpoint.
    const exported = await h.call('rl_checkpoints', { run_id: 'deadbeef', action: 'export', steps: [0] });
    assert.equal(exported.isError, true);
    assert.equal(exported.json.field, 'steps', JSON.stringify(exported.json));
    assert.match(exported.json.error, /Argument 'steps' does not apply to action 'export', which reads step, publish/);
    // Named by id, a job is only looked at: the arguments that would start one are refused, not ignored.
    const named = await h.call('rl_evaluate', { eval_id: 'deadbeef', run_id: 'deadbeef', checkpoints: 'all' });
    assert.deepEqual(named.json.problems.map((p: { field: string }) => p.field), ['run_id', 'checkpoints'], JSON.stringify(named.json));
    assert.match(named.json.error, /'run_id' does not apply with eval_id/);
    const test = await h.call('rl_test_inference', { test_id: 'deadbeef', models: ['a/b'] });
    assert.equal(test.json.field, 'models', JSON.stringify(test.json));
    // A misspelled argument is also a missing one: both are said, the unknown one first.
    const resumed = await h.call('rl_resume_training', { bogus_extra_field: 1 });
    assert.equal(resumed.isError, true);
    assert.deepEqual(resumed.json.problems.map((p: { field: string }) => p.field), ['bogus_extra_field', 'run_id'], JSON.stringify(resumed.json));
    assert.match(resumed.json.error, /Unknown argument 'bogus_extra_field'.*'run_id': it is required/s);
    assert.equal(resumed.json.field, 'bogus_extra_field');
    // Both kinds of problem in one call.
    const both = await h.call('rl_checkpoints', { action: 'list', dry_run: true });
    assert.deepEqual(both.json.problems.map((p: { field: string }) => p.field), ['run_id', 'dry_run'], JSON.stringify(both.json));
    // What each action reads still goes through to the tool (here: no such run).
    for (const args of [{ action: 'export', step: 0, publish: false }, { action: 'delete', steps: [1], dry_run: true }, { action: 'list', limit: 5 }]) {
      const answer = await h.call('rl_checkpoints', { run_id: 'deadbeef', ...args });
      assert.doesNotMatch(answer.json.error ?? '', /does not apply|Unknown argument/, JSON.stringify(args));
    }
    assert.doesNotMatch((await h.call('rl_evaluate', { eval_id: 'deadbeef', wait_seconds: 0 })).json.error, /does not apply/);
  });

  test('a 1 MB argument gets a short answer: at most about 200 characters of any input are echoed', async () => {
    const big = 'K'.repeat(1 << 20);
    const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
      ['rl_estimate_cost', { config: { [big]: 1 } }, 'config.', /^a name that is a string of 1 to 128 characters$/],
      ['rl_start_training', { config: { [big]: 1 } }, 'config.', /^a name that is a string of 1 to 128 characters$/],
      ['rl_list_runs', { [big]: 1 }, '', /accepted arguments: limit/],
      [big, {}, 'name', /rl_list_environments/],
    ];
    for (const [tool, args, field, expected] of cases) {
      const answer = await h.call(tool, args);
      const size = JSON.stringify(answer.raw).length;
      assert.equal(answer.isError, true);
      assert.ok(size < 3000, `${tool.slice(0, 20)}: ${size} characters`);
      assert.ok(answer.json.field.startsWith(field) && answer.json.field.length <= 250, answer.json.field.slice(0, 300));
      assert.match(answer.json.expected, expected);
      assert.match(answer.json.error, /1048576 characters/, 'says how long the echoed input was');
    }
  });

  test('`arguments` that is not an object is invalid params (-32602) in one sentence; the server goes on answering', async () => {
    for (const args of ['a string', 5, [1, 2], null, true]) {
      const refused = await h.client.request({ method: 'tools/call', params: { name: 'rl_list_runs', arguments: args } } as never).then(
        () => assert.fail(`arguments ${JSON.stringify(args)} was accepted`),
        (err: unknown) => err,
      );
      assert.ok(refused instanceof ProtocolError, String(refused));
      assert.equal(refused.code, ProtocolErrorCode.InvalidParams, refused.message);
      // The v2 client's error message is the server's sentence as sent (v1's added "MCP error -32602: ").
      assert.match(refused.message, /^The arguments of a tools\/call must be a JSON object of argument names to values, not (a string|a number|an array|null|true or false)\.$/);
      assert.equal((await h.call('rl_list_runs', {})).isError, false);
    }
  });

  test('tools/list is the same list on every call, in ALL_TOOLS order', async () => {
    const first = await h.client.listTools();
    const second = await h.client.listTools();
    assert.deepEqual(first, second);
    assert.ok(first.tools.some((t) => t.name === 'rl_read_log'));
    for (const tool of first.tools) assert.doesNotMatch(JSON.stringify(tool), /"type":\[|"\$schema"|9007199254740991/, tool.name);
  });

  const runId = 'abcd1234';
  const run = writeRunDir(home, { runId, createdMs: Date.now() });
  const lines = Array.from({ length: 1000 }, (_, i) => `line ${i} ${i % 100 === 7 ? `ERROR key=${TINKER_KEY}` : 'ok'}`);
  lines[500] = `line 500 ${'z'.repeat(5000)}`;
  writeFileSync(run.logs.trainer, lines.join('\n') + '\n');
  const size = statSync(run.logs.trainer).size;

  test('rl_read_log: the tail, pages forward from an offset, grep, redaction, long lines cut', async () => {
    const tail = await h.call('rl_read_log', { run_id: runId, lines: 3 });
    assert.equal(tail.isError, false, JSON.stringify(tail.json));
    assert.deepEqual(tail.json.lines, ['line 997 ok', 'line 998 ok', 'line 999 ok']);
    assert.deepEqual([tail.json.process, tail.json.next_offset, tail.json.size, tail.json.truncated], ['trainer', size, size, true]);
    assert.equal(tail.json.uri, `rl://runs/${runId}/logs/trainer`);

    const first = await h.call('rl_read_log', { run_id: runId, offset: 0, lines: 2 });
    assert.deepEqual(first.json.lines, ['line 0 ok', 'line 1 ok']);
    const second = await h.call('rl_read_log', { run_id: runId, offset: first.json.next_offset, lines: 2 });
    assert.deepEqual(second.json.lines, ['line 2 ok', 'line 3 ok']);
    assert.equal(second.json.first_offset, first.json.next_offset);

    const errors = await h.call('rl_read_log', { run_id: runId, grep: 'error KEY=', lines: 500 });
    assert.equal(errors.json.lines.length, 10);
    assert.ok(errors.json.lines.every((l: string) => l.includes('ERROR key=') && !l.includes(TINKER_KEY)), errors.json.lines[0]);
    assert.equal(errors.json.truncated, false);
    const probe = await h.call('rl_read_log', { run_id: runId, grep: TINKER_KEY.slice(0, 20) });
    assert.deepEqual(probe.json.lines, [], 'grep sees redacted lines only: it cannot probe for a key');

    const page = await h.call('rl_read_log', { run_id: runId, offset: 0, lines: 500 });
    assert.deepEqual([page.json.lines.length, page.json.lines[499]], [500, 'line 499 ok']);
    const long = await h.call('rl_read_log', { run_id: runId, grep: 'zzzz' });
    assert.match(long.json.lines[0], /^line 500 z+\.\.\. \[4009 more characters\]$/);
  });

  /**
   * Every 6-character piece of the key that `text` shows. The key is random hex: a 4-character
   * piece turned up in answers by chance (`eef0` in the eval id `beef0001`), one run in a few.
   */
  const keyPieces = (text: string): string[] => Array.from({ length: TINKER_KEY.length - 5 }, (_, i) => TINKER_KEY.slice(i, i + 6)).filter((piece) => text.includes(piece));

  test('rl_read_log from any offset, even one inside a key, shows no part of the key', async () => {
    const keyLine = lines.slice(0, 7).join('\n').length + 1;
    for (let offset = keyLine; offset <= keyLine + lines[7]!.length; offset++) {
      const answer = await h.call('rl_read_log', { run_id: runId, offset, lines: 1 });
      assert.equal(answer.isError, false, JSON.stringify(answer.json));
      assert.deepEqual(keyPieces(JSON.stringify(answer.raw)), [], `offset ${offset}: ${answer.json.lines[0]}`);
    }
  });

  test('a log tail starts at a whole line, and a failed run\'s tail cut inside a key shows no part of it', async () => {
    const failed = writeRunDir(home, { runId: 'abcd1235', createdMs: Date.now(), status: 'failed' });
    // tailLines reads the last 64 KiB: that window starts inside the key, in the middle of the only line.
    writeFileSync(failed.logs.trainer, `${'x'.repeat(100)}${TINKER_KEY}${'y'.repeat(64 * 1024 - 30)}\n`);
    assert.deepEqual(await tailLines(failed.logs.trainer, 20), []);
    writeFileSync(failed.logs.trainer, `${'x'.repeat(100)}${TINKER_KEY}${'y'.repeat(64 * 1024 - 30)}\nlast line\n`);
    assert.deepEqual(await tailLines(failed.logs.trainer, 20), ['last line']);
    // Whole lines, but more of them than the status tail's 4000 characters: its cut falls inside the key.
    writeFileSync(failed.logs.trainer, `${'x'.repeat(100)}${TINKER_KEY}${'y'.repeat(3960)}\nlast line\n`);
    const cut = await h.call('rl_check_status', { run_id: 'abcd1235' });
    assert.match(cut.json.log_tail, /last line/);
    assert.deepEqual(keyPieces(JSON.stringify(cut.raw)), []);
  });

  test('rl_get_rollouts cuts a long text where a key is, and shows no part of it', async () => {
    const evalDir = join(home, 'evaluations', 'beef0001');
    mkdirSync(evalDir, { recursive: true });
    // A completion is shown by its first 1200 and last 800 characters: the key straddles each cut.
    const early = `${'a'.repeat(1190)}${TINKER_KEY}${'b'.repeat(3000)}`;
    const late = `${'c'.repeat(3000)}${TINKER_KEY}${'d'.repeat(790)}`;
    const rows = [early, late].map((text, i) => JSON.stringify({ item: `q${i}`, prompt: `q${i}`, completion: text, score: i }));
    writeFileSync(join(evalDir, '1-base.rollouts.jsonl'), rows.join('\n') + '\n');
    const answer = await h.call('rl_get_rollouts', { eval_id: 'beef0001', limit: 2 });
    assert.equal(answer.isError, false, JSON.stringify(answer.json));
    assert.equal(answer.json.returned, 2);
    assert.deepEqual(keyPieces(JSON.stringify(answer.raw)), []);
  });

  test('a run directory or run.json linked out of RL_HOME is refused by every tool in the resources\' words, its content never quoted', async () => {
    const outside = tempDir('rlmcp-outside-');
    // A record that would pass for a run, and a file that is not JSON at all.
    const foreign = { ...runRecord(outside, { runId: 'abcd1237', createdMs: Date.now(), status: 'failed' }), error: 'OUTSIDE-REASON' };
    mkdirSync(join(outside, 'abcd1237'));
    writeFileSync(join(outside, 'abcd1237', 'run.json'), JSON.stringify(foreign));
    writeFileSync(join(outside, 'passwd'), 'root:x:0:0:root:/root:/bin/bash\n');
    symlinkSync(join(outside, 'abcd1237'), join(home, 'runs', 'abcd1237'));
    for (const [id, target] of [['abcd1238', join(outside, 'abcd1237', 'run.json')], ['abcd1239', join(outside, 'passwd')]] as const) {
      mkdirSync(join(home, 'runs', id));
      symlinkSync(target, join(home, 'runs', id, 'run.json'));
    }
    for (const id of ['abcd1237', 'abcd1238', 'abcd1239']) {
      const refusal = await h.client.readResource({ uri: `rl://runs/${id}` }).then(
        () => assert.fail(`rl://runs/${id} was served`),
        (err: Error) => /Refused .*/.exec(err.message)![0],
      );
      assert.match(refusal, /symlink leading outside/);
      for (const [tool, args] of [['rl_check_status', {}], ['rl_get_results', {}], ['rl_wait_for_run', { until: 'ended', timeout_seconds: 1 }], ['rl_stop_training', {}]] as const) {
        const answer = await h.call(tool, { run_id: id, ...args });
        const text = JSON.stringify(answer.raw);
        assert.ok(text.includes(JSON.stringify(refusal).slice(1, -1)), `${tool} ${id}: ${text}`);
        assert.doesNotMatch(text, /OUTSIDE-REASON|root:x/, `${tool} ${id}`);
      }
    }
    assert.deepEqual(readdirSync(join(outside, 'abcd1237')), ['run.json'], 'nothing written out of RL_HOME (no lock file)');
    // Evaluations and inference tests, by id: the same rule, the same words.
    const results = tempDir('rlmcp-outside-');
    const result = { eval_id: 'beef0002', test_id: 'feed0002', status: 'completed', error: 'OUTSIDE-REASON', message: 'OUTSIDE-REASON' };
    writeFileSync(join(results, 'result.json'), JSON.stringify(result));
    writeFileSync(join(results, '1-base.rollouts.jsonl'), JSON.stringify({ item: 'q', prompt: 'q', completion: 'OUTSIDE-REASON', score: 1 }) + '\n');
    writeFileSync(join(results, '1-base.jsonl'), JSON.stringify({ scores: [1], messages: [[{ role: 'assistant', content: 'OUTSIDE-REASON' }]] }) + '\n');
    writeFileSync(join(results, '1-base.log'), 'OUTSIDE-REASON\n');
    for (const dir of ['evaluations', 'inference_tests']) mkdirSync(join(home, dir), { recursive: true });
    symlinkSync(results, join(home, 'evaluations', 'beef0002'));
    symlinkSync(results, join(home, 'inference_tests', 'feed0002'));
    for (const [tool, args] of [
      ['rl_evaluate', { eval_id: 'beef0002', wait_seconds: 0 }],
      ['rl_get_rollouts', { eval_id: 'beef0002' }],
      ['rl_test_inference', { test_id: 'feed0002', wait_seconds: 0 }],
      ['rl_get_rollouts', { test_id: 'feed0002' }],
      ['rl_read_log', { test_id: 'feed0002' }],
    ] as const) {
      const answer = await h.call(tool, args);
      const text = JSON.stringify(answer.raw);
      assert.equal(answer.isError, true, `${tool}: ${text}`);
      assert.match(text, /Refused (evaluation|inference test) '(beef|feed)0002': its directory is a symlink leading outside/, tool);
      assert.doesNotMatch(text, /OUTSIDE-REASON/, tool);
    }
    // A run.json that is no JSON at all, in its place: damaged, and still not quoted.
    mkdirSync(join(home, 'runs', 'abcd123a'));
    writeFileSync(join(home, 'runs', 'abcd123a', 'run.json'), `root:x:0:0:root:/root:/bin/bash${'x'.repeat(1000)}\n`);
    const damaged = await h.call('rl_check_status', { run_id: 'abcd123a' });
    assert.match(damaged.json.error, /not valid JSON/);
    assert.doesNotMatch(JSON.stringify(damaged.raw), /root:x/);
  });

  test('rl_read_log: an inference test model\'s log by model id; clear refusals', async () => {
    const testDir = join(home, 'inference_tests', 'feed0001');
    mkdirSync(testDir, { recursive: true });
    writeFileSync(join(testDir, '1-qwen_qwen3-8b.log'), 'qwen says hi\n');
    writeFileSync(join(testDir, '2-test_half.log'), 'half says hi\n');
    const qwen = await h.call('rl_read_log', { test_id: 'feed0001', model: 'qwen/qwen3-8b' });
    assert.equal(qwen.isError, false, JSON.stringify(qwen.json));
    assert.deepEqual(qwen.json.lines, ['qwen says hi']);
    assert.equal(qwen.json.uri, 'rl://inference-tests/feed0001/1-qwen_qwen3-8b.log');

    const refusals: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ test_id: 'feed0001' }, 'model', /1-qwen_qwen3-8b\.log, 2-test_half\.log/],
      [{ test_id: 'feed0001', model: 'nope' }, 'model', /no log for model 'nope'/],
      [{ run_id: runId, test_id: 'feed0001' }, 'run_id', /exactly one/],
      [{}, 'run_id', /exactly one/],
      [{ run_id: runId, process: 'worker' }, 'process', /one of: api, trainer, env/],
      [{ run_id: runId, offset: size + 10 }, 'offset', /past the end/],
      [{ run_id: 'ffff0000' }, '', /not found/],
    ];
    for (const [args, field, message] of refusals) {
      const answer = await h.call('rl_read_log', args);
      assert.equal(answer.isError, true, JSON.stringify(args));
      assert.match(JSON.stringify(answer.json), message, JSON.stringify(answer.json));
      if (field) assert.equal(answer.json.field, field, JSON.stringify(answer.json));
    }
  });
});
