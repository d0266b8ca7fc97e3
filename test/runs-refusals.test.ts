/** rl_start_training refusals: each names the cause and the fix, and leaves no trace. */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { dirname, join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { runServer, type RunServer, startRun, waitForRun } from './helpers/runs.js';
import { makeFakeInstall } from './helpers/fakeInstall.js';

function runDirs(h: RunServer): string[] {
  const root = join(h.home, 'runs');
  return existsSync(root) ? readdirSync(root).filter((n) => !n.startsWith('.')) : [];
}

async function refused(h: RunServer, pattern: RegExp): Promise<Record<string, unknown>> {
  const answer = await h.call('rl_start_training');
  assert.equal(answer.isError, true, `expected a refusal, got ${JSON.stringify(answer.json)}`);
  assert.match(answer.json.error, pattern);
  assert.deepEqual(runDirs(h), [], 'a refused start leaves no run behind');
  return answer.json;
}

async function occupy(t: TestContext, port: number): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return server;
}

test('no environment selected', async (t) => {
  const h = await runServer(t, { select: false });
  await refused(h, /^No environment selected\. Use rl_select_environment\(name\) first\.$/);
});

test('missing TINKER_API_KEY, or WANDB_API_KEY while use_wandb is on', async (t) => {
  const noTinker = await runServer(t, { env: { TINKER_API_KEY: undefined } });
  const a = await refused(noTinker, /^TINKER_API_KEY is not set: .* Add it to the MCP server environment/);
  assert.equal(a.missing, 'TINKER_API_KEY');
  const noWandb = await runServer(t, { lockedEnv: { use_wandb: true } });
  const b = await refused(noWandb, /^WANDB_API_KEY is not set while use_wandb is true/);
  assert.equal(b.missing, 'WANDB_API_KEY');
});

test('a Python older than 3.11, reporting the version found', async (t) => {
  const install = await makeFakeInstall();
  const old = join(dirname(install.python), 'python3.10');
  writeFileSync(old, `#!/bin/sh\ncase "$*" in *version_info*) echo 3.10.12; exit 0;; esac\nexec "${install.python}" "$@"\n`);
  chmodSync(old, 0o755);
  const h = await runServer(t, { install, env: { RL_PYTHON: old } });
  const answer = await refused(h, /is Python 3\.10\.12; tinker-atropos and atroposlib need Python 3\.11 or newer\. Point RL_PYTHON at/);
  assert.equal(answer.python_version, '3.10.12');
});

test('no launch_training.py, or no run-api: says where it looked', async (t) => {
  const noTrainer = await makeFakeInstall();
  rmSync(join(noTrainer.root, 'launch_training.py'));
  const a = await runServer(t, { install: noTrainer });
  const first = await refused(a, /^No launch_training\.py in .*Set TINKER_ATROPOS_ROOT to a tinker-atropos checkout/);
  assert.deepEqual(first.searched, [join(noTrainer.root, 'launch_training.py')]);

  const noApi = await makeFakeInstall();
  rmSync(noApi.runApi);
  const b = await runServer(t, { install: noApi });
  const second = await refused(b, /^No Atropos API server \(run-api\) found: looked in .*run-api and PATH\. Install atroposlib/);
  assert.deepEqual(second.searched, [noApi.runApi, 'PATH']);
});

test('a port in use: which one, and why only one run fits on a host', async (t) => {
  const h = await runServer(t);
  await occupy(t, Number(h.env.RL_API_PORT));
  const api = await refused(h, new RegExp(`^Port ${h.env.RL_API_PORT} \\(RL_API_PORT, for the Atropos API\\) is in use`));
  assert.equal(api.setting, 'RL_API_PORT');

  const g = await runServer(t);
  await occupy(t, Number(g.env.RL_INFERENCE_PORT));
  const inference = await refused(g, new RegExp(`^Port ${g.env.RL_INFERENCE_PORT} \\(RL_INFERENCE_PORT.*hard-codes its inference port`));
  assert.equal(inference.port, Number(g.env.RL_INFERENCE_PORT));
});

