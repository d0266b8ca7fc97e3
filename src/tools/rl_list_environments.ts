/** rl_list_environments: the trainable environments found by static discovery (Hermes tool 1). */
import * as z from 'zod';
import { zString, zInt, zBoolean } from '../core/schemaLeaves.js';
import { environmentDirs } from '../runtime/environments/catalog.js';
import { environmentPage, frameworkOfEnvironment, type DiscoveredEnvironment } from '../runtime/environments/report.js';
import { FRAMEWORKS } from '../runtime/runs/seams/record.js';
import { SERVER_CONFIGS_SHAPES, TINKER_PROBLEM_CODES, tinkerFitOf, tinkerProblemDetails } from '../runtime/environments/tinkerReadiness.js';
import { defineTool } from './define.js';

/** Side lists (skipped files, abstract bases, ambiguous names) are for diagnosis: a screenful is enough. */
const MAX_SIDE_ENTRIES = 25;
/** The environments of one answer: with the side lists and problem details, well under 10k tokens. */
const MAX_PAGE_CHARS = 24_000;

const TIPS = [
  'Select one with rl_select_environment(name); then rl_get_current_config shows its fields.',
  'Read file_path to understand an environment before training: setup() loads the dataset, get_next_item() yields prompts, score()/collect_trajectories() compute the rewards.',
];

const environment = z.object({
  name: zString,
  framework: z.enum(FRAMEWORKS).describe('atropos: an Atropos environment (three processes); cookbook: a tinker-cookbook RL recipe, or a verifiers environment trained by its verifiers_rl recipe'),
  recipe: zString.optional().describe('cookbook: the recipe that trains it (python -m tinker_cookbook.recipes.<recipe>.train)'),
  vf_env_id: zString.optional().describe('cookbook: the verifiers environment id verifiers_rl loads'),
  class_name: zString,
  file_path: zString,
  description: zString,
  config_class: zString,
  managed_server: zBoolean.optional().describe('Atropos: its code samples through managed_server, which the Tinker trainer needs (read from source)'),
  server_configs: z.enum(SERVER_CONFIGS_SHAPES).exclude(['baseline']).optional().describe('Atropos: what config_init returns as server configs (read from source; a ServerBaseline() counts as single)'),
  tinker_problems: z.array(z.enum(TINKER_PROBLEM_CODES)).describe('What stops it training on Tinker, or what the server works around for it: codes explained once in problem_details; empty when none'),
  lacks: z
    .object({ modules: z.array(zString), extras: z.array(zString).optional(), at_start: zBoolean.describe('A start fails (refused); else a run fails when the code importing them runs'), install: zString })
    .optional()
    .describe("A cookbook recipe's imports RL_PYTHON cannot resolve (an optional extra not installed): it cannot start until they are installed"),
  cannot_train: zString.optional().describe("Why this cookbook recipe cannot train in RL_PYTHON's tinker-cookbook version: a start is refused"),
});

/** An environment as the listing shows it: a cookbook one without the Atropos-only facts. */
function listed(env: DiscoveredEnvironment): z.input<typeof environment> {
  const { managed_server, server_configs, framework: _framework, ...rest } = env;
  const { tinker_problems, ...facts } = tinkerFitOf(env, { managed_server, server_configs });
  return { ...rest, framework: frameworkOfEnvironment(env), ...(facts as { managed_server?: boolean; server_configs?: typeof server_configs }), tinker_problems: tinker_problems.map((p) => p.code) };
}

const problemDetail = z.object({ blocking: zBoolean, message: zString, fix: zString });

function bounded<T>(list: readonly T[]): { shown: T[]; omitted: number } {
  return { shown: list.slice(0, MAX_SIDE_ENTRIES), omitted: Math.max(0, list.length - MAX_SIDE_ENTRIES) };
}

