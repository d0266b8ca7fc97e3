/**
 * Asking the user before spending: a form with one yes/no field, only for a client that declared
 * elicitation. A client without it is never asked (`unsupported`); the tool then refuses with the
 * argument that confirms instead (costs.ts), as it does for any answer but a yes, since a client
 * with nobody to ask (headless Claude Code) answers for its user. Each protocol generation has its
 * own way of asking:
 * - 2025 (initialize): the server sends `elicitation/create` while the call waits; an unanswered
 *   question (timeout, cancelled call, a client error) counts as "not confirmed".
 * - 2026-07-28: the call answers `input_required` with the question, the client asks the user and
 *   calls again with the answer, and the tool runs again from its start. The answer counts only for
 *   the question it answers: the question goes out with a signed `requestState` naming it, and a
 *   question that came out different on the second run (other figures) is asked again.
 * A tool calls `ctx.confirm(question)` the same way for both, before it does anything: on 2026 that
 * call ends the first run (ConfirmationNeeded, answered by runTool in define.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createRequestStateCodec, inputRequired, inputResponse, type InputRequiredResult, type Server, type ServerContext } from '@modelcontextprotocol/server';
import { canAskForm, isModernRequest, requestCapabilities } from '../server/clientCapabilities.js';

/** accept: the user said yes; decline / cancel: no; unsupported: the client cannot be asked. */
export type Confirmation = 'accept' | 'decline' | 'cancel' | 'unsupported';

/** How long the user has to answer: a person reads the figures. */
const ANSWER_TIMEOUT_S = 10 * 60;
/** The key of the question in `inputRequests` / `inputResponses`. */
const QUESTION_KEY = 'confirm_cost';

/** The one yes/no field of the form: its name in the answer, and what the user sees. */
export interface ConfirmField {
  name: string;
  title: string;
  description: string;
}

/** What rl_start_training asks (`start`). */
export const START_FIELD: ConfirmField = { name: 'start', title: 'Start this run', description: 'Yes starts the run and its spending; no starts nothing' };

const schemaOf = (field: ConfirmField) => ({
  type: 'object' as const,
  properties: { [field.name]: { type: 'boolean' as const, title: field.title, description: field.description, default: false } },
  required: [field.name],
});

/**
 * Signs the 2026 requestState (what was asked). One process serves every round of a stdio session,
 * so a key of its own is enough; a server restarted between the rounds refuses the old state.
 */
export const confirmationState = createRequestStateCodec<{ question: string }>({ key: randomBytes(32), ttlSeconds: ANSWER_TIMEOUT_S });

const digest = (question: string): string => createHash('sha256').update(question).digest('base64url');

/** Ends a 2026 tool run that must ask first: its result is the question (input_required). */
export class ConfirmationNeeded {
  constructor(readonly result: InputRequiredResult) {}
}

function answerOf(action: 'accept' | 'decline' | 'cancel', content: Record<string, unknown> | undefined, field: ConfirmField): Confirmation {
  if (action !== 'accept') return action;
  return content?.[field.name] === true ? 'accept' : 'decline';
}

async function askModern(ctx: ServerContext, message: string, field: ConfirmField): Promise<Confirmation> {
  const answer = inputResponse(ctx.mcpReq.inputResponses, QUESTION_KEY);
  const asked = ctx.mcpReq.requestState<{ question: string }>();
  if (answer.kind === 'elicit' && asked?.question === digest(message)) return answerOf(answer.action, answer.content, field);
  const requestState = await confirmationState.mint({ question: digest(message) });
  throw new ConfirmationNeeded(inputRequired({ inputRequests: { [QUESTION_KEY]: inputRequired.elicit({ mode: 'form', message, requestedSchema: schemaOf(field) }) }, requestState }));
}

async function askLegacy(ctx: ServerContext, message: string, field: ConfirmField): Promise<Confirmation> {
  try {
    // The 2025 way: a request to the client while the call waits (deprecated only for 2026 requests).
    const result = await ctx.mcpReq.elicitInput({ mode: 'form', message, requestedSchema: schemaOf(field) }, { signal: ctx.mcpReq.signal, timeout: ANSWER_TIMEOUT_S * 1000 });
    return answerOf(result.action, result.content, field);
  } catch {
    // No answer (timeout, cancelled call, a client error): nothing is started.
    return 'cancel';
  }
}

export function confirmer(server: Server, ctx: ServerContext): (message: string, field?: ConfirmField) => Promise<Confirmation> {
  return async (message, field = START_FIELD) => {
    if (!canAskForm(requestCapabilities(server, ctx))) return 'unsupported';
    return isModernRequest(ctx) ? askModern(ctx, message, field) : askLegacy(ctx, message, field);
  };
}
