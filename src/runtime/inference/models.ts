/**
 * Which models a test runs. Hermes kept only the known ids when a list mixed known and custom
 * ones (custom models were silently dropped); here every requested id is tested exactly once.
 */
import type { ModelRoute } from './routing.js';

export interface TestModel {
  id: string;
  name: string;
  scale: 'small' | 'medium' | 'large' | 'custom';
  /** Where the model is sampled, when not the test's base_url (Tinker models: routing.ts). */
  route?: ModelRoute;
}

export const DEFAULT_TEST_MODELS: readonly TestModel[] = [
  { id: 'qwen/qwen3-8b', name: 'Qwen3 8B', scale: 'small' },
  { id: 'z-ai/glm-4.7-flash', name: 'GLM-4.7 Flash', scale: 'medium' },
  { id: 'minimax/minimax-m2.7', name: 'MiniMax M2.7', scale: 'large' },
];

/** The requested ids in order, duplicates removed; none requested means the defaults. */
export function resolveTestModels(ids?: readonly string[]): TestModel[] {
  if (!ids || ids.length === 0) return DEFAULT_TEST_MODELS.map((m) => ({ ...m }));
  return [...new Set(ids)].map((id) => ({ ...(DEFAULT_TEST_MODELS.find((m) => m.id === id) ?? { id, name: id, scale: 'custom' as const }) }));
}
