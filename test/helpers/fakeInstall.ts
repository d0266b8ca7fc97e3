/**
 * A tinker-atropos checkout installed the way its README does it, built from the fakes in a fresh
 * temp directory: `<root>/tinker_atropos/environments/` (the bundled examples), the fake
 * `tinker_atropos/config.py`, `tinker_atropos/trainer.py` and `launch_training.py`, and a virtualenv whose interpreter imports
 * the fake `atroposlib`, `wandb` and `tinker` and the checkout itself (`.pth` files, as
 * `pip install -e .` leaves them) with no PYTHONPATH, plus the `run-api` console script next to it.
 *
 * Behaviour switches for the fakes are files in the root (the children's cwd):
 * `fake_trainer.json` (see test/fakes/tinker-atropos/launch_training.py) and `fake_env.json`.
 */
import { execFile } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { FAKE_COOKBOOK_PYTHONPATH, FAKE_PYTHONPATH, FAKE_VERIFIERS_ENVIRONMENTS_DIR, FAKES_DIR, pythonOnPath, REPO_ROOT, tempDir } from './tmp.js';

const execFileAsync = promisify(execFile);

/**
 * Keys of `fake_trainer.json`; every one is optional. Whatever they say, the trainer waits for each
 * step's batch as upstream does (no timeout): a trainer that should make progress needs an
 * environment feeding the Atropos API, or a test queueing batches (helpers/fakeProcesses.ts).
 */
export interface TrainerControl {
  /** Seconds each training step takes (default 0.05). */
  step_seconds?: number;
  /** Print `Error during training: simulated failure` and exit 1 before registering. */
  fail_at_start?: boolean;
  /** Step k, once it has its batch, prints `Error in step k: simulated error` + traceback; the run still ends "successfully" (exit 0). */
  error_in_step?: number;
  /** Ignore SIGTERM (only SIGKILL ends it). */
  ignore_sigterm?: boolean;
  /** Start `python -c "import time; time.sleep(3600)"` in the trainer's process group; prints `grandchild pid: N`. */
  spawn_grandchild?: boolean;
  /** Sleep forever right before registering with the API (after the initial sampling client exists). */
  hang_before_register?: boolean;
  /** Exit code of a run that reaches its end (default 0). */
  exit_code?: number;
  /** What the trainer's inference server samples, on every route (default "The answer is #### 42"). */
  chat_answer?: string;
}

/**
 * Keys of `fake_env.json` (read by `<env>.py serve`). Upstream failure modes that need a particular
 * environment are shown by the environments in test/fakes/environments instead.
 */
export interface EnvControl {
  /** Exit right after `/register-env` succeeded. */
  exit_after_register?: boolean;
  /** Exit code used with exit_after_register (default 0). */
  exit_code?: number;
}

export interface FakeInstall {
  /** The checkout: TINKER_ATROPOS_ROOT, and the cwd of trainer and environments. */
  root: string;
  /** `<root>/.venv/bin/python` (RL_PYTHON is found here by default). */
  python: string;
  /** `<root>/.venv/bin/run-api`. */
  runApi: string;
  /** `<root>/launch_training.py`. */
  launchTraining: string;
  /** `<root>/tinker_atropos/environments`. */
  environmentsDir: string;
  /** Writes `fake_trainer.json`; `null` removes it (defaults again). */
  trainerControl(control: TrainerControl | null): void;
  /** Writes `fake_env.json`; `null` removes it. */
  envControl(control: EnvControl | null): void;
  /** Writes the fake cookbook's `fake_cookbook.json` (read at every step, wherever the recipe runs); `null` removes it. */
  cookbookControl(control: CookbookControl | null): void;
}