test('at RL_MAX_CONCURRENT_RUNS the active runs are named, with how to free a place', async (t) => {
  const h = await runServer(t, { env: { RL_MAX_CONCURRENT_RUNS: '1' } });
  h.install.trainerControl({ hang_before_register: true });
  const id = await startRun(h);
  const second = await h.call('rl_start_training');
  assert.equal(second.isError, true);
  assert.equal(
    second.json.error,
    `1 runs are active on this host, the most RL_MAX_CONCURRENT_RUNS (1) allows: ${id} (gsm8k, starting). Wait for one to end (rl_wait_for_run), or stop one with rl_stop_training.`,
  );
  assert.deepEqual(second.json.active_runs, [id]);
  // Two concurrent starts: exactly one run.
  await h.call('rl_stop_training', { run_id: id });
  await waitForRun(h, id, 'stopped', (r) => r.status === 'stopped');
  const [x, y] = await Promise.all([h.call('rl_start_training'), h.call('rl_start_training')]);
  assert.equal([x, y].filter((a) => !a.isError).length, 1, JSON.stringify([x.json, y.json]));
  const winner = (x.isError ? y : x).json.run_id;
  assert.deepEqual((x.isError ? x : y).json.active_runs, [winner]);
  await h.call('rl_stop_training', { run_id: winner });
});

