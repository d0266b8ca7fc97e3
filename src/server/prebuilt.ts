/**
 * What the build wrote beside the bundle so a start answers before it loads the SDK: the tools/list
 * answer (dist/tools.json, written from the tool modules) and the initialize answer
 * (dist/handshake.json, recorded from the built server itself). The bundle knows the hash of the
 * tool list it was built with; the handshake names that hash and the server version, so a file
 * from another build is not used. The sources run by tsx have no hash: nothing prebuilt is used.
 * Only types come from the SDK here: this module runs before the SDK is loaded (frontDoor.ts).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ClientCapabilities, Implementation, InitializeResult, ServerCapabilities, Tool } from '@modelcontextprotocol/server';
import { PREBUILT_HANDSHAKE, PREBUILT_TOOL_LIST } from '../core/files/paths.js';
import { SERVER_VERSION } from '../core/version.js';
import { clientRendersApps, isAppOnly, type ToolUi } from './apps.js';

/** Set by scripts/build.ts in the bundle: the SHA-256 of the dist/tools.json it wrote. */
declare const RL_TOOL_LIST_SHA256: string | undefined;

export const toolListHash = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The tool list the build wrote for this bundle; `problem` says why it is not used (undefined when not running as a bundle). */
export function readPrebuiltTools(): { tools: Tool[] } | { problem: string } | undefined {
  if (typeof RL_TOOL_LIST_SHA256 !== 'string') return undefined;
  try {
    const text = readFileSync(PREBUILT_TOOL_LIST, 'utf8');
    if (toolListHash(text) === RL_TOOL_LIST_SHA256) return { tools: JSON.parse(text) as Tool[] };
    return { problem: 'prebuilt tool list is from another build' };
  } catch (err) {
    return { problem: `prebuilt tool list unreadable: ${(err as Error).message}` };
  }
}

/** The app-only flag travels in the listed tool's `_meta`, so the prebuilt list carries it too. */
const uiOf = (tool: Tool): ToolUi | undefined => tool._meta?.ui as ToolUi | undefined;

/** The tools a client is shown: app-only ones only to a client that renders MCP Apps. */
export function toolsShownTo(tools: readonly Tool[], capabilities: ClientCapabilities | undefined): Tool[] {
  const apps = clientRendersApps(capabilities);
  return tools.filter((tool) => apps || !isAppOnly(uiOf(tool)));
}

/** dist/handshake.json: the SDK's protocol versions and the built server's first answers. */
export interface Handshake {
  tool_list_sha256: string;
  supported_versions: string[];
  latest_version: string;
  /** The initialize answer without its protocolVersion, which depends on the request. */
  result: { capabilities: ServerCapabilities; serverInfo: Implementation; instructions?: string };
  /** 2026-07-28: the versions, the server/discover answer, and the fields of a tools/list answer beside `tools`. */
  modern?: { versions: string[]; discover: Record<string, unknown>; list: Record<string, unknown> };
}

export function readHandshake(): Handshake | undefined {
  if (typeof RL_TOOL_LIST_SHA256 !== 'string') return undefined;
  try {
    const h = JSON.parse(readFileSync(PREBUILT_HANDSHAKE, 'utf8')) as Handshake;
    const fits = h.tool_list_sha256 === RL_TOOL_LIST_SHA256 && h.result?.serverInfo?.version === SERVER_VERSION && Array.isArray(h.supported_versions);
    return fits && typeof h.latest_version === 'string' ? h : undefined;
  } catch {
    return undefined;
  }
}

/** The initialize answer, negotiated as the SDK does: the client's version when supported, else the latest. */
export function initializeResult(h: Handshake, requestedVersion: unknown): InitializeResult {
  const protocolVersion = typeof requestedVersion === 'string' && h.supported_versions.includes(requestedVersion) ? requestedVersion : h.latest_version;
  return { protocolVersion, ...h.result };
}