export interface FakeInstallOptions {
  /** Interpreter the venv is made from (default the one `python3` on PATH runs). */
  basePython?: string;
  /** Where to build it (the caller removes it); default a temp dir removed after the test file. */
  dir?: string;
  /**
   * Leave the checkout's own `.pth` in the venv (default true), as `pip install -e .` does. Without
   * it `tinker_atropos` is importable only by `launch_training.py` (its folder is the checkout), not
   * by an environment, whose sys.path holds its own folder only.
   */
  editableInstall?: boolean;
  /**
   * Also install tinker-cookbook into the venv (its `.pth` names test/fakes/cookbook: the fake
   * `tinker_cookbook`, `chz` and `verifiers`) and the `gsm8k` verifiers environment into its
   * site-packages, module and `.dist-info`, as `prime env install primeintellect/gsm8k` (pip) leaves
   * it. Default false: a tinker-atropos venv has none of them.
   */
  cookbook?: boolean;
  /**
   * The fake Tinker service's state directory (helpers/fakeTinker.ts): every process of the venv
   * finds it (a `.pth` line sets FAKE_TINKER_STATE when unset), as a real SDK finds the real
   * service whatever environment the server gives its children.
   */
  tinkerState?: string;
}

/**
 * Keys of `fake_cookbook.json`, the fake tinker-cookbook's switches (test/fakes/cookbook/tinker_cookbook/__init__.py
 * lists them); every one optional.
 */
export interface CookbookControl {
  step_seconds?: number;
  rewards?: number[];
  fail_at_step?: number;
  fail_with?: 'RuntimeError' | 'ConfigurationError' | 'TrainingError';
  hang_at_step?: number;
  ignore_sigterm?: boolean;
  spawn_grandchild?: boolean;
}

/** What `pip install` leaves of a wheel in site-packages: its files (path -> text), and its metadata (with its `Requires-Dist` lines) beside them. */
export function pipInstall(sitePackages: string, dist: string, version: string, files: Record<string, string>, requires: readonly string[] = ['verifiers>=0.1.8']): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(sitePackages, path)), { recursive: true });
    writeFileSync(join(sitePackages, path), text);
  }
  const info = join(sitePackages, `${dist}-${version}.dist-info`);
  mkdirSync(info, { recursive: true });
  writeFileSync(join(info, 'METADATA'), `Metadata-Version: 2.1\nName: ${dist}\nVersion: ${version}\n${requires.map((r) => `Requires-Dist: ${r}\n`).join('')}`);
  writeFileSync(join(info, 'INSTALLER'), 'pip\n');
  writeFileSync(join(info, 'WHEEL'), 'Wheel-Version: 1.0\nGenerator: hatchling 1.25.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n');
  writeFileSync(join(info, 'RECORD'), [...Object.keys(files), `${dist}-${version}.dist-info/METADATA`].map((f) => `${f},,\n`).join(''));
}

/** The tinker-cookbook release the fakes stand for (thinking-machines-lab/tinker-cookbook v0.5.5, 9dfcc3a2). */
export const COOKBOOK_VERSION = '0.5.5';
/** Its pyproject's optional dependencies as pip records them (a few of its main ones, then each extra's). */
const COOKBOOK_REQUIRES = [
  'chz>=0.4.0',
  'tinker>=0.23.0',
  'math-verify>=0.5.0; extra == "math-rl"',
  'modal>=1.5.1; extra == "modal"',
  'chromadb>=1.0.0; extra == "vector-search"',
  'google-genai>=1.0.0; extra == "vector-search"',
  'huggingface_hub>=0.20.0; extra == "vector-search"',
  'verifiers<0.1.10,>=0.1.9; extra == "verifiers"',
  'openai>=1.0.0; extra == "verifiers"',
];

/** A verifiers environment of test/fakes/verifiers-environments, installed from its package as pip installs its wheel. */
function pipInstallEnvironment(sitePackages: string, name: string): void {
  const source = join(FAKE_VERIFIERS_ENVIRONMENTS_DIR, name);
  const version = /^version = "([^"]+)"/m.exec(readFileSync(join(source, 'pyproject.toml'), 'utf8'))?.[1] ?? '0.0.0';
  const files = Object.fromEntries(readdirSync(source).filter((f) => f.endsWith('.py')).map((f) => [`${name}/${f}`, readFileSync(join(source, f), 'utf8')]));
  pipInstall(sitePackages, name, version, files);
}

