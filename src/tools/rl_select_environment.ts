/** rl_select_environment: choose the environment to train and load its config (Hermes tool 2). */
import * as z from 'zod';
import { zString, zInt, zBoolean } from '../core/schemaLeaves.js';
import { SERVER_CONFIGS_SHAPES, TINKER_PROBLEM_CODES, tinkerFitOf } from '../runtime/environments/tinkerReadiness.js';
import { frameworkOfEnvironment } from '../runtime/environments/report.js';
import { FRAMEWORKS } from '../runtime/runs/seams/record.js';
import { defineTool } from './define.js';

/** An environment as rl_list_environments names it; rl_start_training and rl_test_inference take it too. */
export const environmentName = zString
  .trim()
  .min(1)
  .max(128)
  .regex(/^(?!.*\.\.)[^/\\\u0000]+$/, "must be an environment name from rl_list_environments (e.g. \"gsm8k\"), not a path: '/', '\\', '..' and NUL are not allowed")
  .describe('A name from rl_list_environments (or its class name; cookbook:NAME / atropos:NAME when both frameworks use it)');

export const rlSelectEnvironment = defineTool({
  name: 'rl_select_environment',
  title: 'Select an RL environment',
  description:
    "Selects the environment to train (a name from rl_list_environments) and resets the config to its defaults. Saved in RL_HOME for every server sharing it. Next: rl_get_current_config, then rl_edit_config as needed.",
  input: z
    .object({
      name: environmentName,
    })
    .strict(),
  output: z.object({
    message: zString,
    environment: zString,
    file_path: zString,
    class_name: zString,
    config_class: zString,
    configurable_fields: zInt.describe('How many fields rl_edit_config can change'),
    locked_fields: zInt,
    introspection: z.enum(['import', 'static']).describe('import: values from config_init(); static: read from source because the import failed'),
    import_error: zString.optional(),
    framework: z.enum(FRAMEWORKS).describe('atropos or cookbook (a tinker-cookbook recipe, or a verifiers environment trained by verifiers_rl)'),
    recipe: zString.optional().describe('cookbook: the recipe that trains it'),
    vf_env_id: zString.optional().describe('cookbook: the verifiers environment id'),
    managed_server: zBoolean.optional().describe('Atropos: its code samples through managed_server, which the Tinker trainer needs'),
    server_configs: z.enum(SERVER_CONFIGS_SHAPES).optional().describe("Atropos: config_init()'s server configs: a list, one APIServerConfig, a bare ServerBaseline"),
    tinker_problems: z
      .array(z.object({ code: z.enum(TINKER_PROBLEM_CODES), blocking: zBoolean, message: zString, fix: zString }))
      .describe('What stops it training on Tinker (blocking: a run would fail after paid rollouts) or what the server works around; empty when none'),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler({ name }, { runtime, signal }) {
    const { config, notes } = await runtime.selection.select(name, signal);
    const { environment, introspection, import_error, tinker } = config;
    const { tinker_problems: problems, ...facts } = tinkerFitOf(environment, tinker);
    const blocking = problems.filter((p) => p.blocking).map((p) => `It cannot train on Tinker as it is: ${p.message} Fix: ${p.fix}`);
    const editable = Object.keys(config.values).length;
    const source =
      introspection === 'import'
        ? 'values from config_init()'
        : import_error === undefined
          ? `fields and defaults of its recipe's ${config.config_class}, read from source`
          : `could not import it (${import_error}), so the fields were read from its source; install the missing packages into RL_PYTHON before training`;
    return {
      message: [
        `Selected environment: ${environment.name} (${editable} configurable fields; ${source}).`,
        ...blocking,
        ...notes,
        'Next: rl_get_current_config() to review, rl_edit_config(field, value) to change.',
      ].join(' '),
      environment: environment.name,
      file_path: environment.file_path,
      class_name: environment.class_name,
      config_class: config.config_class,
      configurable_fields: editable,
      locked_fields: config.fields.length - editable,
      introspection,
      ...(import_error !== undefined ? { import_error } : {}),
      framework: frameworkOfEnvironment(environment),
      ...(environment.recipe !== undefined ? { recipe: environment.recipe } : {}),
      ...(environment.vf_env_id !== undefined ? { vf_env_id: environment.vf_env_id } : {}),
      ...facts,
      tinker_problems: problems,
    };
  },
});
