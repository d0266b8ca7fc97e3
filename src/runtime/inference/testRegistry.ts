/**
 * The inference tests: checks and starts them, finds them again by test_id, waits on them for a
 * bounded time; keeping, reading and cancelling them is the job registry's (../jobs/registry.ts).
 *
 * Cancellation: a test belongs to the call that started it until that call returns, so
 * cancelling that call kills the test (its later result says "cancelled"). A call that only
 * waits on an existing test_id stops waiting when cancelled; the test goes on.
 */
import { UserError } from '../../core/errors.js';
import type { CoreServices } from '../../core/services.js';
import { JobRegistry, type CancelOutcome } from '../jobs/registry.js';
import { writeKeyConfig, type ServerType } from './command.js';
import { InferenceTest, type TestKeys } from './testRun.js';
import type { TestOutput } from './testReport.js';
import { routeModel } from './routing.js';
import { refuseSampling, samplingMeter } from '../ledger/sampling.js';
import { tinkerApiKey } from './keys.js';
import { waitOnJob, type WaitOptions } from '../jobs/wait.js';
import { testAnswer, type TestAnswer } from './answer.js';
import { resolveTestModels } from './models.js';
import { placeholderMessage, unexpandedReference } from '../../core/placeholders.js';

export const DEFAULT_BASE_URL = 'https://openrouter.ai/api/v1';
export const DEFAULT_API_KEY_ENV = 'OPENROUTER_API_KEY';
export const MAX_WAIT_SECONDS = 280;
/** Tests running at once on this server; each runs up to MODEL_CONCURRENCY Python processes. */
export const MAX_RUNNING_TESTS = 3;
/** Finished tests kept in memory; older ones are answered from their result.json. */
const KEPT_FINISHED_TESTS = 20;
const SHUTTING_DOWN = 'The server is shutting down; start the test again after it restarts';

/** Keys the server holds for its own services: never sent to an inference endpoint. */
const SERVICE_KEYS = new Set(['TINKER_API_KEY', 'WANDB_API_KEY']);
/**
 * The key goes to an endpoint the caller chose, so only a variable named like an endpoint key may
 * be sent: an agent steered by a prompt must not ship GITHUB_TOKEN or AWS_SECRET_ACCESS_KEY away.
 */
const ENDPOINT_KEY_NAME = /_API_KEY$/;

export interface InferenceTestRequest {
  /** A verifiers environment (vf_env_id) is run with verifiers' eval; a cookbook recipe that is not one cannot be tested. */
  environment: { name: string; file_path: string; framework?: string; recipe?: string; vf_env_id?: string };
  num_steps: number;
  group_size: number;
  models?: string[];
  base_url: string;
  api_key_env: string;
  server_type: ServerType;
  timeout_seconds: number;
  use_wandb: boolean;
  /** `openai:` entries the environment needs (serverEntriesNeeded); 1 when not given. */
  server_entries?: 1 | 2;
  /** The caller named base_url: Tinker base-model ids go there too instead of to Tinker. */
  base_url_explicit?: boolean;
}

export type { WaitOptions };

/** http(s) only, and no credentials in the URL: they would land on the command line. */
export function checkBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UserError(`base_url ${JSON.stringify(raw)} is not a URL`, { expected: 'an http(s) URL such as https://openrouter.ai/api/v1' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UserError(`base_url must be http or https, not ${url.protocol.replace(':', '')}`, { expected: 'an http(s) URL such as https://openrouter.ai/api/v1' });
  }
  if (url.username || url.password) {
    throw new UserError('base_url must not carry credentials: put the key in an environment variable of the server and name it in api_key_env');
  }
  return raw.replace(/\/+$/, '');
}

export class InferenceTests {
  readonly jobs: JobRegistry<InferenceTest, TestOutput>;

  constructor(private readonly core: CoreServices) {
    this.jobs = new JobRegistry(core, 'inference_test', KEPT_FINISHED_TESTS);
  }

  get directory(): string {
    return this.jobs.directory;
  }

