/**
 * `rl://runs/{run_id}` (run.json) and `rl://runs/{run_id}/config` (the run's YAML), read from the
 * run directory so runs of any server process sharing RL_HOME are served. The run listing
 * (recent runs with their config and logs) lives here too: one directory scan for all of them.
 */
import type { Resource, Variables } from '@modelcontextprotocol/server';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { readRedactedSlice } from '../core/files/fileWindow.js';
import { runConfigUri, runLogUri, runUri, TEMPLATES } from '../core/resourceUris.js';
import { assertRunId, readRunJson, type RunSummary } from '../runtime/runs/registry/runFiles.js';
import { MAX_RUN_CONFIG_BYTES } from '../runtime/runs/registry/configFile.js';
import { RUN_FILES, RUN_PROCESSES, runLogFile } from '../core/files/home.js';
import { fileWatch } from '../core/files/watch.js';
import { variable, type ResourceContext, type ResourceKind } from './kind.js';
import { isDamaged } from '../runtime/runs/seams/record.js';

/** resources/list is not paginated by the SDK: only this many runs are listed. */
export const LISTED_RUNS = 50;

async function sizeOf(path: string): Promise<number | undefined> {
  return stat(path).then(
    (s) => s.size,
    () => undefined,
  );
}

async function runEntries(ctx: ResourceContext, run: RunSummary): Promise<Resource[]> {
  const id = run.run_id;
  const about = `${run.environment ?? 'unknown environment'}, ${run.status}${run.damaged ? ` (${run.damaged})` : ''}`;
  const dir = ctx.runs.dir(id);
  const logs = await Promise.all(
    RUN_PROCESSES.map(async (p): Promise<Resource> => ({
      uri: runLogUri(id, p),
      name: `${id}/${runLogFile(p)}`,
      description: `${p} log of run ${id} (last 256 KiB; page with ?offset=&length=)`,
      mimeType: 'text/plain',
      size: await sizeOf(join(dir, runLogFile(p))),
    })),
  );
  return [
    { uri: runUri(id), name: `${id}/${RUN_FILES.record}`, description: `Run ${id}: ${about}`, mimeType: 'application/json' },
    { uri: runConfigUri(id), name: `${id}/${RUN_FILES.config}`, description: `Config of run ${id}`, mimeType: 'application/yaml' },
    ...logs,
  ];
}

export const completeRunId = (ctx: ResourceContext) => async (prefix: string): Promise<string[]> =>
  (await ctx.runs.recent(100, prefix)).map((r) => r.run_id);

export const runIdOf = (vars: Variables): string => assertRunId(variable(vars, 'run_id'));

export function runRecordResource(ctx: ResourceContext): ResourceKind {
  return {
    name: 'run',
    template: TEMPLATES.run,
    title: 'Training run record',
    description:
      'run.json of a training run: status, phase, environment, W&B names, process ids, log paths. ' +
      `resources/list shows the ${LISTED_RUNS} most recent runs with their config and logs; rl_list_runs lists all.`,
    mimeType: 'application/json',
    async list() {
      const runs = await ctx.runs.recent(LISTED_RUNS);
      return (await Promise.all(runs.map((run) => runEntries(ctx, run)))).flat();
    },
    complete: { run_id: completeRunId(ctx) },
    async read(uri, vars) {
      const id = runIdOf(vars);
      const { text: json, entry } = await readRunJson(await ctx.runs.file(id, RUN_FILES.record), id);
      // A damaged record is reported as the run being unknown, never served as bad JSON.
      const text = isDamaged(entry)
        ? JSON.stringify({ run_id: id, status: 'unknown', error: `${entry.damaged}. The run's logs can still be read: ${runLogUri(id, 'trainer')}` })
        : ctx.runtime.redactor.redact(json);
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text }] };
    },
    async watch(vars) {
      const id = runIdOf(vars);
      await ctx.runs.existingFile(id, RUN_FILES.record);
      return {
        dir: ctx.runs.dir(id),
        file: RUN_FILES.record,
        signature: async () => {
          const { status, phase } = await ctx.runs.summary(id);
          return `${status}|${phase ?? ''}`;
        },
      };
    },
  };
}

export function runConfigResource(ctx: ResourceContext): ResourceKind {
  return {
    name: 'run-config',
    template: TEMPLATES.runConfig,
    title: 'Training run config (YAML)',
    description: 'The config.yaml a run was started with (env, openai, tinker sections), as written to its run directory.',
    mimeType: 'application/yaml',
    complete: { run_id: completeRunId(ctx) },
    async read(uri, vars) {
      const slice = await readRedactedSlice(await ctx.runs.file(runIdOf(vars), RUN_FILES.config), 0, MAX_RUN_CONFIG_BYTES, ctx.runtime.redactor);
      const cut = slice.size > MAX_RUN_CONFIG_BYTES ? `\n# ... cut: the file has ${slice.size} bytes, only the first ${MAX_RUN_CONFIG_BYTES} are shown\n` : '';
      return { contents: [{ uri: uri.href, mimeType: 'application/yaml', text: slice.text + cut }] };
    },
    async watch(vars) {
      const id = runIdOf(vars);
      await ctx.runs.existingFile(id, RUN_FILES.config);
      return fileWatch(join(ctx.runs.dir(id), RUN_FILES.config));
    },
  };
}
