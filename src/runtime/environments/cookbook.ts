/**
 * What RL_PYTHON has of tinker-cookbook and verifiers, read by python/cookbook_discover.py without
 * importing anything: the cookbook's RL recipes (`recipes/<name>/train.py` importing
 * `tinker_cookbook.rl`, with a `CLIConfig`) and the installed verifiers environments (top-level
 * modules defining `load_environment`), each offered as an environment of the `cookbook`
 * framework. The helper runs once; its answer stands while the files and folders it read from
 * (its stamps) are unchanged, so a listing costs a few stats; it is saved in RL_HOME's cache, so a
 * restarted server runs no Python either while nothing changed.
 */
import { mkdir, readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { writeAtomically } from '../../core/files/atomicFile.js';
import { cookbookCachePath } from '../../core/files/home.js';
import * as z from 'zod';
import { zString, zNumber, zInt, zBoolean } from '../../core/schemaLeaves.js';
import { childEnv } from '../../core/childEnv.js';
import { PYTHON_HELPERS_DIR } from '../../core/files/paths.js';
import type { Logger } from '../../core/logger.js';
import { loadExeca } from '../../core/onDemand.js';
import type { Settings } from '../../core/settings.js';
import type { DiscoveredEnvironment, RecipeLacks } from './report.js';

export const COOKBOOK_DISCOVER_SCRIPT = join(PYTHON_HELPERS_DIR, 'cookbook_discover.py');
const HELPER_TIMEOUT_MS = 60_000;

const FIELD = z.object({
  name: zString,
  type: zString,
  kind: z.enum(['int', 'float', 'bool', 'str', 'enum', 'list', 'dict', 'any']),
  nullable: zBoolean,
  enum: z.array(z.union([zString, zNumber])).optional(),
  items: z.enum(['int', 'float', 'bool', 'str']).optional(),
  default: z.json(),
  required: zBoolean,
  description: zString,
});
export type RecipeField = z.infer<typeof FIELD>;

const DATASET_BATCHES = z.object({ field: zString, value: zString, batches: zInt });

const RECIPE = z.object({
  name: zString,
  file: zString,
  rl: zBoolean,
  doc: zString.nullish(),
  config_class: zString.optional(),
  fields: z.array(FIELD).default([]),
  skipped_fields: z.array(zString).default([]),
  dataset_batches: z.array(DATASET_BATCHES).default([]),
  /** An RL recipe's imports RL_PYTHON cannot resolve, each with the tinker_cookbook extra that brings it. */
  lacks: z.array(z.object({ module: zString, at_load: zBoolean, extra: zString.optional() })).optional(),
  /** Why an RL recipe cannot train at all in the installed version (verifiers_rl's rollout function at v0.5.x). */
  cannot_train: zString.optional(),
  error: zString.optional(),
});
export type CookbookRecipe = z.infer<typeof RECIPE>;

const VERIFIERS_ENV = z.object({
  module: zString,
  file: zString,
  vf_env_id: zString,
  doc: zString.optional(),
  env_args: z.array(z.object({ name: zString, default: zString.optional() })),
});
export type VerifiersEnvironment = z.infer<typeof VERIFIERS_ENV>;

const ANSWER = z.object({
  cookbook: z.object({ dir: zString }).nullable(),
  cookbook_missing: zString.optional(),
  recipes: z.array(RECIPE),
  environments: z.array(VERIFIERS_ENV),
  stamps: z.array(z.tuple([zString, zNumber, zNumber])),
});

type Answer = z.infer<typeof ANSWER>;
const SAVED = z.object({ python: zString, answer: ANSWER });

function discoveryOf(answer: Answer): CookbookDiscovery {
  return {
    ...(answer.cookbook ? { dir: answer.cookbook.dir } : {}),
    ...(answer.cookbook_missing !== undefined ? { missing: answer.cookbook_missing } : {}),
    recipes: answer.recipes,
    environments: answer.environments,
    offered: offered(answer.recipes, answer.environments),
  };
}

export interface CookbookDiscovery {
  /** The installed tinker_cookbook package's directory, or why there is none. */
  dir?: string;
  missing?: string;
  /** Every recipe with a train.py, RL or not. */
  recipes: CookbookRecipe[];
  environments: VerifiersEnvironment[];
  /** The entries the listing offers: RL recipes, and one per verifiers environment. */
  offered: DiscoveredEnvironment[];
}

/** The recipe whose CLIConfig takes `vf_env_id` trains verifiers environments: it is offered through them. */
export const takesVerifiersEnvironment = (recipe: CookbookRecipe): boolean => recipe.fields.some((f) => f.name === 'vf_env_id');

/** A cookbook recipe samples through Tinker itself: the Atropos facts about server configs do not apply (answers leave them out). */
const NOT_ATROPOS = { managed_server: true, server_configs: 'list' } as const;

/** What a recipe lacks, and the one command that brings it: the cookbook's extras, then the modules no extra provides. */
export function lacksOf(missing: readonly { module: string; at_load: boolean; extra?: string }[]): RecipeLacks {
  const extras = [...new Set(missing.flatMap((m) => (m.extra !== undefined ? [m.extra] : [])))];
  const loose = [...new Set(missing.filter((m) => m.extra === undefined).map((m) => m.module.split('.')[0]!))];
  const commands = [...(extras.length > 0 ? [`pip install 'tinker-cookbook[${extras.join(',')}]'`] : []), ...(loose.length > 0 ? [`pip install ${loose.join(' ')}`] : [])];
  const named = (ms: typeof missing) => ms.map((m) => `${m.module}${m.extra !== undefined ? ` ([${m.extra}] extra)` : ''}`).join(', ');
  const atLoad = missing.filter((m) => m.at_load);
  const later = missing.filter((m) => !m.at_load);
  const says = [
    ...(atLoad.length > 0 ? [`It imports ${named(atLoad)} as it starts, which RL_PYTHON cannot: a start would fail on ModuleNotFoundError.`] : []),
    ...(later.length > 0 ? [`Its code imports ${named(later)} where it uses ${later.length > 1 ? 'them' : 'it'}, which RL_PYTHON cannot: a run that reaches that code fails there.`] : []),
  ];
  return {
    modules: missing.map((m) => m.module),
    ...(extras.length > 0 ? { extras } : {}),
    at_start: atLoad.length > 0,
    install: `${says.join(' ')} Install into RL_PYTHON: ${commands.join(' and ')}.`,
  };
}

function offered(recipes: readonly CookbookRecipe[], environments: readonly VerifiersEnvironment[]): DiscoveredEnvironment[] {
  const rl = recipes.filter((r) => r.rl && r.config_class === 'CLIConfig' && r.error === undefined);
  const verifiersRecipe = rl.find(takesVerifiersEnvironment);
  const fromRecipes = rl.filter((r) => r !== verifiersRecipe).map((r): DiscoveredEnvironment => ({
    name: r.name,
    class_name: 'CLIConfig',
    file_path: r.file,
    description: r.doc ?? `tinker-cookbook RL recipe ${r.name}`,
    config_class: 'CLIConfig',
    ...NOT_ATROPOS,
    framework: 'cookbook',
    recipe: r.name,
    ...(r.dataset_batches.length > 0 ? { dataset_batches: r.dataset_batches } : {}),
    ...(r.lacks !== undefined && r.lacks.length > 0 ? { lacks: lacksOf(r.lacks) } : {}),
    ...(r.cannot_train !== undefined ? { cannot_train: r.cannot_train } : {}),
  }));
  const fromVerifiers = verifiersRecipe === undefined ? [] : environments.map((e): DiscoveredEnvironment => ({
    name: e.vf_env_id,
    class_name: 'load_environment',
    file_path: e.file,
    description: e.doc ?? `verifiers environment ${e.vf_env_id}`,
    config_class: 'CLIConfig',
    ...NOT_ATROPOS,
    framework: 'cookbook',
    recipe: verifiersRecipe.name,
    vf_env_id: e.vf_env_id,
    ...(verifiersRecipe.cannot_train !== undefined ? { cannot_train: verifiersRecipe.cannot_train } : {}),
  }));
  return [...fromRecipes, ...fromVerifiers];
}

async function unchanged(stamps: readonly [string, number, number][]): Promise<boolean> {
  const now = await Promise.all(stamps.map(([path]) => stat(path).catch(() => undefined)));
  return stamps.every(([, mtime, size], i) => {
    const s = now[i];
    return s === undefined ? mtime === -1 : Math.floor(s.mtimeMs) === mtime && s.size === size;
  });
}

export class CookbookCatalog {
  private last?: { stamps: [string, number, number][]; answer: Answer };
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly settings: Settings,
    private readonly logger: Logger,
  ) {}

  /** The cookbook as installed now; never throws (an interpreter that cannot run is `missing`). */
  scan(): Promise<CookbookDiscovery> {
    const next = this.queue.then(() => this.scanNow());
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** The recipe that trains a cookbook environment, as last read. */
  async recipeOf(environment: Pick<DiscoveredEnvironment, 'recipe'>): Promise<CookbookRecipe | undefined> {
    return (await this.scan()).recipes.find((r) => r.name === environment.recipe);
  }

  /** A verifiers environment as last read. */
  async verifiersEnvironment(vfEnvId: string): Promise<VerifiersEnvironment | undefined> {
    return (await this.scan()).environments.find((e) => e.vf_env_id === vfEnvId);
  }

  private async scanNow(): Promise<CookbookDiscovery> {
    this.last ??= await this.loadSaved();
    if (this.last !== undefined && (await unchanged(this.last.stamps))) return discoveryOf(this.last.answer);
    const answer = await this.runHelper();
    if (answer === undefined) return { recipes: [], environments: [], offered: [], missing: `the discovery helper could not run with RL_PYTHON (${this.settings.python}); see server.log` };
    this.last = { stamps: answer.stamps, answer };
    await this.save(answer);
    this.logger.debug({ recipes: answer.recipes.length, environments: answer.environments.length }, 'cookbook discovered');
    return discoveryOf(answer);
  }

  /** The answer a server saved for this interpreter (a restarted server runs no Python while nothing changed); a damaged file is no answer. */
  private async loadSaved(): Promise<{ stamps: Answer['stamps']; answer: Answer } | undefined> {
    try {
      const saved = SAVED.parse(JSON.parse(await readFile(cookbookCachePath(this.settings.home), 'utf8')));
      return saved.python === this.settings.python ? { stamps: saved.answer.stamps, answer: saved.answer } : undefined;
    } catch {
      return undefined;
    }
  }

  private async save(answer: Answer): Promise<void> {
    try {
      const path = cookbookCachePath(this.settings.home);
      await mkdir(dirname(path), { recursive: true });
      writeAtomically(path, JSON.stringify({ python: this.settings.python, answer }));
    } catch (err) {
      this.logger.warn({ err }, 'could not save the cookbook discovery');
    }
  }

  private async runHelper(): Promise<Answer | undefined> {
    const { execa } = await loadExeca();
    // The interpreter's own sys.path (site-packages, .pth files, PYTHONPATH) is what a run imports from.
    const child = await execa(this.settings.python, ['-B', COOKBOOK_DISCOVER_SCRIPT], {
      env: childEnv(this.settings.processEnv),
      extendEnv: false,
      cwd: this.settings.home,
      stdin: 'ignore',
      timeout: HELPER_TIMEOUT_MS,
      reject: false,
      maxBuffer: 64 * 1024 * 1024,
    });
    const parsed = child.exitCode === 0 ? ANSWER.safeParse(safeJson(child.stdout)) : undefined;
    if (parsed?.success) return parsed.data;
    this.logger.warn({ python: this.settings.python, exit_code: child.exitCode, stderr: child.stderr.slice(-2000) }, 'cookbook discovery failed');
    return undefined;
  }
}

const CHECKED = z.object({ recipe: RECIPE.nullable() });

/** One recipe as RL_PYTHON has it now (a start's check: no cache); undefined when the helper could not run. */
export async function checkRecipe(settings: Settings, name: string, signal?: AbortSignal): Promise<CookbookRecipe | null | undefined> {
  const { execa } = await loadExeca();
  const child = await execa(settings.python, ['-B', COOKBOOK_DISCOVER_SCRIPT, '--recipe', name], {
    env: childEnv(settings.processEnv),
    extendEnv: false,
    cwd: settings.home,
    stdin: 'ignore',
    timeout: HELPER_TIMEOUT_MS,
    reject: false,
    ...(signal ? { cancelSignal: signal } : {}),
  });
  const parsed = child.exitCode === 0 ? CHECKED.safeParse(safeJson(child.stdout)) : undefined;
  return parsed?.success ? parsed.data.recipe : undefined;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
