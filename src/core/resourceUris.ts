/**
 * The rl:// URIs of the server's resources (served by src/resources), and the ui:// URI of its
 * dashboard view (src/server/apps.ts). Plain strings, so
 * the runtime and the tools can point at a log or a file with them (e.g. `logs` in
 * rl_start_training and rl_check_status).
 */
import type { RunProcess } from './files/home.js';

export const TEMPLATES = {
  run: 'rl://runs/{run_id}',
  runConfig: 'rl://runs/{run_id}/config',
  runLog: 'rl://runs/{run_id}/logs/{process}',
  runLogPage: 'rl://runs/{run_id}/logs/{process}{?offset,length}',
  environmentSource: 'rl://environments/{name}/source',
  inferenceTestFile: 'rl://inference-tests/{test_id}/{+file}',
  evaluationFile: 'rl://evaluations/{eval_id}/{+file}',
} as const;

export interface Page {
  offset: number;
  length: number;
}

const pageQuery = (page?: Page): string => (page ? `?offset=${page.offset}&length=${page.length}` : '');

export const runUri = (runId: string): string => `rl://runs/${runId}`;
export const runConfigUri = (runId: string): string => `rl://runs/${runId}/config`;
export const runLogUri = (runId: string, process: RunProcess, page?: Page): string => `rl://runs/${runId}/logs/${process}${pageQuery(page)}`;
export const environmentSourceUri = (name: string): string => `rl://environments/${encodeURIComponent(name)}/source`;
const fileUri = (kind: string, id: string, file: string, page?: Page): string =>
  `rl://${kind}/${encodeURIComponent(id)}/${file.split('/').map(encodeURIComponent).join('/')}${pageQuery(page)}`;
/** `file` is relative to the test's directory, `/`-separated. */
export const inferenceTestFileUri = (testId: string, file: string, page?: Page): string => fileUri('inference-tests', testId, file, page);
/** `file` is relative to the evaluation's directory, `/`-separated. */
export const evaluationFileUri = (evalId: string, file: string, page?: Page): string => fileUri('evaluations', evalId, file, page);
/** The training dashboard, an MCP Apps view linked from the run tools. */
export const DASHBOARD_URI = 'ui://rl-training/dashboard';