export const rlListEnvironments = defineTool({
  name: 'rl_list_environments',
  title: 'List RL environments',
  description:
    "Lists the environments you can train: Atropos environments and tinker-cookbook RL recipes and verifiers environments (framework). Call it first, then rl_select_environment(name). Read-only. Pages: pass next_offset back as offset, or narrow with search. Also lists unparsable files, duplicate names (pick with select_as) and abstract bases.",
  input: z
    .object({
      search: zString.min(1).max(200).optional().describe('Only environments whose name, class or description contains this (case-insensitive)'),
      limit: zInt.min(1).max(100).default(50).describe('Environments per page (fewer when they would make a long answer)'),
      offset: zInt.min(0).default(0).describe('next_offset of the previous page'),
      framework: z.enum(FRAMEWORKS).optional().describe('Only this framework\'s environments: atropos, or cookbook (tinker-cookbook recipes and verifiers environments)'),
    })
    .strict(),
  output: z.object({
    environments: z.array(environment),
    count: zInt.describe('Environments in this answer'),
    total: zInt.describe('Environments matching (all found, without search)'),
    next_offset: zInt.optional().describe('Pass as offset for the next page'),
    tips: z.array(zString),
    skipped: z.array(z.object({ file_path: zString, reason: zString })).describe('Files that could not be parsed, one-line reason each'),
    duplicates: z
      .array(z.object({ name: zString, file_paths: z.array(zString), select_as: z.array(zString) }))
      .describe('Names used by several environments: pass the select_as value to rl_select_environment instead'),
    abstract: z.array(z.object({ class_name: zString, file_path: zString })).describe('Base classes without a name that other environments extend; not trainable'),
    searched: z.array(zString).describe('Directories scanned'),
    cookbook: z
      .object({ dir: zString.optional(), missing: zString.optional() })
      .optional()
      .describe("RL_PYTHON's tinker_cookbook package (its recipes are listed), or why it has none"),
    problem_details: z
      .partialRecord(z.enum(TINKER_PROBLEM_CODES), problemDetail)
      .describe('What each tinker_problems code means: what happens upstream and what to do; blocking problems make a run fail after paid rollouts'),
    omitted: z
      .object({ skipped: zInt, duplicates: zInt, abstract: zInt })
      .optional()
      .describe(`Entries left out of the side lists (each shows at most ${MAX_SIDE_ENTRIES})`),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler({ search, limit, offset, framework }, { runtime }) {
    const report = await runtime.environments.scan();
    const searched = [...environmentDirs(runtime.settings), ...(report.cookbook?.dir !== undefined ? [`${report.cookbook.dir}/recipes`] : [])];
    const skipped = bounded(report.skipped);
    const duplicates = bounded(report.duplicates);
    const abstract = bounded(report.abstract);
    const all = framework === undefined ? report.environments : report.environments.filter((e) => frameworkOfEnvironment(e) === framework);
    const page = environmentPage(all, { offset, limit, search }, MAX_PAGE_CHARS);
    const environments = page.shown.map(listed);
    const tips = [...TIPS];
    const blocked = environments.filter((e) => e.tinker_problems.includes('no_managed_server')).length;
    if (blocked > 0) tips.push(`${blocked} of these cannot train on Tinker as they are (tinker_problems: no_managed_server; see problem_details).`);
    if (report.environments.length === 0) {
      tips.unshift(`No environments found in ${searched.join(', ')}. Set TINKER_ATROPOS_ROOT to a tinker-atropos checkout or add folders to RL_ENVIRONMENTS_DIRS.`);
    }
    if (framework === 'cookbook' && all.length === 0) {
      tips.unshift(`No cookbook environments: ${report.cookbook?.missing ?? "RL_PYTHON's tinker_cookbook has no RL recipe and no verifiers environment is installed"}. Install tinker-cookbook into RL_PYTHON (and verifiers environments with prime env install owner/name).`);
    }
    if (report.duplicates.length > 0) tips.push('Some names are used twice (see duplicates): select those by their select_as value.');
    const omitted = { skipped: skipped.omitted, duplicates: duplicates.omitted, abstract: abstract.omitted };
    if (page.next_offset !== undefined) tips.push(`${page.total} environments match; this answer shows ${environments.length}: call again with offset ${page.next_offset} for more, or narrow with search.`);
    return {
      environments,
      count: environments.length,
      total: page.total,
      ...(page.next_offset !== undefined ? { next_offset: page.next_offset } : {}),
      tips,
      skipped: skipped.shown,
      duplicates: duplicates.shown,
      abstract: abstract.shown,
      searched,
      ...(report.cookbook !== undefined ? { cookbook: report.cookbook } : {}),
      problem_details: tinkerProblemDetails(new Set(environments.flatMap((e) => e.tinker_problems))),
      ...(Object.values(omitted).some((n) => n > 0) ? { omitted } : {}),
    };
  },
});
