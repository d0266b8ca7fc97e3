/** rl_list_environments: the trainable environments found by static discovery (Hermes tool 1). */
import { z } from 'zod';
import { environmentDirs } from '../../domain/environments/catalog.js';
import { defineTool } from './define.js';

/** Side lists (skipped files, abstract bases, ambiguous names) are for diagnosis: a screenful is enough. */
const MAX_SIDE_ENTRIES = 25;

const TIPS = [
  'Select one with rl_select_environment(name); then rl_get_current_config shows its fields.',
  'Read file_path to understand an environment before training: setup() loads the dataset, get_next_item() yields prompts, score()/collect_trajectories() compute the rewards.',
];

const environment = z.object({
  name: z.string(),
  class_name: z.string(),
  file_path: z.string(),
  description: z.string(),
  config_class: z.string(),
});

function bounded<T>(list: readonly T[]): { shown: T[]; omitted: number } {
  return { shown: list.slice(0, MAX_SIDE_ENTRIES), omitted: Math.max(0, list.length - MAX_SIDE_ENTRIES) };
}

export const rlListEnvironments = defineTool({
  name: 'rl_list_environments',
  title: 'List RL environments',
  description:
    'List the Atropos environments available for training (found by reading the source, never importing it; new and edited files are seen at once). ' +
    'Each has a name for rl_select_environment and a file_path to read. Also reports files that do not parse (skipped), names used twice (duplicates, with the ' +
    'select_as value that picks each) and abstract bases left out.',
  input: z.object({}).strict(),
  output: z.object({
    environments: z.array(environment),
    count: z.number().int(),
    tips: z.array(z.string()),
    skipped: z.array(z.object({ file_path: z.string(), reason: z.string() })).describe('Files that could not be parsed, one-line reason each'),
    duplicates: z
      .array(z.object({ name: z.string(), file_paths: z.array(z.string()), select_as: z.array(z.string()) }))
      .describe('Names used by several environments: pass the select_as value to rl_select_environment instead'),
    abstract: z.array(z.object({ class_name: z.string(), file_path: z.string() })).describe('Base classes without a name that other environments extend; not trainable'),
    searched: z.array(z.string()).describe('Directories scanned'),
    omitted: z
      .object({ skipped: z.number().int(), duplicates: z.number().int(), abstract: z.number().int() })
      .optional()
      .describe(`Entries left out of the side lists (each shows at most ${MAX_SIDE_ENTRIES})`),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async handler(_args, { runtime }) {
    const report = await runtime.environments.scan();
    const searched = environmentDirs(runtime.settings);
    const skipped = bounded(report.skipped);
    const duplicates = bounded(report.duplicates);
    const abstract = bounded(report.abstract);
    const tips = [...TIPS];
    if (report.environments.length === 0) {
      tips.unshift(`No environments found in ${searched.join(', ')}. Set TINKER_ATROPOS_ROOT to a tinker-atropos checkout or add folders to RL_ENVIRONMENTS_DIRS.`);
    }
    if (report.duplicates.length > 0) tips.push('Some names are used twice (see duplicates): select those by their select_as value.');
    const omitted = { skipped: skipped.omitted, duplicates: duplicates.omitted, abstract: abstract.omitted };
    return {
      environments: report.environments,
      count: report.environments.length,
      tips,
      skipped: skipped.shown,
      duplicates: duplicates.shown,
      abstract: abstract.shown,
      searched,
      ...(Object.values(omitted).some((n) => n > 0) ? { omitted } : {}),
    };
  },
});
