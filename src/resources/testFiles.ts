/**
 * `rl://inference-tests/{test_id}/{+file}`: the per-model JSONL output and logs an inference test
 * wrote under RL_HOME/inference_tests/<test_id>/ (and, through the same factory,
 * `rl://evaluations/{eval_id}/{+file}`). Only output kinds are served (no YAML: a key
 * file must never be one click away, wherever it lives), secrets redacted, through the same
 * tail/paging window as run logs.
 */
import type { Resource, Variables } from '@modelcontextprotocol/server';
import { readdir, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { UserError } from '../core/errors.js';
import { inferenceTestsRoot, TEST_ID_PATTERN } from '../core/files/home.js';
import { inferenceTestFileUri, TEMPLATES, type Page } from '../core/resourceUris.js';
import { namedSubdirs, NotFoundError, realChildDir, realFileWithin, safeName, safeSegments } from '../core/files/safePath.js';
import { fileWatch } from '../core/files/watch.js';
import { completeFrom, variable, type ResourceContext, type ResourceKind } from './kind.js';
import { readWindow, requestedPage } from './window.js';

const MIME_TYPES: Record<string, string> = { '.jsonl': 'application/jsonl', '.json': 'application/json', '.log': 'text/plain', '.txt': 'text/plain' };
/** resources/list is not paginated by the SDK: the most recent tests, a few files each. */
export const LISTED_TESTS = 10;
const LISTED_FILES_PER_TEST = 20;
const LISTED_DEPTH = 2;

/** One kind of job directory whose output files are served. */
export interface JobFilesSpec {
  name: string;
  template: string;
  title: string;
  description: string;
  root: string;
  /** The URI variable naming the job, e.g. `test_id`. */
  idVariable: string;
  /** How messages name a job, e.g. `inference test`, and one of them, e.g. `a test`. */
  what: string;
  oneJob: string;
  uri: (id: string, file: string, page?: Page) => string;
  /** `resources/list` names: `<listPrefix>/<id>/<file>`. */
  listPrefix: string;
  /** What to do when the job does not exist. */
  notFoundHint: string;
}

interface TestFile {
  testId: string;
  /** Relative to the test directory, `/`-separated, decoded. */
  file: string;
  path: string;
  mimeType: string;
  /** The test directory's real path: the file must resolve inside it. */
  realTest: string;
}

function mimeTypeOf(file: string): string | undefined {
  return MIME_TYPES[extname(file).toLowerCase()];
}

/** Served files of one test, breadth first, bounded. */
async function filesOf(testDir: string): Promise<string[]> {
  const found: string[] = [];
  let level = [''];
  for (let depth = 0; depth < LISTED_DEPTH && level.length > 0; depth++) {
    const next: string[] = [];
    for (const rel of level) {
      const entries = await readdir(join(testDir, rel), { withFileTypes: true }).catch(() => []);
      for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
        const child = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) next.push(child);
        else if (e.isFile() && mimeTypeOf(e.name) && found.length < LISTED_FILES_PER_TEST) found.push(child);
      }
    }
    level = next;
  }
  return found;
}

/** The file a URI names, checked: a served kind, inside a test that exists. It need not exist yet. */
async function locate(spec: JobFilesSpec, vars: Variables): Promise<TestFile> {
  const { root, what } = spec;
  const testId = safeName(variable(vars, spec.idVariable), `${what} id`, TEST_ID_PATTERN, '8 lowercase hex characters');
  const segments = safeSegments(variable(vars, 'file'), `${what} file`);
  const file = segments.join('/');
  const mimeType = mimeTypeOf(file);
  if (!mimeType) {
    throw new UserError(`Refused ${what} file '${file}': only ${Object.keys(MIME_TYPES).join(', ')} files of ${spec.oneJob} are served.`, { served: Object.keys(MIME_TYPES) });
  }
  const realTest = realChildDir(root, testId, what);
  if (realTest === undefined) {
    throw new NotFoundError(`${what[0]!.toUpperCase()}${what.slice(1)} '${testId}' not found in ${root}. ${spec.notFoundHint}`, { [spec.idVariable]: testId });
  }
  return { testId, file, path: join(root, testId, ...segments), mimeType, realTest };
}

/** The served files of the most recent tests, newest test first. */
async function recentTestFiles(spec: JobFilesSpec): Promise<Resource[]> {
  const { root } = spec;
  const ids = await namedSubdirs(root, TEST_ID_PATTERN);
  const dated = await Promise.all(ids.map(async (id) => ({ id, mtime: await stat(join(root, id)).then((s) => s.mtimeMs, () => 0) })));
  const recent = dated.sort((a, b) => b.mtime - a.mtime).slice(0, LISTED_TESTS);
  const listed = await Promise.all(
    recent.map(async ({ id }) =>
      (await filesOf(join(root, id))).map((file): Resource => ({
        uri: spec.uri(id, file),
        name: `${spec.listPrefix}/${id}/${file}`,
        mimeType: mimeTypeOf(file),
      })),
    ),
  );
  return listed.flat();
}

export function inferenceTestFileResource(ctx: ResourceContext): ResourceKind {
  return jobFilesResource(ctx, {
    name: 'inference-test-file',
    template: TEMPLATES.inferenceTestFile,
    title: 'Inference test output',
    description: 'A file written by rl_test_inference: per-model JSONL groups and process logs, result.json. Long files show their last 256 KiB; page with ?offset=&length=.',
    root: inferenceTestsRoot(ctx.runtime.settings.home),
    idVariable: 'test_id',
    what: 'inference test',
    oneJob: 'a test',
    uri: inferenceTestFileUri,
    listPrefix: 'inference_tests',
    notFoundHint: 'Start one with rl_test_inference, or see resources/list for recent tests.',
  });
}

export function jobFilesResource(ctx: ResourceContext, spec: JobFilesSpec): ResourceKind {
  const { root, what } = spec;
  return {
    name: spec.name,
    template: spec.template,
    title: spec.title,
    description: spec.description,
    mimeType: 'text/plain',
    list: () => recentTestFiles(spec),
    complete: { [spec.idVariable]: async (prefix: string) => completeFrom(await namedSubdirs(root, TEST_ID_PATTERN), prefix) },
    async read(uri, vars) {
      const found = await locate(spec, vars);
      const page = requestedPage(uri);
      const real = realFileWithin(found.realTest, found.path, `${what} file ${found.file}`);
      if (real === undefined) {
        throw new NotFoundError(`'${found.file}' not found in ${what} ${found.testId}: it may not be written yet. resources/list shows its files.`, {
          [spec.idVariable]: found.testId,
        });
      }
      const window = await readWindow(real, page, (p) => spec.uri(found.testId, found.file, p), ctx.runtime.redactor);
      return { contents: [{ uri: uri.href, mimeType: found.mimeType, text: window.text, _meta: window.meta }] };
    },
    async watch(vars) {
      const found = await locate(spec, vars);
      realFileWithin(found.realTest, found.path, `${what} file ${found.file}`);
      return fileWatch(found.path);
    },
  };
}
