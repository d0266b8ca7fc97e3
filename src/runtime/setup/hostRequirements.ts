/**
 * The requirements on the server's host and environment: the keys (never their values), a
 * writable RL_HOME, the two fixed ports, and (for the doctor) W&B accepting the key.
 */
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../core/errors.js';
import { diskFullError, isDiskFull, refuseWhenFull } from '../../core/files/diskFull.js';
import { isPortFree } from '../../core/os/ports.js';
import { always, met, never, unmet, type Outcome, type Requirement, type StartContext } from './requirement.js';
import { placeholderMessage, unexpandedReference } from '../../core/placeholders.js';

const WHERE = 'Add it to the MCP server environment (the env block of the client config, or the shell that starts the server) and restart the server.';

/** A key set to an unexpanded `${VAR}`: set, but not a key (never printed: only the reference is). */
function placeholderKey(name: string, value: string | undefined): Outcome | undefined {
  const reference = unexpandedReference(value);
  return reference === undefined ? undefined : unmet(`set to the unexpanded text ${reference}`, placeholderMessage(name, reference), { placeholder: name });
}

/** A key's outcome: refused when it is an unexpanded `${VAR}`, met when set, else `missing()`. */
function keyOutcome(name: string, value: string | undefined, missing: () => Outcome): Outcome {
  return placeholderKey(name, value) ?? (value ? met('set') : missing());
}

const TINKER_KEYS = 'https://tinker-console.thinkingmachines.ai/keys';

/**
 * The Tinker SDK's own check, made when the trainer creates its client: a key that starts with
 * neither `tml-` (an API key) nor `eyJ` (a token) ends the trainer with "The api_key must start with
 * the 'tml-' prefix", after the API and the trainer have started.
 */
const TINKER_KEY_PREFIXES = ['tml-', 'eyJ'];

function tinkerKeyOutcome(value: string | undefined): Outcome {
  const missing = (): Outcome =>
    unmet('not set (the trainer needs it)', `TINKER_API_KEY is not set: the trainer needs it to train on Tinker (keys: ${TINKER_KEYS}). ${WHERE}`, { missing: 'TINKER_API_KEY' });
  const outcome = keyOutcome('TINKER_API_KEY', value, missing);
  if (!outcome.ok || TINKER_KEY_PREFIXES.some((p) => value!.startsWith(p))) return outcome;
  return unmet(
    "set, but not a Tinker key (it does not start with 'tml-')",
    `TINKER_API_KEY does not start with 'tml-': the Tinker SDK refuses such a key ("The api_key must start with the 'tml-' prefix"), and the trainer would fail after the run's processes started. ` +
      `Perhaps another service's key was put there: set it to your Tinker API key, which starts with tml- (keys: ${TINKER_KEYS}). ${WHERE}`,
    { setting: 'TINKER_API_KEY' },
  );
}

export const TINKER_API_KEY: Requirement = {
  check: 'TINKER_API_KEY',
  required: always,
  atStart: true,
  evaluate: ({ settings }) => tinkerKeyOutcome(settings.secrets.tinkerApiKey),
};

function missingWandbKey({ settings, useWandb }: StartContext): Outcome {
  if (!useWandb) {
    return unmet('not set (only for metrics: use_wandb is false)', `WANDB_API_KEY is not set: this run does not log to W&B (use_wandb is false), but no metrics can be read back without it (keys: https://wandb.ai/authorize). ${WHERE}`, {
      missing: 'WANDB_API_KEY',
    });
  }
  const off = Object.hasOwn(settings.locked.env, 'use_wandb')
    ? 'An operator can instead lock env.use_wandb: false in the RL_MCP_CONFIG file.'
    : "Or run without W&B: rl_edit_config('use_wandb', false).";
  return unmet(
    'not set (use_wandb is true: the trainer fails without W&B)',
    `WANDB_API_KEY is not set while use_wandb is true: the upstream trainer crashes when W&B cannot log in, and metrics could not be read back (keys: https://wandb.ai/authorize). ${WHERE} (${off})`,
    { missing: 'WANDB_API_KEY' },
  );
}

export const WANDB_API_KEY: Requirement = {
  check: 'WANDB_API_KEY',
  required: ({ useWandb }) => useWandb,
  atStart: true,
  evaluate: (ctx) => keyOutcome('WANDB_API_KEY', ctx.settings.secrets.wandbApiKey, () => missingWandbKey(ctx)),
};

export const OPENROUTER_API_KEY: Requirement = {
  check: 'OPENROUTER_API_KEY',
  required: never,
  atStart: false,
  evaluate: ({ settings }) =>
    keyOutcome('OPENROUTER_API_KEY', settings.secrets.openrouterApiKey, () =>
      unmet(
        'not set (needed only by rl_test_inference with its default endpoint)',
        `OPENROUTER_API_KEY is not set: rl_test_inference needs it for its default endpoint (OpenRouter). ${WHERE} Or give rl_test_inference another base_url and api_key_env.`,
        { missing: 'OPENROUTER_API_KEY' },
      ),
    ),
};