test('a config that would stall: batch_size <= 0, or not a multiple of group_size', async (t) => {
  // rl_edit_config, selection and the locked-value check all keep batch_size >= 1; the start
  // guard is the last line of defence, reached here by writing the selected config directly.
  const negative = await runServer(t);
  negative.runtime.selection.requireSelection().values.batch_size = -1;
  const a = await refused(negative, /^batch_size is -1: .*never has a batch to give, so training stalls\. Set it with rl_edit_config\('batch_size', 128\) \(tinker-atropos' default\)\.$/);
  assert.equal(a.suggested, 128);

  const h = await runServer(t);
  const edit = await h.call('rl_edit_config', { field: 'batch_size', value: 100 });
  assert.equal(edit.isError, false, JSON.stringify(edit.json));
  const b = await refused(h, /^batch_size 100 is not a multiple of group_size 16: the Atropos API builds each batch from whole groups/);
  assert.equal(b.suggested, 96);
});

/** An environment that samples with plain chat completions: upstream's trainer fails it at step 0. */
const UNMANAGED_ENV = `"""Plain chat completions, no managed_server."""
from typing import List, Tuple
from atroposlib.envs.base import APIServerConfig, BaseEnv, BaseEnvConfig


class PlainEnv(BaseEnv):
    name = "plain_chat"

    @classmethod
    def config_init(cls) -> Tuple[BaseEnvConfig, List[APIServerConfig]]:
        return BaseEnvConfig(group_size=4, batch_size=16, use_wandb=False), [APIServerConfig(model_name="m", base_url="http://localhost:9004/v1", api_key="x")]

    async def setup(self):
        pass

    async def get_next_item(self):
        return ("2+2", "4")

    async def collect_trajectories(self, item):
        completion = await self.server.chat_completion(messages=[{"role": "user", "content": item[0]}], n=self.config.group_size)
        return None, []


if __name__ == "__main__":
    PlainEnv.cli()
`;

test('an environment without managed_server is refused before anything starts, unless the operator allows it', async (t) => {
  const install = await makeFakeInstall();
  writeFileSync(join(install.environmentsDir, 'plain_chat.py'), UNMANAGED_ENV);
  const h = await runServer(t, { install, select: false });
  const selected = await h.call('rl_select_environment', { name: 'plain_chat' });
  assert.equal(selected.isError, false, JSON.stringify(selected.json));
  assert.deepEqual(selected.json.tinker_problems.map((p: { code: string }) => p.code), ['no_managed_server']);
  const refusal = await refused(h, /never samples through managed_server .* fails at step 0 .* Fix: Port its rollouts to .*managed_server.*RL_ALLOW_UNMANAGED_ENVIRONMENTS/);
  assert.deepEqual(refusal.problems, ['no_managed_server']);
  const doctor = await h.call('rl_doctor');
  const check = doctor.json.checks.find((c: { check: string }) => c.check === 'environment on Tinker');
  assert.deepEqual([doctor.json.ready, check.ok, check.fix], [false, false, refusal.error], 'the doctor flags it with the same words');

  const allowed = await runServer(t, { install, select: false, env: { RL_ALLOW_UNMANAGED_ENVIRONMENTS: '1' } });
  await allowed.call('rl_select_environment', { name: 'plain_chat' });
  const doctorAllowed = await allowed.call('rl_doctor');
  const allowedCheck = doctorAllowed.json.checks.find((c: { check: string }) => c.check === 'environment on Tinker');
  assert.deepEqual([allowedCheck.ok, allowedCheck.required], [true, false]);
  assert.match(allowedCheck.detail, /allowed by RL_ALLOW_UNMANAGED_ENVIRONMENTS/);
});

test('a checkout that was never pip install -e .-ed is refused before anything starts, with the command that fixes it', async (t) => {
  const install = await makeFakeInstall();
  // What `pip install -e .` leaves: without it only the trainer (started beside the checkout) imports tinker_atropos.
  const venvLib = join(install.root, '.venv', 'lib');
  const sitePackages = join(venvLib, readdirSync(venvLib).find((d) => d.startsWith('python'))!, 'site-packages');
  rmSync(join(sitePackages, '__editable__.tinker_atropos-0.1.0.pth'));
  writeFileSync(
    join(install.environmentsDir, 'needs_install.py'),
    readFileSync(join(install.environmentsDir, 'gsm8k_tinker.py'), 'utf8')
      .replace(/try:  # an installed checkout[\s\S]*?from _rollouts import [^\n]*\n/, 'from tinker_atropos.environments._rollouts import sample_scored_group, tinker_server_configs, with_percent_correct\n')
      .replace(/name = "gsm8k"/, 'name = "needs_install"'),
  );
  const h = await runServer(t, { install, select: false });
  assert.equal((await h.call('rl_select_environment', { name: 'needs_install' })).isError, false);
  const refusal = await refused(h, /imports tinker_atropos, which RL_PYTHON .* can only import from the checkout root.*No module named 'tinker_atropos'.*pip install -e \./);
  assert.match(String(refusal.import_error), /ModuleNotFoundError/);
  // The bundled environments fall back to their own folder and still start.
  assert.equal((await h.call('rl_select_environment', { name: 'gsm8k' })).isError, false);
  const started = await h.call('rl_start_training');
  assert.equal(started.isError, false, JSON.stringify(started.json));
  await h.call('rl_stop_training', { run_id: started.json.run_id });
});

test('a key still holding an unexpanded ${VAR} is refused at start and by the doctor, naming the likely cause', async (t) => {
  const h = await runServer(t, { env: { TINKER_API_KEY: '${TINKER_API_KEY}' } });
  const refusal = await refused(h, /^TINKER_API_KEY holds the text \$\{TINKER_API_KEY\}, not a value: the MCP client passed a variable it did not expand .*export TINKER_API_KEY in the shell/);
  assert.equal(refusal.placeholder, 'TINKER_API_KEY');
  const doctor = await h.call('rl_doctor');
  const check = doctor.json.checks.find((c: { check: string }) => c.check === 'TINKER_API_KEY');
  assert.deepEqual([doctor.json.ready, check.ok, check.fix], [false, false, refusal.error]);
});

test('a TINKER_API_KEY the Tinker SDK would refuse (no tml- prefix) is refused at start and by the doctor, with the fix', async (t) => {
  const h = await runServer(t, { env: { TINKER_API_KEY: 'sk-proj-not-a-tinker-key-0123456789' } });
  const refusal = await refused(h, /^TINKER_API_KEY does not start with 'tml-': the Tinker SDK refuses such a key .*after the run's processes started\. .*https:\/\/tinker-console\.thinkingmachines\.ai\/keys/);
  assert.equal(refusal.setting, 'TINKER_API_KEY');
  assert.ok(!JSON.stringify(refusal).includes('sk-proj-not-a-tinker-key'), 'the key is never shown');
  const doctor = await h.call('rl_doctor');
  const check = doctor.json.checks.find((c: { check: string }) => c.check === 'TINKER_API_KEY');
  assert.deepEqual([doctor.json.ready, check.ok, check.fix], [false, false, refusal.error]);
  // A Tinker token (eyJ...) is accepted as the SDK accepts it.
  const token = await runServer(t, { env: { TINKER_API_KEY: 'eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl' } });
  const doctorToken = await token.call('rl_doctor');
  assert.equal(doctorToken.json.checks.find((c: { check: string }) => c.check === 'TINKER_API_KEY').ok, true);
});