function controlFile(path: string): (control: object | null) => void {
  return (control) => {
    if (control === null) rmSync(path, { force: true });
    else writeFileSync(path, JSON.stringify(control));
  };
}

export async function makeFakeInstall(opts: FakeInstallOptions = {}): Promise<FakeInstall> {
  const root = join(opts.dir ?? tempDir('rlmcp-install-'), 'tinker-atropos');
  const skipCaches = (src: string) => basename(src) !== '__pycache__';
  cpSync(join(REPO_ROOT, 'examples', 'tinker_atropos'), join(root, 'tinker_atropos'), { recursive: true, filter: skipCaches });
  for (const module of ['config.py', 'trainer.py']) cpSync(join(FAKES_DIR, 'tinker-atropos', 'tinker_atropos', module), join(root, 'tinker_atropos', module));
  const launchTraining = join(root, 'launch_training.py');
  cpSync(join(FAKES_DIR, 'tinker-atropos', 'launch_training.py'), launchTraining);

  // --system-site-packages: pydantic and PyYAML come from the base interpreter, as they would from PyPI.
  const venv = join(root, '.venv');
  await execFileAsync(opts.basePython ?? pythonOnPath(), ['-m', 'venv', '--system-site-packages', '--without-pip', venv]);
  const libDir = join(venv, 'lib');
  const pythonDir = readdirSync(libDir).find((name) => name.startsWith('python'));
  if (pythonDir === undefined) throw new Error(`no lib/python* in the new venv ${venv}`);
  const sitePackages = join(libDir, pythonDir, 'site-packages');
  writeFileSync(join(sitePackages, 'rl_training_mcp_fakes.pth'), `${FAKE_PYTHONPATH}\n`);
  const cookbookControlFile = join(root, 'fake_cookbook.json');
  if (opts.cookbook === true) {
    // A .pth line starting with `import` runs at start-up: a recipe finds the install's switches whatever its
    // environment, unless its working directory has a fake_cookbook.json of its own.
    const setControl = `import os; os.path.exists('fake_cookbook.json') or os.environ.setdefault('FAKE_COOKBOOK_CONTROL', ${JSON.stringify(cookbookControlFile)})`;
    writeFileSync(join(sitePackages, 'rl_training_mcp_cookbook_fakes.pth'), `${FAKE_COOKBOOK_PYTHONPATH}\n${setControl}\n`);
    // The metadata `pip install tinker-cookbook` leaves (its modules are the fakes the .pth names): the version and the optional extras.
    pipInstall(sitePackages, 'tinker_cookbook', COOKBOOK_VERSION, {}, COOKBOOK_REQUIRES);
    pipInstallEnvironment(sitePackages, 'gsm8k');
  }
  if (opts.tinkerState !== undefined) writeFileSync(join(sitePackages, 'rl_training_mcp_fake_tinker.pth'), `import os; os.environ.setdefault('FAKE_TINKER_STATE', ${JSON.stringify(opts.tinkerState)})\n`);
  if (opts.editableInstall !== false) writeFileSync(join(sitePackages, '__editable__.tinker_atropos-0.1.0.pth'), `${root}\n`);

  const python = join(venv, 'bin', 'python');
  const runApi = join(venv, 'bin', 'run-api');
  // What pip writes for `[project.scripts] run-api = "atroposlib.cli.run_api:main"`.
  writeFileSync(
    runApi,
    `#!${python}\nimport re\nimport sys\nfrom atroposlib.cli.run_api import main\n` +
      `if __name__ == "__main__":\n    sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])\n    sys.exit(main())\n`,
  );
  chmodSync(runApi, 0o755);

  return {
    root,
    python,
    runApi,
    launchTraining,
    environmentsDir: join(root, 'tinker_atropos', 'environments'),
    trainerControl: controlFile(join(root, 'fake_trainer.json')),
    envControl: controlFile(join(root, 'fake_env.json')),
    cookbookControl: controlFile(cookbookControlFile),
  };
}
