/**
 * Serving MCP over stdio. A start answers initialize (or 2026-07-28's server/discover) and tools/list
 * from what the build recorded (frontDoor.ts) while the SDK and the runtime load: those are most of
 * a start, and a client waits on its first tools/list. The server (serve.ts) is imported when the
 * front door asks for it.
 */
import type { Settings } from '../core/settings.js';
import { StdioFrontDoor, type EarlyAnswers } from './frontDoor.js';
import { initializeResult, readHandshake, readPrebuiltTools, toolsShownTo } from './prebuilt.js';

/** The recorded answers of this build, when both files are there and from this build. */
function earlyAnswers(): EarlyAnswers | undefined {
  const handshake = readHandshake();
  const prebuilt = readPrebuiltTools();
  if (handshake === undefined || prebuilt === undefined || !('tools' in prebuilt)) return undefined;
  return { initialize: (version) => initializeResult(handshake, version), tools: (capabilities) => toolsShownTo(prebuilt.tools, capabilities), modern: handshake.modern };
}

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

export async function serveStdio(settings: Settings): Promise<void> {
  // Until the server is up there is nothing to clean up: a signal ends the process at once, as
  // clients expect (serve.ts takes signals over, with no await between).
  const exitNow = (): never => process.exit(0);
  for (const signal of SIGNALS) process.on(signal, exitNow);
  const door = new StdioFrontDoor(process.stdin, process.stdout, earlyAnswers());
  await door.serverWanted;
  const { serve } = await import('./serve.js');
  for (const signal of SIGNALS) process.off(signal, exitNow);
  await serve(settings, door);
}
