/** `rl://evaluations/{eval_id}/{+file}`: what rl_evaluate wrote (result.json, per-model rollouts, samples, metrics, logs). */
import { evaluationsRoot } from '../core/files/home.js';
import { evaluationFileUri, TEMPLATES } from '../core/resourceUris.js';
import type { ResourceContext, ResourceKind } from './kind.js';
import { jobFilesResource } from './testFiles.js';

export function evaluationFileResource(ctx: ResourceContext): ResourceKind {
  return jobFilesResource(ctx, {
    name: 'evaluation-file',
    template: TEMPLATES.evaluationFile,
    title: 'Evaluation output',
    description:
      'A file written by rl_evaluate: result.json, each model\'s rollouts (.rollouts.jsonl), the environment\'s own samples and metrics, process logs. ' +
      'Long files show their last 256 KiB; page with ?offset=&length=.',
    root: evaluationsRoot(ctx.runtime.settings.home),
    idVariable: 'eval_id',
    what: 'evaluation',
    oneJob: 'an evaluation',
    uri: evaluationFileUri,
    listPrefix: 'evaluations',
    notFoundHint: 'Start one with rl_evaluate, or see resources/list for recent evaluations.',
  });
}
