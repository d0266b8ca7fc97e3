/**
 * A failure the user (or the agent) can fix. `hints` are the extra JSON fields of the answer
 * (SPEC §3: `{error, ...hint fields}`), e.g. `available`, `locked_value`, `expected`.
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
