/**
 * Asking the user before spending: a form elicitation with one yes/no field, sent only to a
 * client that declared the elicitation capability. A client without it is never asked (its call
 * goes on as before), and an unanswered question counts as "not confirmed".
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';

/** accept: the user said yes; decline / cancel: no; unsupported: the client cannot be asked. */
export type Confirmation = 'accept' | 'decline' | 'cancel' | 'unsupported';

/** How long the user has to answer: a person reads the figures. */
const ANSWER_TIMEOUT_MS = 10 * 60_000;

/** The one yes/no field of the form: its name in the answer, and what the user sees. */
export interface ConfirmField {
  name: string;
  title: string;
  description: string;
}

/** What rl_start_training asks (`start`). */
export const START_FIELD: ConfirmField = { name: 'start', title: 'Start this run', description: 'Yes starts the run and its spending; no starts nothing' };

export function confirmer(server: Server, extra: RequestHandlerExtra<ServerRequest, ServerNotification>): (message: string, field?: ConfirmField) => Promise<Confirmation> {
  return async (message, field = START_FIELD) => {
    // An empty `elicitation: {}` is read as form support by the SDK.
    if (!server.getClientCapabilities()?.elicitation?.form) return 'unsupported';
    try {
      const result = await server.elicitInput(
        {
          mode: 'form',
          message,
          requestedSchema: {
            type: 'object',
            properties: { [field.name]: { type: 'boolean', title: field.title, description: field.description, default: false } },
            required: [field.name],
          },
        },
        { signal: extra.signal, relatedRequestId: extra.requestId, timeout: ANSWER_TIMEOUT_MS },
      );
      if (result.action !== 'accept') return result.action;
      return result.content?.[field.name] === true ? 'accept' : 'decline';
    } catch {
      // No answer (timeout, cancelled call, a client error): nothing is started.
      return 'cancel';
    }
  };
}