export const RL_HOME: Requirement = {
  check: 'RL_HOME',
  required: always,
  atStart: true,
  evaluate({ settings: { home } }) {
    const probe = join(home, `.writable-${randomBytes(4).toString('hex')}`);
    try {
      writeFileSync(probe, '');
      rmSync(probe);
      refuseWhenFull(home);
      return met(`${home} is writable`);
    } catch (err) {
      if (err instanceof UserError || isDiskFull(err)) return unmet(`the file system holding ${home} is full`, diskFullError(home).message, { setting: 'RL_HOME' });
      const code = (err as NodeJS.ErrnoException).code ?? String(err);
      return unmet(`${home} is not writable (${code})`, `RL_HOME (${home}) is not writable (${code}): every run keeps its record and logs there. Point RL_HOME at a writable directory.`, {
        setting: 'RL_HOME',
      });
    }
  },
};

/** One probe for both ports: bound on `host` as the process that needs the port binds it. */
/** The configured ports are the first run's: with other runs active, a new run draws free ports of its own. */
const firstRunOnly = (ctx: StartContext): boolean => (ctx.activeRuns?.().length ?? 0) === 0;
/** The ports are this host's: a Slurm run's processes listen on a node's. */
const onThisHost = (ctx: StartContext): boolean => ctx.placement === 'local';

async function portOutcome(ctx: StartContext, host: string, port: number, message: string, setting: string): Promise<Outcome> {
  if (!firstRunOnly(ctx)) return met(`not used while runs are active: a new run gets free ports of its own`);
  if (await isPortFree(port, host)) return met(`${host}:${port} is free`);
  const active = ctx.activeRuns?.() ?? [];
  const holder = active.length > 0 ? ` (run ${active[0]} is active; stop it with rl_stop_training)` : '';
  return unmet(`${host}:${port} is in use${holder}`, message, { port, setting });
}

/** run-api is started with --host 127.0.0.1, so that is the address its port must be free on. */
export const API_PORT: Requirement = {
  check: 'api port',
  placement: true,
  applies: onThisHost,
  required: firstRunOnly,
  atStart: true,
  evaluate: (ctx) => {
    const port = ctx.settings.apiPort;
    const message = `Port ${port} (RL_API_PORT, for the Atropos API) is in use on 127.0.0.1. Stop whatever listens there (perhaps a run-api left over from an earlier run: lsof -i :${port}) or set RL_API_PORT to a free port.`;
    return portOutcome(ctx, '127.0.0.1', port, message, 'RL_API_PORT');
  },
};

/**
 * Probed on all interfaces (0.0.0.0): the server moves the trainer's inference server to 127.0.0.1,
 * but a checkout whose trainer does not start it through uvicorn.run keeps upstream's 0.0.0.0, where
 * a listener on any one address, another interface's included, makes the bind fail; only a probe
 * on 0.0.0.0 sees them all (one on 127.0.0.1 misses a listener on the machine's network address).
 */
export const INFERENCE_PORT: Requirement = {
  check: 'inference port',
  placement: true,
  applies: onThisHost,
  required: firstRunOnly,
  atStart: true,
  evaluate: (ctx) => {
    const port = ctx.settings.inferencePort;
    const message = `Port ${port} (RL_INFERENCE_PORT, for the trainer's inference server) is in use. The first run on the host takes it (the upstream trainer hard-codes its inference port, 8001; the server moves it to this one): stop the process holding the port (lsof -i :${port}), e.g. a trainer left over from an earlier run, or set RL_INFERENCE_PORT to a free port.`;
    return portOutcome(ctx, '0.0.0.0', port, message, 'RL_INFERENCE_PORT');
  },
};

/** Doctor only, and only with a key (WANDB_API_KEY's check says when it is missing or an unexpanded `${VAR}`): a start does not call W&B. */
export const WANDB_ACCESS: Requirement = {
  check: 'W&B',
  required: ({ useWandb }) => useWandb,
  atStart: false,
  async evaluate({ settings, signal, checkWandbAccess }) {
    if (!settings.secrets.wandbApiKey || unexpandedReference(settings.secrets.wandbApiKey) !== undefined) return undefined;
    const { entity, wandb_error } = await checkWandbAccess(signal);
    if (wandb_error === undefined) return met(`${settings.wandb.baseUrl} accepts the key (entity ${entity})`);
    return unmet(wandb_error, `${wandb_error}. Check WANDB_API_KEY and WANDB_BASE_URL, and that this host can reach W&B.`);
  },
};
