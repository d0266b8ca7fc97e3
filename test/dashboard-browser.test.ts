/**
 * The dashboard view drawn by a real browser (Debian's Chromium, headless, driven by
 * playwright-core; its own browser download is never used). The host page is ext-apps' own host
 * side: `AppBridge` from @modelcontextprotocol/ext-apps (bundled for the page here), which checks
 * every message of the view against the MCP Apps schemas, so the view's hand-written bridge is
 * proved against the reference implementation. The view runs in a sandboxed iframe under the
 * default content security policy; the host forwards its tools/call to the real server through
 * the SDK client. A fake run with fake W&B history: the reward curve has one point per history
 * row, the process states and the health verdict are shown, the host's themes apply, a torn-down
 * view stops asking, and the view's poll stops once the run has ended. Screenshots go to
 * test-artifacts/.
 */
import { money } from '../src/runtime/cost/money.js';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { build } from 'esbuild';
import { chromium, type Frame, type Page } from 'playwright-core';
import { DASHBOARD_POLL_SECONDS } from '../src/runtime/wiring/dashboard.js';
import { DASHBOARD_HTML } from '../src/core/files/paths.js';
import { ENTITY, KEY as WANDB_KEY } from './fakes/wandbFixtures.js';
import { FakeWandb } from './fakes/wandbServer.js';
import { APPS_CLIENT_CAPABILITIES } from './helpers/client.js';
import { runServer, startRun, waitUntil } from './helpers/runs.js';
import { REPO_ROOT, tempDir } from './helpers/tmp.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = join(REPO_ROOT, 'test-artifacts');
/** What a host must apply when the resource declares no `_meta.ui.csp`. */
const DEFAULT_CSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; connect-src 'none';";

/**
 * The host side, for the browser: one AppBridge per iframe (no MCP client in the page: its
 * tools/call go to `hostCallTool`, which the test provides), connected before the view loads.
 */
const HOST_SCRIPT = `import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';
window.hostViews = {};
window.connectView = async (viewId, html, toolInput, toolResult) => {
  const frame = document.getElementById(viewId);
  const hostContext = { theme: 'light', displayMode: 'inline', containerDimensions: { maxHeight: 6000 } };
  const bridge = new AppBridge(null, { name: 'test-host', version: '0.0.0' }, { serverTools: {}, openLinks: {} }, { hostContext });
  bridge.oncalltool = (params) => window.hostCallTool(viewId, params.name, params.arguments ?? {});
  bridge.onsizechange = ({ height }) => { if (height !== undefined) frame.style.height = height + 'px'; };
  bridge.oninitialized = () => { void bridge.sendToolInput({ arguments: toolInput }); void bridge.sendToolResult(toolResult); };
  window.hostViews[viewId] = bridge;
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.srcdoc = html;
};`;

async function hostPage(): Promise<string> {
  const bundled = await build({ stdin: { contents: HOST_SCRIPT, resolveDir: REPO_ROOT, loader: 'js' }, bundle: true, format: 'esm', platform: 'browser', target: 'es2022', minify: true, write: false, logLevel: 'error' });
  const script = bundled.outputFiles[0]!.text.replace(/<\/script/gi, '<\\/script');
  return `<!doctype html><html><head><style>body{margin:0;background:#fff}iframe{border:0;width:100%;display:block;height:200px}</style></head>
<body><iframe id="a" sandbox="allow-scripts"></iframe><iframe id="b" sandbox="allow-scripts"></iframe><script type="module">${script}</script></body></html>`;
}

interface SnapshotCall {
  view: string;
  active: boolean;
}

/** Evaluates `expression` in the view (a string: the tests are compiled without the DOM's types). */
function inView<T>(frame: Frame, expression: string): Promise<T> {
  return frame.evaluate(expression) as Promise<T>;
}

function text(frame: Frame, selector: string): Promise<string | null> {
  return inView(frame, `document.querySelector(${JSON.stringify(selector)})?.textContent ?? null`);
}

const polling = (frame: Frame): Promise<string> => inView(frame, 'document.body.dataset.polling');

async function viewFrame(page: Page, id: string): Promise<Frame> {
  return (await (await page.$(`#${id}`))!.contentFrame())!;
}

