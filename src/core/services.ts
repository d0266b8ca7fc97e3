/** The three things nearly every service needs, handed to it instead of the whole application. */
import type { Logger } from './logger.js';
import type { SecretRedactor } from './redact.js';
import type { Settings } from './settings.js';

export interface CoreServices {
  readonly settings: Settings;
  readonly logger: Logger;
  /** Knows every secret in use; anything quoting a log line or an error passes through it. */
  readonly redactor: SecretRedactor;
}
