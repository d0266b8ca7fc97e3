/**
 * What atroposlib writes instead of the model's tokens when a `managed_server` environment samples
 * an OpenAI-compatible endpoint (ATROPOS_ALLOW_DUMMY_MANAGED_SERVER, as inference tests and
 * evaluations run it): its DummyManagedServer gives every rollout the token ids 0..127, the mask
 * [-100, 1..127] and logprobs of -0.5, whatever the model said; `process` then writes, for an
 * environment that keeps no `messages` of its own, those placeholders decoded as one user message.
 * Nothing of the model's text or lengths is in such a rollout: it is measured on the wire instead.
 */

const PLACEHOLDER_LENGTH = 128;
const PROMPT_MASK = -100;

/** The tokens and mask of one rollout are atroposlib's placeholders. */
export function isPlaceholderRollout(tokens: unknown, mask: unknown): boolean {
  if (!Array.isArray(tokens) || !Array.isArray(mask) || tokens.length !== PLACEHOLDER_LENGTH || mask.length !== PLACEHOLDER_LENGTH) return false;
  return tokens.every((t, i) => t === i) && mask.every((m, i) => m === (i === 0 ? PROMPT_MASK : i));
}

/** A conversation the environment wrote itself: it has the model's answer in it (atroposlib's stand-in has none). */
export function hasOwnText(conversation: unknown): boolean {
  return Array.isArray(conversation) && conversation.some((m) => (m as { role?: unknown } | null)?.role === 'assistant');
}

/** A `process` group whose every rollout carries placeholders and no text of the environment's own. */
export function isPlaceholderGroup(group: { tokens?: unknown; masks?: unknown; messages?: unknown }): boolean {
  const { tokens, masks, messages } = group;
  if (!Array.isArray(tokens) || tokens.length === 0 || !Array.isArray(masks)) return false;
  return tokens.every((t, i) => isPlaceholderRollout(t, masks[i]) && !hasOwnText(Array.isArray(messages) ? messages[i] : undefined));
}
