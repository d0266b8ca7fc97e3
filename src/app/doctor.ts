/**
 * Every requirement for training, checked at once and each failure paired with its fix: what
 * `rl_doctor` and `rl-training-mcp doctor` report. Hermes hid its tools when keys were missing and
 * never checked the install at all; an agent (or a person) needs the whole list to fix it in one go.
 */
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { childEnv } from '../core/childEnv.js';
import { UserError } from '../core/errors.js';
import { findLaunchTraining, findRunApi, isSupportedPython, MIN_PYTHON, pythonVersion } from '../domain/setup/installation.js';
import { isPortFree } from '../core/ports.js';
import type { Runtime } from './runtime.js';

export interface DoctorCheck {
  check: string;
  ok: boolean;
  /** False for what only some tools need (e.g. OPENROUTER_API_KEY for rl_test_inference). */
  required: boolean;
  detail: string;
  fix?: string;
}

export interface DoctorReport {
  /** True when rl_start_training would get past every check here. */
  ready: boolean;
  checks: DoctorCheck[];
  summary: string;
}

const IMPORT_PROBE = `
import importlib, json
out = {}
for name in ("atroposlib", "tinker"):
    try:
        importlib.import_module(name)
        out[name] = None
    except BaseException as exc:
        out[name] = (type(exc).__name__ + ": " + str(exc)).splitlines()[0]
print(json.dumps(out))
`;

const ACTIVE = new Set(['starting', 'running', 'stopping']);

function pass(check: string, detail: string, required = true): DoctorCheck {
  return { check, ok: true, required, detail };
}

function problem(check: string, detail: string, fix: string, required = true): DoctorCheck {
  return { check, ok: false, required, detail, fix };
}

/** A lookup that throws UserError with its own fix becomes one failed check. */
function fromLookup(check: string, lookup: () => string): DoctorCheck {
  try {
    return pass(check, lookup());
  } catch (err) {
    if (!(err instanceof UserError)) throw err;
    return problem(check, 'not found', err.message);
  }
}

