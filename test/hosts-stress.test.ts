/**
 * Two hosts sharing one RL_HOME (test/helpers/hosts.ts) start, stop, list and check runs at once
 * for a minute, each stopping runs of both hosts: no record is lost, no run ever has two keepers
 * (sampled in every host's process table), and once everything ended no run recorded ended has a
 * process left.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { callTool, type StdioHarness } from './helpers/client.js';
import { makeFakeInstall } from './helpers/fakeInstall.js';
import { hostsMissing, keeperHistory, keepersOf, startHost } from './helpers/hosts.js';
import { argvOf, killLeftovers, leftovers, procInfo, newHome, runServerEnv, runsTinker, waitUntil } from './helpers/runs.js';
import { isEnded, type RunRecord } from '../src/runtime/runs/seams/record.js';

const missing = hostsMissing();
const LOOP_MS = 60_000;

test('two hosts start, stop and list runs at once for a minute: no lost record, never two keepers, nothing left of an ended run', { skip: missing }, async (t) => {
  const tinker = runsTinker();
  const install = await makeFakeInstall();
  install.trainerControl({ step_seconds: 0.5 });
  const home = newHome();
  t.after(() => killLeftovers([install.root, home]));
  const env = await runServerEnv(install, home, { tinker, lockedEnv: { total_steps: 500 }, env: { RL_MAX_CONCURRENT_RUNS: '2', RL_STOP_GRACE_SECONDS: '2' } });
  const hosts = [await startHost(t, 'host-a'), await startHost(t, 'host-b')];
  const servers = await Promise.all(hosts.map((h) => h.connect(env)));
  const started: string[] = [];
  const read = (id: string): RunRecord => JSON.parse(readFileSync(join(home, 'runs', id, 'run.json'), 'utf8')) as RunRecord;
  const end = Date.now() + LOOP_MS;
  let doubleKept = '';
  const sampler = setInterval(() => {
    for (const id of started) {
      const keepers = keepersOf(id);
      if (keepers.length > 1) doubleKept ||= `${id}: ${keepers.map((pid) => `${pid} (${argvOf(pid)}, parent ${procInfo(pid)?.ppid})`).join(', ')}; ${JSON.stringify(keeperHistory(home, id))}`;
    }
  }, 250);
  t.after(() => clearInterval(sampler));

  const loop = async (server: StdioHarness, turn: number): Promise<void> => {
    for (let i = turn; Date.now() < end; i++) {
      // A user's pace, not a benchmark's: the suite runs other files beside this one.
      await new Promise((resolve) => setTimeout(resolve, 200));
      if (i % 3 === 0) {
        const answer = await callTool(server.client, 'rl_start_training', { environment: 'gsm8k' });
        // Refused at the limit of two active runs on its host: a refusal, never a lost run.
        if (!answer.isError) started.push(answer.json.run_id as string);
        else assert.match(answer.json.error, /RL_MAX_CONCURRENT_RUNS/, JSON.stringify(answer.json));
      } else if (i % 3 === 1) {
        const listing = await callTool(server.client, 'rl_list_runs', { status: 'active' });
        const active = listing.json.runs as { run_id: string }[];
        const victim = active[i % Math.max(active.length, 1)];
        if (victim !== undefined) assert.equal((await callTool(server.client, 'rl_stop_training', { run_id: victim.run_id })).isError, false);
      } else if (started.length > 0) {
        const status = await callTool(server.client, 'rl_check_status', { run_id: started[i % started.length]! });
        assert.equal(status.isError, false, JSON.stringify(status.json));
      }
    }
  };
  await Promise.all(servers.map((server, turn) => loop(server, turn)));
  assert.ok(started.length >= 4, `runs started: ${started.length}`);
  for (const id of started) if (!isEnded(read(id).status)) await callTool(servers[0]!.client, 'rl_stop_training', { run_id: id });
  await waitUntil('every run ended and its keeper gone', () => started.every((id) => isEnded(read(id).status) && keepersOf(id).length === 0), 60);
  clearInterval(sampler);
  assert.equal(doubleKept, '', 'never two keepers of one run');
  for (const id of started) {
    assert.ok(isEnded(read(id).status), `run ${id} has its record`);
    assert.deepEqual(leftovers([join(home, 'runs', id)]), [], `nothing of run ${id} is left`);
  }
  const listed: string[] = [];
  for (let cursor: string | undefined, first = true; first || cursor !== undefined; first = false) {
    const page = (await callTool(servers[1]!.client, 'rl_list_runs', { limit: 200, ...(cursor ? { cursor } : {}) })).json;
    listed.push(...page.runs.map((r: { run_id: string }) => r.run_id));
    cursor = page.next_cursor;
  }
  listed.sort();
  assert.deepEqual(listed, [...started].sort(), 'every run listed, none lost');
  t.diagnostic(`${started.length} runs started by two hosts in ${LOOP_MS / 1000} s`);
});
