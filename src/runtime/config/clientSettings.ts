/** The settings that fit the server to the MCP client that starts it (docs/clients.md). */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { SettingsError } from '../../core/errors.js';
import { isWholePlaceholder, placeholderMessage, unexpandedReference } from '../../core/placeholders.js';
import type { Settings } from '../../core/settings.js';

const nonEmpty = (value: string | undefined): string | undefined => (value !== undefined && value.trim() !== '' ? value : undefined);

/**
 * Hermes's home as the server receives it: Hermes gives a server only its entry's env (plus PATH,
 * HOME and a few more), so its snippet passes `HERMES_HOME: ${HERMES_HOME}`, which Hermes leaves as
 * that literal text when HERMES_HOME is unset: unset, as Hermes itself then uses ~/.hermes. Any
 * other unexpanded reference is refused.
 */
export function hermesHome(env: Record<string, string | undefined>): string {
  const value = nonEmpty(env.HERMES_HOME);
  if (value === undefined || isWholePlaceholder(value)) return join(nonEmpty(env.HOME) ?? homedir(), '.hermes');
  const reference = unexpandedReference(value);
  if (reference !== undefined) throw new SettingsError(placeholderMessage('HERMES_HOME', reference));
  return value;
}

/** RL_CLIENT: `hermes` for Hermes Agent (Settings.client), else `generic`. */
export function clientSetting(value: string | undefined): Settings['client'] {
  const client = (value ?? 'generic').toLowerCase();
  if (client !== 'generic' && client !== 'hermes') throw new SettingsError(`RL_CLIENT=${client} is not generic or hermes`);
  return client;
}
