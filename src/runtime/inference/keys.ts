/** The Tinker key, for the models Tinker serves (base models and sampler checkpoints). */
import { UserError } from '../../core/errors.js';
import { placeholderMessage, unexpandedReference } from '../../core/placeholders.js';
import type { Settings } from '../../core/settings.js';

export function tinkerApiKey(settings: Settings): string {
  const value = settings.secrets.tinkerApiKey;
  const reference = unexpandedReference(value);
  if (reference !== undefined) throw new UserError(placeholderMessage('TINKER_API_KEY', reference), { placeholder: 'TINKER_API_KEY' });
  if (!value || value.trim() === '') {
    throw new UserError("TINKER_API_KEY not set. Tinker base models and tinker:// checkpoints are sampled through Tinker's OpenAI-compatible endpoint with it: set it in the server's environment (the MCP client config's env block).", {
      missing: 'TINKER_API_KEY',
    });
  }
  return value;
}
