/**
 * The requirements on the tinker-atropos install: the trainer script, the Atropos API server, an
 * interpreter new enough that imports atroposlib and tinker, and (for the doctor) environments.
 */
import { basename } from 'node:path';
import { UserError } from '../../core/errors.js';
import { findLaunchTraining, findRunApi, isSupportedPython, MIN_PYTHON, type ProbedModule } from './installation.js';
import { ALLOW_UNMANAGED_SETTING, tinkerProblems } from '../environments/tinkerReadiness.js';
import { always, lookup, met, unmet, type Outcome, type Requirement } from './requirement.js';

export const LAUNCH_TRAINING: Requirement = {
  check: 'launch_training.py',
  required: always,
  atStart: true,
  evaluate: ({ settings }) => lookup(() => findLaunchTraining(settings)),
};

export const RUN_API: Requirement = {
  check: 'run-api',
  required: always,
  atStart: true,
  evaluate: ({ settings }) => lookup(() => findRunApi(settings)),
};

const MIN_VERSION = MIN_PYTHON.join('.');

export const PYTHON: Requirement = {
  check: 'python',
  required: always,
  atStart: true,
  async evaluate({ settings, interpreter }) {
    const probe = await interpreter();
    const { python } = settings;
    if (!probe.runnable) return unmet(`RL_PYTHON=${python} cannot be run`, probe.message, { python });
    const { version } = probe.version;
    if (!isSupportedPython(probe.version)) {
      return unmet(
        `Python ${version} (${python}) is too old`,
        `RL_PYTHON (${python}) is Python ${version}; tinker-atropos and atroposlib need Python ${MIN_VERSION} or newer. Point RL_PYTHON at a ${MIN_VERSION}+ interpreter (e.g. <tinker-atropos>/.venv/bin/python).`,
        { python, python_version: version },
      );
    }
    return met(`Python ${version} (${python})`);
  },
};

function importable(module: ProbedModule): Requirement {
  return {
    check: module,
    required: always,
    atStart: true,
    async evaluate({ settings, interpreter }) {
      const probe = await interpreter();
      const { python } = settings;
      if (!probe.runnable) return unmet('not checked: no interpreter', `${module} was not checked: RL_PYTHON (${python}) cannot be run. Fix the python check first.`, { python });
      const error = probe.imports[module];
      if (error === null) return met('importable');
      return unmet(
        `not importable: ${error}`,
        `RL_PYTHON (${python}) cannot import ${module} (${error}). Install tinker-atropos into RL_PYTHON's environment: cd <tinker-atropos> && ${python} -m pip install -e . (it pulls atroposlib and tinker; git-lfs is needed).`,
        { python, module, import_error: error },
      );
    },
  };
}

export const ATROPOSLIB = importable('atroposlib');
export const TINKER = importable('tinker');

function environmentImportFailure(file: string, error: string, settings: { python: string; root: string }): Outcome {
  const detail = `${basename(file)} does not import as its process would: ${error}`;
  if (/\bNo module named '?tinker_atropos\b/.test(error)) {
    return unmet(
      detail,
      `The environment ${file} imports tinker_atropos, which RL_PYTHON (${settings.python}) can only import from the checkout root, and the environment process runs with only its own folder on sys.path (${error}). Install the checkout: cd ${settings.root} && ${settings.python} -m pip install -e . — otherwise the environment dies after the trainer registered.`,
      { environment_file: file, import_error: error },
    );
  }
  return unmet(
    detail,
    `The environment ${file} fails to import the way its process imports it (only its own folder on sys.path, cwd ${settings.root}): ${error}. Fix the import (reproduce it with: cd ${settings.root} && ${settings.python} ${file} --help) before starting: the environment would die after the trainer registered.`,
    { environment_file: file, import_error: error },
  );
}

/**
 * The selected environment can train on Tinker: it samples through managed_server (else the
 * trainer fails at step 0, after paid rollouts), unless RL_ALLOW_UNMANAGED_ENVIRONMENTS says the
 * operator knows better. Not applicable without a selection.
 */
export const TINKER_READY: Requirement = {
  check: 'environment on Tinker',
  required: ({ tinker, settings }) => tinker !== undefined && !settings.allowUnmanagedEnvironments,
  atStart: true,
  evaluate({ tinker, settings, environmentFile }) {
    if (tinker === undefined) return met('no environment selected');
    const blocking = tinkerProblems(tinker).filter((p) => p.blocking);
    const name = environmentFile === undefined ? 'the environment' : basename(environmentFile);
    if (blocking.length === 0) return met(`${name} uses managed_server`);
    if (settings.allowUnmanagedEnvironments) return met(`${name}: ${blocking.map((p) => p.code).join(', ')}, allowed by ${ALLOW_UNMANAGED_SETTING}`);
    return unmet(
      `${name}: ${blocking.map((p) => p.code).join(', ')}`,
      blocking.map((p) => `${p.message} Fix: ${p.fix}`).join(' '),
      { environment_file: environmentFile, problems: blocking.map((p) => p.code) },
    );
  },
};

/** The selected environment imports as `python <file> serve` imports it; not applicable without a selection. */
export const ENVIRONMENT_IMPORT: Requirement = {
  check: 'environment import',
  required: ({ environmentFile }) => environmentFile !== undefined,
  atStart: true,
  async evaluate({ settings, interpreter, environmentFile }) {
    if (environmentFile === undefined) return met('no environment selected');
    const probe = await interpreter();
    if (!probe.runnable) return unmet('not checked: no interpreter', `The environment was not checked: RL_PYTHON (${settings.python}) cannot be run. Fix the python check first.`, { python: settings.python });
    const error = probe.environment;
    return error === null || error === undefined ? met(`${basename(environmentFile)} imports`) : environmentImportFailure(environmentFile, error, settings);
  },
};

const LISTED_ENVIRONMENTS = 8;

/** Doctor only: a start already has its environment (or refuses with "No environment selected"). */
export const ENVIRONMENTS: Requirement = {
  check: 'environments',
  required: always,
  atStart: false,
  async evaluate({ scanEnvironments }): Promise<Outcome> {
    let report;
    try {
      report = await scanEnvironments();
    } catch (err) {
      if (!(err instanceof UserError)) throw err;
      return unmet('discovery failed', err.message, err.hints);
    }
    const { environments, skipped } = report;
    const skippedNote = skipped.length > 0 ? `; ${skipped.length} file(s) skipped (see rl_list_environments)` : '';
    if (environments.length === 0) {
      return unmet(
        `none found${skippedNote}`,
        `No Atropos environments found${skippedNote}. Put Atropos environments (BaseEnv subclasses) under <TINKER_ATROPOS_ROOT>/tinker_atropos/environments or add their folder to RL_ENVIRONMENTS_DIRS.`,
      );
    }
    const names = environments.map((e) => e.name).slice(0, LISTED_ENVIRONMENTS).join(', ');
    return met(`${environments.length} found (${names}${environments.length > LISTED_ENVIRONMENTS ? ', ...' : ''})${skippedNote}`);
  },
};
