/**
 * What the client declared, for either protocol generation: a 2026-07-28 request carries the
 * protocol version and the client's capabilities on itself (the `_meta` envelope the SDK lifts into
 * `ctx.mcpReq.envelope`); a 2025 client declared its capabilities once, at `initialize`, and its
 * requests carry no envelope.
 */
import { CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY, type ClientCapabilities, type Server, type ServerContext } from '@modelcontextprotocol/server';

const envelope = (ctx: ServerContext): Record<string, unknown> => (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;

/** A request of the 2026-07-28 generation (no initialize; input-required results instead of server requests). */
export const isModernRequest = (ctx: ServerContext): boolean => typeof envelope(ctx)[PROTOCOL_VERSION_META_KEY] === 'string';

export function requestCapabilities(server: Server, ctx: ServerContext): ClientCapabilities | undefined {
  if (isModernRequest(ctx)) return envelope(ctx)[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
  // Deprecated for 2026 requests only, where the envelope above answers instead.
  return server.getClientCapabilities();
}

/** The client can show a form: `elicitation: {}` (the form-only declaration of 2025-06-18) or `elicitation.form`. */
export function canAskForm(capabilities: ClientCapabilities | undefined): boolean {
  const elicitation = capabilities?.elicitation as Record<string, unknown> | undefined;
  return elicitation !== undefined && (elicitation.form !== undefined || Object.keys(elicitation).length === 0);
}

/**
 * Whether this request declares the extension on itself. Extensions such as tasks are declared per
 * request (2026-07-28 envelope) and count only for that request; a 2025 request never declares one.
 */
export function requestDeclares(ctx: ServerContext, extension: string): boolean {
  if (!isModernRequest(ctx)) return false;
  const declared = (envelope(ctx)[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined)?.extensions?.[extension];
  return typeof declared === 'object' && declared !== null;
}
