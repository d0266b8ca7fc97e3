/**
 * `rl://runs/{run_id}/logs/{process}`: the api, trainer or env log of a run, secrets redacted.
 * The last 256 KiB by default; `?offset=N&length=M` pages through the rest. The paged form is
 * registered as its own template (first, so it matches before the plain one) to show clients
 * the query in resources/templates/list; both read the page from the URI's query.
 */
import type { Variables } from '@modelcontextprotocol/server';
import { join } from 'node:path';
import { UserError } from '../core/errors.js';
import { runLogUri, TEMPLATES } from '../core/resourceUris.js';
import { RUN_PROCESSES, runLogFile, type RunProcess } from '../core/files/home.js';
import { fileWatch } from '../core/files/watch.js';
import { completeFrom, variable, type ResourceContext, type ResourceKind } from './kind.js';
import { completeRunId, runIdOf } from './runs.js';
import { DEFAULT_WINDOW_BYTES, readWindow, requestedPage } from './window.js';

function logOf(vars: Variables): { runId: string; process: RunProcess } {
  const runId = runIdOf(vars);
  const process = variable(vars, 'process');
  if (!(RUN_PROCESSES as readonly string[]).includes(process)) {
    throw new UserError(`Unknown process '${process.slice(0, 100)}': a run has the logs ${RUN_PROCESSES.join(', ')} (e.g. ${runLogUri(runId, 'trainer')}).`, {
      available: [...RUN_PROCESSES],
    });
  }
  return { runId, process: process as RunProcess };
}

function runLogResource(ctx: ResourceContext, name: string, template: string, description: string): ResourceKind {
  return {
    name,
    template,
    title: 'Training run log',
    description,
    mimeType: 'text/plain',
    complete: { run_id: completeRunId(ctx), process: async (prefix) => completeFrom(RUN_PROCESSES, prefix) },
    async read(uri, vars) {
      const { runId, process } = logOf(vars);
      const page = requestedPage(uri);
      const path = await ctx.runs.file(runId, runLogFile(process));
      const window = await readWindow(path, page, (p) => runLogUri(runId, process, p), ctx.runtime.redactor);
      return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: window.text, _meta: window.meta }] };
    },
    async watch(vars) {
      const { runId, process } = logOf(vars);
      await ctx.runs.existingFile(runId, runLogFile(process));
      return fileWatch(join(ctx.runs.dir(runId), runLogFile(process)));
    },
  };
}

/** The paged form first: the plain template's `{process}` would also match a query. */
export function runLogResources(ctx: ResourceContext): ResourceKind[] {
  return [
    runLogResource(
      ctx,
      'run-log-page',
      TEMPLATES.runLogPage,
      `A byte range of a run log, for paging back through a long one: offset from 0, length up to 1 MiB. Pages end at a line end; a first line names the previous and next pages.`,
    ),
    runLogResource(
      ctx,
      'run-log',
      TEMPLATES.runLog,
      `A run's api, trainer or env log, secrets redacted: the last ${DEFAULT_WINDOW_BYTES / 1024} KiB (a first line says when earlier bytes are cut and how to page). ` +
        'Subscribe to be told when it grows.',
    ),
  ];
}
