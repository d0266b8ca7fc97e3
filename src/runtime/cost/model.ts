/** Which Tinker base model a run trains (and is priced as): tinker-atropos takes tinker.tinker_model_name, else the first openai model_name. */
import type { JsonValue } from '../../core/json.js';

type Section = Record<string, JsonValue>;

const text = (v: JsonValue | undefined): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

export function trainedModel(config: { env: Section; openai: Section[]; tinker: Section }): string {
  return text(config.tinker.tinker_model_name) ?? text(config.openai[0]?.model_name) ?? text(config.env.tokenizer_name) ?? 'unknown';
}
