/**
 * Which endpoint and key serve a model. Tinker serves its base models and every sampler
 * checkpoint through one OpenAI-compatible endpoint (TINKER_OAI_BASE_URL) with the Tinker key;
 * everything else goes to the endpoint the caller chose (OpenRouter by default) with the key named
 * by api_key_env. A pure decision, tested as a table.
 */

export type KeySource = { kind: 'tinker' } | { kind: 'env'; name: string };

export interface ModelRoute {
  base_url: string;
  key: KeySource;
}

export interface EndpointChoice {
  baseUrl: string;
  apiKeyEnv: string;
  /** The caller named base_url (not the default): a Tinker base-model id then goes there too. */
  baseUrlExplicit: boolean;
}

/** A checkpoint path, or Tinker's `<base model>;<checkpoint path>` form: only Tinker can serve it. */
export const isTinkerCheckpoint = (id: string): boolean => id.startsWith('tinker://') || /^[^;]+;tinker:\/\//.test(id);

/**
 * Tinker names base models by their Hugging Face ids (`Qwen/Qwen3-8B`, `meta-llama/Llama-3.1-8B`),
 * cased as on the Hub; OpenRouter's ids are lower case (`qwen/qwen3-8b`). So an id of a Tinker
 * model family with a capital letter after the slash is read as a Tinker base model.
 */
const TINKER_BASE_MODEL = /^(?:Qwen|meta-llama|deepseek-ai|moonshotai)\/[A-Za-z0-9._-]*[A-Z][A-Za-z0-9._-]*$/;

export const isTinkerBaseModel = (id: string): boolean => TINKER_BASE_MODEL.test(id);

export function routeModel(modelId: string, choice: EndpointChoice, tinkerBaseUrl: string): ModelRoute {
  const tinker = isTinkerCheckpoint(modelId) || (!choice.baseUrlExplicit && isTinkerBaseModel(modelId));
  return tinker ? { base_url: tinkerBaseUrl, key: { kind: 'tinker' } } : { base_url: choice.baseUrl, key: { kind: 'env', name: choice.apiKeyEnv } };
}
