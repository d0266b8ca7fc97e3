/**
 * A failure the user (or the agent) can fix. `hints` are the extra JSON fields of the answer
 * (`{error, ...hint fields}`), e.g. `available`, `locked_value`, `expected`.
 */
export class UserError extends Error {
  constructor(
    message: string,
    readonly hints: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'UserError';
  }
}

/** A bad operator setting: the server stops at start with this one-line message. */
export class SettingsError extends Error {}
