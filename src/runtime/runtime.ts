/**
 * The runtime: every service the tools and resources use, wired once per server process.
 * No MCP imports here or anywhere under src/runtime/.
 */
import { mkdirSync } from 'node:fs';
import { createLogger, type Logger } from './logger.js';
import { SecretRedactor } from './redact.js';
import { secretValues, SettingsError, type Settings } from './settings.js';

type Closer = () => Promise<void> | void;

export class Runtime {
  readonly redactor: SecretRedactor;
  readonly logger: Logger;
  private readonly closers: Closer[] = [];
  private closing?: Promise<void>;

  constructor(
    readonly settings: Settings,
    opts: { logger?: Logger } = {},
  ) {
    try {
      mkdirSync(settings.home, { recursive: true });
    } catch (err) {
      throw new SettingsError(`RL_HOME=${settings.home} cannot be created (${(err as NodeJS.ErrnoException).code ?? String(err)}): point RL_HOME at a writable directory`);
    }
    this.redactor = new SecretRedactor(secretValues(settings));
    this.logger = opts.logger ?? createLogger({ level: settings.logLevel, home: settings.home, redactor: this.redactor });
  }

  /** Registers work to do at shutdown; closers run in reverse order of registration. */
  onClose(closer: Closer): void {
    this.closers.push(closer);
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const closer of [...this.closers].reverse()) {
        try {
          await closer();
        } catch (err) {
          this.logger.error({ err }, 'error during shutdown');
        }
      }
    })();
    return this.closing;
  }
}
