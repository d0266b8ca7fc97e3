/**
 * A run's model and its chat template go together. tinker-cookbook renders prompts with
 * `renderer_name` and, when that is not one its `model_info` recommends for the model, only warns
 * ("can silently degrade training quality") and trains anyway: verifiers_rl's default
 * qwen3_5_disable_thinking with another model trains that model on a template it never saw. The
 * recommendations are asked of the installed cookbook's own `model_info` (RL_PYTHON), so they are
 * those of the version that runs.
 */
import { UserError } from '../../../core/errors.js';
import { childEnv } from '../../../core/childEnv.js';
import { loadExeca } from '../../../core/onDemand.js';
import type { Settings } from '../../../core/settings.js';

const TIMEOUT_MS = 30_000;

/** Prints model_info's recommended renderers of argv[1] as JSON; null when it does not know the model. */
const ASK_MODEL_INFO = [
  'import json, sys',
  'from tinker_cookbook import model_info',
  'try:',
  '    print(json.dumps(model_info.get_recommended_renderer_names(sys.argv[1])))',
  'except Exception:',
  '    print("null")',
].join('\n');

/** The renderers the installed cookbook recommends for `model`, best first; undefined when it does not know the model or could not be asked. */
export async function recommendedRenderers(settings: Settings, model: string): Promise<string[] | undefined> {
  const { execa } = await loadExeca();
  const child = await execa(settings.python, ['-B', '-c', ASK_MODEL_INFO, model], {
    env: childEnv(settings.processEnv),
    extendEnv: false,
    stdin: 'ignore',
    timeout: TIMEOUT_MS,
    reject: false,
  });
  if (child.exitCode !== 0) return undefined;
  try {
    const answer: unknown = JSON.parse(child.stdout.trim().split('\n').at(-1) ?? 'null');
    return Array.isArray(answer) && answer.every((r) => typeof r === 'string') ? answer : undefined;
  } catch {
    return undefined;
  }
}

/** Pure: a renderer the cookbook does not recommend for the model is refused, naming both and the fix; null lets the recipe take the recommended one. */
export function refuseMismatchedRenderer(model: string, renderer: unknown, recommended: readonly string[] | undefined): void {
  if (typeof renderer !== 'string' || recommended === undefined || recommended.length === 0 || recommended.includes(renderer)) return;
  throw new UserError(
    `renderer_name ${renderer} is not a chat template tinker-cookbook's model_info recommends for ${model} (${recommended.join(', ')}): the recipe would only warn and train ${model} on another model's template, silently degrading training. Set rl_edit_config('renderer_name', '${recommended[0]}'), or null to take the recommended one.`,
    { field: 'renderer_name', value: renderer, model, recommended },
  );
}
