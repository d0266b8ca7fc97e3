/**
 * The MCP Inspector 2.x needs Node >= 22.19; the machine may run Node 20, so neither is a
 * dependency of this project (a clean `npm ci` on Node 20 would warn about its engine). Both come
 * from the npm registry on demand (`npx -p node@22 -p @modelcontextprotocol/inspector@...`),
 * cached by npm after the first use.
 */
import { execFileSync } from 'node:child_process';

/** The Inspector release the tests drive. */
export const INSPECTOR_PACKAGE = '@modelcontextprotocol/inspector@2.12.0';

let cachedNode: string | undefined;
let cachedInspector: string | undefined;

function npxWhich(packages: string[], command: string): string {
  const out = execFileSync('npx', ['-y', ...packages.flatMap((p) => ['-p', p]), '-c', `command -v ${command}`], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 240_000,
  });
  const path = out.trim().split('\n').pop();
  if (!path) throw new Error(`npx -p ${packages.join(' -p ')} did not provide ${command}`);
  return path;
}

export function node22(): string {
  if (cachedNode) return cachedNode;
  const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
  if (major > 22 || (major === 22 && minor >= 19)) return (cachedNode = process.execPath);
  return (cachedNode = npxWhich(['node@22'], 'node'));
}

/** The Inspector's launcher script (run it with node22()). */
export function inspectorLauncher(): string {
  return (cachedInspector ??= npxWhich(['node@22', INSPECTOR_PACKAGE], 'mcp-inspector'));
}
