/**
 * `rl://environments/{name}/source`: the Python file of a discovered environment. Only files
 * discovery reported are served, so the name is looked up, never turned into a path.
 */
import type { Variables } from '@modelcontextprotocol/server';
import { readRedactedSlice } from '../core/files/fileWindow.js';
import { environmentSourceUri, TEMPLATES } from '../core/resourceUris.js';
import { safeName } from '../core/files/safePath.js';
import { fileWatch } from '../core/files/watch.js';
import { completeFrom, variable, type ResourceContext, type ResourceKind } from './kind.js';

/** resources/list is not paginated by the SDK: only this many environments are listed. */
export const LISTED_ENVIRONMENTS = 100;
const MAX_SOURCE_BYTES = 1024 * 1024;
/** Names are looked up in the catalog, never used as paths: this only bounds them. */
const ENVIRONMENT_NAME = /^[^\u0000-\u001f]{1,200}$/;

export function environmentSourceResource(ctx: ResourceContext): ResourceKind {
  const catalog = ctx.runtime.environments;
  const resolve = async (vars: Variables) =>
    catalog.resolve(safeName(variable(vars, 'name'), 'environment name', ENVIRONMENT_NAME, 'a discovered environment name (see rl_list_environments)'));
  return {
    name: 'environment-source',
    template: TEMPLATES.environmentSource,
    title: 'Environment source (Python)',
    description: 'The Python file defining a discovered Atropos environment (rl_list_environments names them).',
    mimeType: 'text/x-python',
    async list() {
      // One failing part must not empty the whole of resources/list: discovery reports its own errors in rl_list_environments.
      const report = await catalog.scan().catch((err: unknown) => {
        ctx.runtime.logger.warn({ err }, 'environments left out of resources/list');
        return { environments: [] };
      });
      return report.environments.slice(0, LISTED_ENVIRONMENTS).map((env) => ({
        uri: environmentSourceUri(env.name),
        name: `${env.name}.py`,
        description: `${env.class_name} in ${env.file_path}${env.description ? `: ${env.description}` : ''}`,
        mimeType: 'text/x-python',
      }));
    },
    complete: { name: async (prefix) => completeFrom((await catalog.scan()).environments.map((e) => e.name), prefix) },
    async read(uri, vars) {
      const env = await resolve(vars);
      const slice = await readRedactedSlice(env.file_path, 0, MAX_SOURCE_BYTES, ctx.runtime.redactor);
      const cut = slice.size > MAX_SOURCE_BYTES ? `\n# ... cut: the file has ${slice.size} bytes, only the first ${MAX_SOURCE_BYTES} are shown\n` : '';
      return { contents: [{ uri: uri.href, mimeType: 'text/x-python', text: slice.text + cut }] };
    },
    async watch(vars) {
      return fileWatch((await resolve(vars)).file_path);
    },
  };
}
