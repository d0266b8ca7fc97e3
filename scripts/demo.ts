/**
 * `npm run demo`: the server's main job, end to end, on the bundled example environments. It
 * drives the built server over stdio as an MCP client would: list, select, configure (including
 * a refused edit of a locked field), start a training run, follow it to the end, read its results.
 * Tinker and Atropos are the simulated install the tests use (fake run-api and launch_training.py
 * printing the real log lines), so it needs no key and costs nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { stringify } from 'yaml';
import { makeFakeInstall } from '../test/helpers/fakeInstall.js';
import { DIST_ENTRY, freePort } from '../test/helpers/tmp.js';

const TERMINAL = new Set(['completed', 'failed', 'stopped', 'unknown']);

function say(text: string): void {
  process.stdout.write(`${text}\n`);
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'rl-training-mcp-demo-'));
  const client = new Client({ name: 'rl-training-mcp-demo', version: '1.0.0' });
  try {
    const install = await makeFakeInstall({ dir: work });
    install.trainerControl({ step_seconds: 0.4 });
    const settingsFile = join(work, 'rl.yaml');
    // A short run without W&B: the operator's locked values, as RL_MCP_CONFIG sets them.
    writeFileSync(settingsFile, stringify({ locked: { env: { total_steps: 5, use_wandb: false } } }));

    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? work,
      TINKER_ATROPOS_ROOT: install.root,
      RL_HOME: join(work, 'rl_training'),
      RL_MCP_CONFIG: settingsFile,
      RL_API_PORT: String(await freePort()),
      RL_INFERENCE_PORT: String(await freePort()),
      RL_STATUS_MIN_INTERVAL_SECONDS: '0',
      TINKER_API_KEY: 'demo-key-not-a-real-one',
      LOG_LEVEL: 'warn',
    };
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [DIST_ENTRY], env, stderr: 'ignore' }));
    const call = async (name: string, args: Record<string, unknown> = {}): Promise<{ isError: boolean; json: any }> => {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      const text = result.content.find((c) => c.type === 'text');
      return { isError: result.isError === true, json: JSON.parse(text && text.type === 'text' ? text.text : '{}') };
    };

    say(`rl-training-mcp demo: a simulated tinker-atropos install in ${install.root}\n`);
    const listing = await call('rl_list_environments');
    say(`> rl_list_environments: ${listing.json.count} environments: ${listing.json.environments.map((e: { name: string }) => e.name).join(', ')}`);

    const selected = await call('rl_select_environment', { name: 'gsm8k' });
    say(`> rl_select_environment gsm8k: ${selected.json.message}`);

    const config = await call('rl_get_current_config');
    const show = (f: { name: string; current_value: unknown }) => `${f.name}=${JSON.stringify(f.current_value)}`;
    say(`> rl_get_current_config: ${config.json.configurable_fields.filter((f: { name: string }) => ['group_size', 'batch_size', 'wandb_name'].includes(f.name)).map(show).join(', ')}; locked: ${config.json.locked_fields.map(show).slice(0, 3).join(', ')}, ...`);

    const edit = await call('rl_edit_config', { field: 'group_size', value: 8 });
    say(`> rl_edit_config group_size 8: ${edit.json.message}`);
    const refused = await call('rl_edit_config', { field: 'lora_rank', value: 64 });
    say(`> rl_edit_config lora_rank 64: refused: ${refused.json.error} (locked_value ${refused.json.locked_value})`);
    const typo = await call('rl_edit_config', { field: 'group_size', value: 'sixteen' });
    say(`> rl_edit_config group_size "sixteen": refused: ${typo.json.error} (expected ${typo.json.expected})`);

    const started = await call('rl_start_training');
    if (started.isError) throw new Error(`rl_start_training refused: ${started.json.error}`);
    const runId = started.json.run_id as string;
    say(`> rl_start_training: run ${runId} ${started.json.status}; config ${started.json.config_path}`);

    let last = '';
    let status: any;
    for (;;) {
      status = (await call('rl_check_status', { run_id: runId })).json;
      const progress = status.progress ? ` ${status.progress.step}/${status.progress.total_steps} steps done` : '';
      const health = status.health ? `, health ${status.health.verdict}` : '';
      const line = `  status ${status.status} (${status.phase})${health}${progress}${status.weights ? `, weights ${status.weights}` : ''}`;
      if (line !== last) say(line);
      last = line;
      if (TERMINAL.has(status.status)) break;
      await sleep(250);
    }

    const results = await call('rl_get_results', { run_id: runId });
    say(`> rl_get_results: ${results.json.outcome.status}: ${results.json.outcome.reason}`);
    say(`  weights: latest ${results.json.weights.latest} (${results.json.weights.checkpoint_count} checkpoints)`);
    if (results.json.wandb_error) say(`  W&B: ${results.json.wandb_error}`);
    const runs = await call('rl_list_runs');
    say(`> rl_list_runs: ${runs.json.runs.map((r: { run_id: string; status: string }) => `${r.run_id} ${r.status}`).join(', ')}`);
    say(`\nWith a real tinker-atropos checkout and keys, the same calls train for real: see README "Connecting a client".`);
    if (status.status !== 'completed') process.exitCode = 1;
  } finally {
    await client.close();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
