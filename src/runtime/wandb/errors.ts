/**
 * Every way a W&B lookup can fail, typed for the retry loop, then turned into one sentence a user
 * can act on (the `wandb_error` of rl_check_status / rl_get_results).
 */

export type WandbErrorKind =
  | 'no_key' // WANDB_API_KEY not set
  | 'auth' // 401, or a 200 whose viewer is null
  | 'forbidden' // 403
  | 'not_found' // 404, or project: null
  | 'no_entity' // WANDB_ENTITY unset and the viewer has no default entity
  | 'no_run' // the group holds no run (yet)
  | 'rate_limited' // 429
  | 'server' // 5xx
  | 'http' // any other non-2xx
  | 'graphql' // 2xx with an `errors` array
  | 'bad_response' // 2xx whose body is not GraphQL JSON
  | 'unreachable' // connection refused, DNS, reset
  | 'timeout' // one attempt or the whole budget ran out
  | 'aborted'; // the caller cancelled

export class WandbError extends Error {
  /** Attempts made before giving up; set by the retry loop. */
  attempts = 1;

  constructor(
    readonly kind: WandbErrorKind,
    /** What the server (or the socket) said, without context. */
    readonly detail: string,
    readonly extra: {
      status?: number;
      retryable?: boolean;
      /** Server-requested wait before the next attempt (Retry-After / RateLimit-Reset). */
      retryAfterMs?: number;
    } = {},
  ) {
    super(`${kind}: ${detail}`);
    this.name = 'WandbError';
  }

  get retryable(): boolean {
    return this.extra.retryable === true;
  }
}

/** Where the lookup was going, to name it in the message. */
export interface LookupContext {
  endpoint: string;
  entity?: string;
  /** True when the entity came from the key's viewer (WANDB_ENTITY unset). */
  entityFromViewer?: boolean;
  project?: string;
  group?: string;
}

export function formatSeconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

function path(ctx: LookupContext): string {
  return `${ctx.entity ?? '?'}/${ctx.project ?? '?'}`;
}

function entityHint(ctx: LookupContext): string {
  return ctx.entityFromViewer
    ? ` (entity '${ctx.entity}' is the key's default entity; set WANDB_ENTITY if the runs are logged under a team)`
    : ' (check WANDB_ENTITY)';
}

function tries(err: WandbError): string {
  return err.attempts > 1 ? ` after ${err.attempts} attempts` : '';
}

export function describeWandbError(err: WandbError, ctx: LookupContext): string {
  switch (err.kind) {
    case 'no_key':
      return 'WANDB_API_KEY is not set: set WANDB_API_KEY (from https://wandb.ai/authorize) in the MCP server\'s environment or its RL_MCP_CONFIG file to read W&B metrics';
    case 'auth':
      return `W&B rejected the API key (${err.detail}) at ${ctx.endpoint}: check WANDB_API_KEY, and WANDB_BASE_URL if the key belongs to another W&B server`;
    case 'forbidden':
      return `W&B denied access to ${path(ctx)} (${err.detail}): this key's user cannot read that project${entityHint(ctx)}`;
    case 'not_found':
      return `W&B project ${path(ctx)} not found (${err.detail}): the run's wandb_project may be wrong${entityHint(ctx)}`;
    case 'no_entity':
      return `W&B reports no default entity for this key (${err.detail}): set WANDB_ENTITY to the user or team the runs are logged under`;
    case 'no_run':
      return `No W&B run in group '${ctx.group}' in ${path(ctx)} yet: the run may still be starting (the trainer creates its W&B run after registering), or use_wandb is off`;
    case 'rate_limited': {
      const wait = err.extra.retryAfterMs !== undefined ? `; retry in ${formatSeconds(err.extra.retryAfterMs)}` : '; retry later';
      return `W&B rate limit hit at ${ctx.endpoint}${tries(err)}${wait}`;
    }
    case 'server':
      return `W&B server error at ${ctx.endpoint}${tries(err)} (${err.detail}): W&B may be down, try again later`;
    case 'http':
      return `W&B answered ${err.detail} at ${ctx.endpoint}: check WANDB_BASE_URL`;
    case 'graphql':
      return `W&B refused the query: ${err.detail}`;
    case 'bad_response':
      return `W&B answered with something that is not GraphQL JSON (${err.detail}) at ${ctx.endpoint}: check WANDB_BASE_URL (a proxy or login page?)`;
    case 'unreachable':
      return `W&B unreachable at ${ctx.endpoint}${tries(err)} (${err.detail}): check the network and WANDB_BASE_URL`;
    case 'timeout':
      return `W&B did not answer in time at ${ctx.endpoint}${tries(err)} (${err.detail}): try again later`;
    case 'aborted':
      return 'W&B lookup cancelled by the client';
  }
}
