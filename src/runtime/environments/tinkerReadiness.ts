/**
 * Whether an environment can train on Tinker as it is, from two facts read from its code (by
 * discovery from source, or at selection by importing it): does it sample through
 * `managed_server`, and what does `config_init` return as its server configs. Pure, so a start
 * refusal, the doctor and the tools all judge the same way.
 */

/**
 * `config_init()`'s second value: a list of server configs, one `APIServerConfig`, a bare
 * `ServerBaseline` (BaseEnv's own default), or something the reader could not tell.
 */
export const SERVER_CONFIGS_SHAPES = ['list', 'single', 'baseline', 'unknown'] as const;
export type ServerConfigsShape = (typeof SERVER_CONFIGS_SHAPES)[number];

export interface TinkerFacts {
  /** Its classes, or the helper modules they import, call `server.managed_server(...)`. */
  managed_server: boolean;
  server_configs: ServerConfigsShape;
}

export const TINKER_PROBLEM_CODES = ['no_managed_server', 'single_server_config'] as const;
export type TinkerProblemCode = (typeof TINKER_PROBLEM_CODES)[number];

export interface TinkerProblem {
  code: TinkerProblemCode;
  /** True when a run would fail (after paid rollouts); false when the server works around it. */
  blocking: boolean;
  /** What happens upstream. */
  message: string;
  /** What to do about it. */
  fix: string;
}

/** The operator setting that lets an environment without managed_server start anyway. */
export const ALLOW_UNMANAGED_SETTING = 'RL_ALLOW_UNMANAGED_ENVIRONMENTS';

const PROBLEMS: Record<TinkerProblemCode, TinkerProblem> = {
  no_managed_server: {
    code: 'no_managed_server',
    blocking: true,
    message:
      'The environment never samples through managed_server (self.server.managed_server(...)), so the groups it sends carry no inference_logprobs. ' +
      "The tinker-atropos trainer reads item[\"inference_logprobs\"] and fails at step 0 with \"Error in step 0: 'NoneType' object is not subscriptable\", " +
      'after setup and a first batch of paid Tinker rollouts.',
    fix:
      'Port its rollouts to `async with self.server.managed_server(tokenizer=self.tokenizer) as managed:` and build the group\'s tokens, masks and ' +
      'inference_logprobs from `managed.get_state()["nodes"]`, as tinker-atropos\' environments/gsm8k_tinker.py does. ' +
      `An operator who knows the environment does this another way can set ${ALLOW_UNMANAGED_SETTING} to train it anyway.`,
  },
  single_server_config: {
    code: 'single_server_config',
    blocking: false,
    message:
      "config_init returns one server config (an APIServerConfig, or a bare ServerBaseline as BaseEnv's default does), not a list. atroposlib treats a " +
      'single config as a template and sends every request to http://localhost:9004..9007/v1, whatever endpoint the run gives, unless the run\'s ' +
      '`openai:` section lists two or more servers.',
    fix: 'Nothing to do: this server writes two `openai:` entries pointing at the trainer, so the environment samples from the trainer.',
  },
};

/**
 * How many `openai:` entries a run's YAML needs for the environment to use them as written:
 * atroposlib takes a YAML list of two or more as is whatever config_init returns, while a single
 * entry is merged into a single default config and then spread to localhost:9004..9007. Two
 * entries are also the safe answer when the shape is not known.
 */
export function serverEntriesNeeded(shape: ServerConfigsShape): 1 | 2 {
  return shape === 'list' ? 1 : 2;
}

/** The problems an environment with these facts has on Tinker, blocking ones first. */
export function tinkerProblems(facts: TinkerFacts): TinkerProblem[] {
  const problems: TinkerProblem[] = [];
  if (!facts.managed_server) problems.push(PROBLEMS.no_managed_server);
  if (facts.server_configs === 'single' || facts.server_configs === 'baseline') problems.push(PROBLEMS.single_server_config);
  return problems.map((p) => ({ ...p }));
}

/**
 * What answers say of an environment's fit for Tinker: an Atropos environment's facts and
 * problems; a cookbook environment trains on Tinker by its recipe's own code, so it has neither.
 */
export function tinkerFitOf(environment: { framework?: string }, facts: TinkerFacts): Partial<TinkerFacts> & { tinker_problems: TinkerProblem[] } {
  if (environment.framework === 'cookbook') return { tinker_problems: [] };
  return { ...facts, tinker_problems: tinkerProblems(facts) };
}

/** The description of each code, for answers that list codes per environment and explain them once. */
export function tinkerProblemDetails(codes: Iterable<TinkerProblemCode>): Partial<Record<TinkerProblemCode, Omit<TinkerProblem, 'code'>>> {
  const details: Partial<Record<TinkerProblemCode, Omit<TinkerProblem, 'code'>>> = {};
  for (const code of codes) {
    const { code: _, ...rest } = PROBLEMS[code];
    details[code] = rest;
  }
  return details;
}