  /** Checks the request, creates the test's directory and key file, and starts it. */
  async start(req: InferenceTestRequest): Promise<InferenceTest> {
    const { settings, redactor, logger } = this.core;
    if (this.jobs.closed) throw new UserError(SHUTTING_DOWN);
    if (req.environment.framework === 'cookbook' && req.environment.vf_env_id === undefined) {
      throw new UserError(
        `${req.environment.name} is a tinker-cookbook recipe, which has no entry point that samples an OpenAI-compatible endpoint: rl_test_inference runs Atropos environments (process) and verifiers environments (verifiers' eval). Its first steps on Tinker are its test.`,
        { environment: req.environment.name, recipe: req.environment.recipe },
      );
    }
    const baseUrl = checkBaseUrl(req.base_url);
    const choice = { baseUrl, apiKeyEnv: req.api_key_env, baseUrlExplicit: req.base_url_explicit ?? false };
    const models = resolveTestModels(req.models).map((m) => ({ ...m, route: routeModel(m.id, choice, settings.tinkerOaiBaseUrl) }));
    const apiKey = models.some((m) => m.route.key.kind === 'env') ? this.apiKey(req.api_key_env) : undefined;
    const tinkerKey = models.some((m) => m.route.key.kind === 'tinker') ? tinkerApiKey(settings) : undefined;
    if (req.use_wandb && !settings.secrets.wandbApiKey) {
      throw new UserError('use_wandb needs WANDB_API_KEY in the server environment; set it or leave use_wandb false', { missing: 'WANDB_API_KEY' });
    }
    const onTinker = models.filter((m) => m.route.key.kind === 'tinker').map((m) => m.id);
    if (onTinker.length > 0) refuseSampling(settings, `an inference test of ${onTinker.join(', ')} on Tinker`, { models: onTinker, rollouts: req.num_steps * req.group_size, environment: req.environment.name });
    const running = this.jobs.running();
    if (running.length >= MAX_RUNNING_TESTS) {
      throw new UserError(`${running.length} inference tests are already running; wait for one with rl_test_inference({test_id})`, {
        running_tests: running.map((t) => t.id),
      });
    }
    if (apiKey !== undefined) redactor.add(apiKey);
    const { id, dir } = await this.jobs.create();
    const keys: TestKeys = {
      ...(apiKey !== undefined ? { endpoint: await writeKeyConfig(apiKey) } : {}),
      ...(tinkerKey !== undefined ? { tinker: await writeKeyConfig(tinkerKey) } : {}),
    };
    if (this.jobs.closed) {
      // close() ran while this start was on its way; nothing may start after it.
      await Promise.all([keys.endpoint?.remove(), keys.tinker?.remove()]);
      throw new UserError(SHUTTING_DOWN);
    }
    const test = new InferenceTest(
      id,
      dir,
      {
        environment: { name: req.environment.name, file_path: req.environment.file_path, ...(req.environment.vf_env_id !== undefined ? { vf_env_id: req.environment.vf_env_id } : {}) },
        num_steps: req.num_steps,
        group_size: req.group_size,
        models,
        base_url: baseUrl,
        server_type: req.server_type,
        timeout_seconds: req.timeout_seconds,
        use_wandb: req.use_wandb,
        server_entries: req.server_entries ?? 1,
      },
      { settings, redactor, logger, ...(onTinker.length > 0 ? { meter: samplingMeter(settings, { kind: 'inference_test', id, model: onTinker.join(', ') }, undefined, logger) } : {}) },
      keys,
    );
    this.jobs.add(test);
    logger.info({ test_id: id, environment: req.environment.name, models: test.params.models.map((m) => m.id), base_url: baseUrl }, 'inference test started');
    // Each model goes through a recording proxy that takes a moment to listen: a start answers once its first models run.
    await test.started;
    return test;
  }

  /** Starts a test and waits on it; cancelling `signal` before this returns cancels the test. */
  async startAndWait(req: InferenceTestRequest, opts: WaitOptions): Promise<TestAnswer> {
    const test = await this.start(req);
    const cancel = (): void => test.cancel('the call that started the test was cancelled');
    if (opts.signal?.aborted) cancel();
    opts.signal?.addEventListener('abort', cancel, { once: true });
    try {
      return testAnswer(await this.wait(test, opts));
    } finally {
      opts.signal?.removeEventListener('abort', cancel);
    }
  }

  /** Waits again on a test started earlier, or answers its result. */
  async waitFor(testId: string, opts: WaitOptions): Promise<TestAnswer> {
    const test = this.jobs.get(testId);
    if (test) return testAnswer(await this.wait(test, opts));
    const stored = await this.jobs.stored(testId);
    if (stored) return testAnswer(stored);
    if (await this.jobs.exists(testId)) {
      throw new UserError(`Inference test '${testId}' has no result: another server process sharing RL_HOME is running it, or the server running it stopped before it finished. Its logs are in ${this.jobs.dirOf(testId)}.`);
    }
    throw new UserError(`Inference test '${testId}' not found`, {
      recent_tests: this.jobs.list().map((t) => t.id),
      hint: 'Start a test with rl_test_inference() without test_id.',
    });
  }

  /** Cancels a test, run here or by another server sharing RL_HOME (../jobs/registry.ts). */
  cancel(testId: string, reason: string): Promise<CancelOutcome> {
    return this.jobs.cancel(testId, reason);
  }

  /** Tests of this server process, newest first. */
  list(): InferenceTest[] {
    return this.jobs.list();
  }

  /** Server exit: every running test is killed at once (no grace) and its result written. */
  close(): Promise<void> {
    return this.jobs.close();
  }

  private async wait(test: InferenceTest, opts: WaitOptions): Promise<TestOutput> {
    await waitOnJob(test, opts, MAX_WAIT_SECONDS);
    return test.output();
  }

  private apiKey(name: string): string {
    if (!ENDPOINT_KEY_NAME.test(name)) {
      throw new UserError(`api_key_env must name an endpoint key variable ending in _API_KEY (e.g. ${DEFAULT_API_KEY_ENV} or OPENAI_API_KEY); ${name} is never sent to an inference endpoint`, {
        expected: 'an environment variable name ending in _API_KEY',
      });
    }
    if (SERVICE_KEYS.has(name)) {
      throw new UserError(`api_key_env must not be ${name}: that key belongs to another service and is never sent to an inference endpoint`, {
        expected: `the name of the endpoint's key variable, e.g. ${DEFAULT_API_KEY_ENV}`,
      });
    }
    const { settings } = this.core;
    // OPENROUTER_API_KEY may also come from the RL_MCP_CONFIG file.
    const value = name === DEFAULT_API_KEY_ENV ? settings.secrets.openrouterApiKey : settings.processEnv[name];
    const reference = unexpandedReference(value);
    if (reference !== undefined) throw new UserError(placeholderMessage(name, reference), { placeholder: name });
    if (!value || value.trim() === '') {
      throw new UserError(`${name} not set. Required for inference testing: set it in the server's environment (the MCP client config's env block), or name another variable in api_key_env.`, {
        missing: name,
      });
    }
    return value;
  }
}