async function interpreterChecks(runtime: Runtime, signal?: AbortSignal): Promise<DoctorCheck[]> {
  const { settings } = runtime;
  let version;
  try {
    version = await pythonVersion(settings, signal);
  } catch (err) {
    if (!(err instanceof UserError)) throw err;
    // The python check carries the fix; repeating it on the two checks it blocks only costs tokens.
    const first = 'Fix the python check first.';
    return [problem('python', `RL_PYTHON=${settings.python} cannot be run`, err.message), problem('atroposlib', 'not checked: no interpreter', first), problem('tinker', 'not checked: no interpreter', first)];
  }
  const checks = [
    isSupportedPython(version)
      ? pass('python', `Python ${version.version} (${settings.python})`)
      : problem('python', `Python ${version.version} (${settings.python}) is too old`, `tinker needs Python ${MIN_PYTHON.join('.')}+: set RL_PYTHON to a newer interpreter, e.g. the venv of your tinker-atropos checkout.`),
  ];
  const probe = await execa(settings.python, ['-c', IMPORT_PROBE], {
    cwd: settings.root,
    env: childEnv(settings.processEnv),
    extendEnv: false,
    reject: false,
    timeout: settings.introspectTimeoutSeconds * 1000,
    cancelSignal: signal,
  });
  let imports: Record<string, string | null> = {};
  try {
    imports = JSON.parse(probe.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, string | null>;
  } catch {
    const reason = probe.timedOut ? 'timed out' : (probe.stderr.trim().split('\n').at(-1) ?? `exit code ${probe.exitCode}`);
    imports = { atroposlib: reason, tinker: reason };
  }
  const install = `Install tinker-atropos into RL_PYTHON's environment: cd <tinker-atropos> && ${settings.python} -m pip install -e . (it pulls atroposlib and tinker; git-lfs is needed).`;
  for (const name of ['atroposlib', 'tinker']) {
    const error = imports[name];
    checks.push(error === null ? pass(name, 'importable') : problem(name, `not importable: ${error ?? 'unknown error'}`, install));
  }
  return checks;
}

async function environmentsCheck(runtime: Runtime): Promise<DoctorCheck> {
  try {
    const report = await runtime.environments.scan();
    const skipped = report.skipped.length > 0 ? `; ${report.skipped.length} file(s) skipped (see rl_list_environments)` : '';
    if (report.environments.length === 0) {
      return problem('environments', `none found${skipped}`, 'Put Atropos environments (BaseEnv subclasses) under <TINKER_ATROPOS_ROOT>/tinker_atropos/environments or add their folder to RL_ENVIRONMENTS_DIRS.');
    }
    return pass('environments', `${report.environments.length} found (${report.environments.map((e) => e.name).slice(0, 8).join(', ')}${report.environments.length > 8 ? ', ...' : ''})${skipped}`);
  } catch (err) {
    if (!(err instanceof UserError)) throw err;
    return problem('environments', 'discovery failed', err.message);
  }
}

function keyChecks(runtime: Runtime): DoctorCheck[] {
  const { secrets, locked } = runtime.settings;
  const useWandb = locked.env.use_wandb !== false;
  const key = (name: string, value: string | undefined, required: boolean, why: string, fix: string): DoctorCheck =>
    value ? pass(name, 'set', required) : problem(name, `not set (${why})`, fix, required);
  return [
    key('TINKER_API_KEY', secrets.tinkerApiKey, true, 'the trainer needs it', 'Create a key at https://tinker-console.thinkingmachines.ai/keys and set TINKER_API_KEY in the server environment (the client config\'s env block).'),
    key('WANDB_API_KEY', secrets.wandbApiKey, useWandb, useWandb ? 'use_wandb is locked on: the trainer fails without W&B' : 'only for metrics', 'Get a key at https://wandb.ai/authorize and set WANDB_API_KEY (or lock env.use_wandb: false in RL_MCP_CONFIG).'),
    key('OPENROUTER_API_KEY', secrets.openrouterApiKey, false, 'needed only by rl_test_inference with its default endpoint', 'Set OPENROUTER_API_KEY, or give rl_test_inference another base_url and api_key_env.'),
  ];
}

function homeCheck(runtime: Runtime): DoctorCheck {
  const { home } = runtime.settings;
  const probe = join(home, `.doctor-${randomBytes(4).toString('hex')}`);
  try {
    writeFileSync(probe, '');
    rmSync(probe);
    return pass('RL_HOME', `${home} is writable`);
  } catch (err) {
    return problem('RL_HOME', `${home} is not writable (${(err as NodeJS.ErrnoException).code ?? String(err)})`, 'Point RL_HOME at a writable directory.');
  }
}

async function portChecks(runtime: Runtime): Promise<DoctorCheck[]> {
  const { apiPort, inferencePort } = runtime.settings;
  const active = runtime.runs.list().filter((r) => ACTIVE.has(r.status));
  const holder = active.length > 0 ? ` (run ${active[0]!.run_id} is active; stop it with rl_stop_training)` : '';
  const check = async (name: string, port: number, variable: string): Promise<DoctorCheck> =>
    (await isPortFree(port))
      ? pass(name, `127.0.0.1:${port} is free`)
      : problem(name, `127.0.0.1:${port} is in use${holder}`, `Stop what listens on ${port} (e.g. a leftover run-api or trainer: ss -ltnp | grep ${port}) or set ${variable} to a free port.`);
  return Promise.all([check('api port', apiPort, 'RL_API_PORT'), check('inference port', inferencePort, 'RL_INFERENCE_PORT')]);
}

async function wandbCheck(runtime: Runtime, signal?: AbortSignal): Promise<DoctorCheck | undefined> {
  if (!runtime.settings.secrets.wandbApiKey) return undefined;
  const required = runtime.settings.locked.env.use_wandb !== false;
  const { entity, wandb_error } = await runtime.wandb.checkAccess(signal);
  return wandb_error === undefined
    ? pass('W&B', `${runtime.settings.wandb.baseUrl} accepts the key (entity ${entity})`, required)
    : problem('W&B', wandb_error, 'Check WANDB_API_KEY and WANDB_BASE_URL, and that this host can reach W&B.', required);
}

export async function runDoctor(runtime: Runtime, signal?: AbortSignal): Promise<DoctorReport> {
  const { settings } = runtime;
  const [interpreter, environments, ports, wandb] = await Promise.all([
    interpreterChecks(runtime, signal),
    environmentsCheck(runtime),
    portChecks(runtime),
    wandbCheck(runtime, signal),
  ]);
  const checks: DoctorCheck[] = [
    ...interpreter,
    fromLookup('run-api', () => findRunApi(settings)),
    fromLookup('launch_training.py', () => findLaunchTraining(settings)),
    environments,
    ...keyChecks(runtime),
    homeCheck(runtime),
    ...ports,
    ...(wandb ? [wandb] : []),
  ];
  const blocking = checks.filter((c) => !c.ok && c.required);
  const ready = blocking.length === 0;
  const summary = ready
    ? 'Training can start: every required check passed.'
    : `Training cannot start: ${blocking.length} required check(s) failed (${blocking.map((c) => c.check).join(', ')}). Apply each fix, then run the doctor again.`;
  return { ready, checks, summary };
}

/** The report as a person reads it in a terminal. */
export function formatDoctorReport(report: DoctorReport, settings: Runtime['settings']): string {
  const width = Math.max(...report.checks.map((c) => c.check.length));
  const lines = [`rl-training-mcp doctor  (root ${settings.root}${settings.usingBundledExamples ? ', the bundled examples' : ''}; RL_HOME ${settings.home})`, ''];
  for (const c of report.checks) {
    const mark = c.ok ? 'ok  ' : c.required ? 'FAIL' : 'warn';
    lines.push(`  ${mark}  ${c.check.padEnd(width)}  ${c.detail}`);
    if (c.fix) lines.push(`        ${' '.repeat(width)}  fix: ${c.fix}`);
  }
  lines.push('', report.summary, '');
  return lines.join('\n');
}