test('the dashboard in Chromium: W&B curves, processes, health, themes; its poll stops after teardown and after the run ends', { timeout: 120_000 }, async (t) => {
  assert.ok(existsSync(CHROMIUM), `no browser at ${CHROMIUM}: install Debian's chromium (apt-get install -y chromium) or set CHROMIUM_PATH`);
  const host = await hostPage();
  const wandb = await FakeWandb.start({ apiKey: WANDB_KEY });
  t.after(() => wandb.close());
  const h = await runServer(t, {
    capabilities: APPS_CLIENT_CAPABILITIES,
    lockedEnv: { use_wandb: true, total_steps: 5 },
    env: { WANDB_API_KEY: WANDB_KEY, WANDB_BASE_URL: wandb.url },
  });
  // Steps long enough that the views see the run active on a loaded machine (the host page's bridge checks every message).
  h.install.trainerControl({ step_seconds: 3 });
  const runId = await startRun(h);
  const run = h.runtime.runs.get(runId) as { wandb_project: string; trainer_wandb_run_name: string; wandb_name: string };
  const rewards = [0.12, 0.18, 0.31, 0.29, 0.44, 0.52, 0.61];
  wandb.addRun(ENTITY, run.wandb_project, {
    name: `t${runId}`,
    displayName: run.trainer_wandb_run_name,
    tags: ['trainer'],
    group: runId,
    history: rewards.map((reward, i) => ({ _step: i + 1, 'reward/mean': reward, 'train/loss': 1.9 - i * 0.21 })),
  });
  wandb.addRun(ENTITY, run.wandb_project, {
    name: `e${runId}`,
    displayName: `${run.wandb_name}-2026-01-01-abcdef`,
    group: runId,
    history: rewards.map((r, i) => ({ _step: i + 1, [`${run.wandb_name}_0_train/percent_correct`]: r * 0.9 })),
  });

  // What a host does first: the model's tool call, whose answer the view is given.
  const visible = new Map((await h.client.listTools()).tools.map((tool) => [tool.name, (tool._meta?.ui as { visibility?: string[] } | undefined)?.visibility ?? ['model', 'app']]));
  const toolResult = await h.client.callTool({ name: 'rl_check_status', arguments: { run_id: runId } });

  const browser = await chromium.launchPersistentContext(tempDir('rlmcp-chromium-'), {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1100, height: 900 },
  });
  t.after(() => browser.close());
  const page = await browser.newPage();
  const calls: SnapshotCall[] = [];
  await page.exposeFunction('hostCallTool', async (view: string, name: string, args: Record<string, unknown>) => {
    // A host lets a view call only the tools visible to apps.
    if (!visible.get(name)?.includes('app')) throw new Error(`${name} is not callable by apps`);
    const result = await h.client.callTool({ name, arguments: args });
    if (name === 'rl_dashboard_snapshot') calls.push({ view, active: (result.structuredContent as { active: boolean }).active });
    return result;
  });
  await page.setContent(host);
  await page.waitForFunction('typeof window.connectView === "function"');
  const html = readFileSync(DASHBOARD_HTML, 'utf8').replace(/<head>/i, `<head><meta http-equiv="Content-Security-Policy" content="${DEFAULT_CSP}">`);
  for (const id of ['a', 'b']) await page.evaluate(`connectView(${JSON.stringify(id)}, ${JSON.stringify(html)}, ${JSON.stringify({ run_id: runId })}, ${JSON.stringify(toolResult)})`);
  const a = await viewFrame(page, 'a');
  const b = await viewFrame(page, 'b');

  // A view the host tears down while the run is active stops asking.
  await waitUntil('view b asked for a snapshot', () => calls.some((c) => c.view === 'b'), 30);
  const teardown = await page.evaluate('hostViews.b.teardownResource({})');
  assert.deepEqual(teardown, {}, 'the view answers the teardown');
  assert.deepEqual(await page.evaluate('hostViews.a.getAppVersion()'), { name: 'rl-training-dashboard', version: '1.0.0' }, "the host read the view's ui/initialize");
  const bCalls = calls.filter((c) => c.view === 'b').length;
  assert.equal(await polling(b), 'off');

  // While the run is active: live, the trainer running, a health verdict shown.
  await waitFor(a, 'the trainer running, live', async () => (await text(a, '[data-process="trainer"] [data-field="state"]')) === 'running' && (await polling(a)) === 'on');
  assert.ok(calls.filter((c) => c.view === 'a').every((c) => c.active), 'asked only while active so far');
  assert.ok((await text(a, '[data-field="verdict"]')) !== null, 'a health verdict while running');

  // The run ends: the view shows it settled, and stops asking.
  await waitFor(a, 'the view shows the run completed and stops', async () => (await polling(a)) === 'off' && (await text(a, '[data-field="status"]')) === 'completed', 90);
  const aCalls = calls.filter((c) => c.view === 'a').length;
  assert.equal(calls.filter((c) => c.view === 'a').at(-1)!.active, false);
  assert.equal(await text(a, '[data-field="verdict"]'), 'completed');
  for (const process of ['api', 'trainer', 'env']) assert.equal(await text(a, `[data-process="${process}"] [data-field="state"]`), 'exited', process);
  assert.match((await text(a, '[data-field="checkpoint"]')) ?? '', /^tinker:\/\/.*step_5$/, 'the last checkpoint the trainer saved');
  assert.equal(await text(a, '[data-field="progress"]'), 'step 5 of 5');
  assert.equal(await inView(a, `document.querySelector('figure[data-metric="reward_mean"] polyline').points.numberOfItems`), rewards.length, 'one point per W&B history row');
  assert.equal(await inView(a, `document.querySelectorAll('figure[data-metric="reward_mean"] tbody tr').length`), rewards.length, 'the same numbers as a table');
  assert.match((await text(a, 'figure[data-metric="reward_mean"] figcaption')) ?? '', /from W&B/);
  assert.equal(await inView(a, `document.querySelector('figure[data-metric="eval_percent_correct"] svg')`), null, 'no chart without data');
  // The run ended: no data is all there will be, not "yet".
  const empty = (await text(a, 'figure[data-metric="eval_percent_correct"] [data-empty]')) ?? '';
  assert.match(empty, /^No W&B data for percent correct \(eval\)/);
  assert.doesNotMatch(empty, /\byet\b/);
  // The y axis' labels enclose the curve: the top one at or above its highest value, the bottom one at or below its lowest.
  const labels = await inView<number[]>(a, `[...document.querySelectorAll('figure[data-metric="reward_mean"] svg text[text-anchor="end"]')].map((t) => Number(t.textContent))`);
  assert.ok(Math.max(...labels) >= Math.max(...rewards) && Math.min(...labels) <= Math.min(...rewards), `y labels ${labels} for rewards ${rewards}`);
  // Spend in words and dollars, no field name of the answer.
  const spend = (await text(a, '[data-field="cost"]')) ?? '';
  // Four significant digits, as the server's messages write dollars: comparable with a limit.
  const runSpent = (await h.call('rl_check_status', { run_id: runId })).json.cost.spent_usd as number;
  assert.ok(spend.startsWith(`Spend (estimate): ${money(runSpent)}`), `${spend} for $${runSpent}`);
  assert.doesNotMatch(spend, /_usd|remaining|basis:/, spend);
  // The budget window's spend from the ledger, as rl_estimate_cost answers it.
  const windowSpend = (await h.call('rl_estimate_cost')).json.spend;
  assert.equal(await text(a, '[data-field="spend"]'), `Spent in all of RL_HOME (estimate): ${money(windowSpend.total_usd)} · runs ${money(windowSpend.by_kind.run)}`);

  mkdirSync(ARTIFACTS, { recursive: true });
  await page.locator('#a').screenshot({ path: join(ARTIFACTS, 'dashboard.png') });
  await page.evaluate("hostViews.a.sendHostContextChange({ theme: 'dark' })");
  await waitFor(a, 'the dark theme', async () => (await inView(a, 'getComputedStyle(document.body).backgroundColor')) === 'rgb(27, 27, 27)');
  await page.locator('#a').screenshot({ path: join(ARTIFACTS, 'dashboard-dark.png') });

  // Nothing more is asked, by either view, over two poll intervals.
  await sleep((2 * DASHBOARD_POLL_SECONDS + 1) * 1000);
  assert.equal(calls.filter((c) => c.view === 'a').length, aCalls, 'the view stopped polling once the run ended');
  assert.equal(calls.filter((c) => c.view === 'b').length, bCalls, 'the torn-down view stopped polling');
});

async function waitFor(frame: Frame, what: string, probe: () => Promise<boolean>, seconds = 30): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (!(await probe())) {
    if (Date.now() > deadline) assert.fail(`timed out after ${seconds} s waiting for ${what}; the view shows: ${await inView(frame, 'document.body.innerText.slice(0, 2000)')}`);
    await sleep(100);
  }
}
