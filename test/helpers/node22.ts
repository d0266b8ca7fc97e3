/**
 * The MCP Inspector 2.x needs Node >= 22.19; the machine may run Node 20. Node 22 comes from the
 * npm registry (`npx -p node@22`), cached by npm after the first use.
 */
import { execFileSync } from 'node:child_process';

let cached: string | undefined;

export function node22(): string {
  if (cached) return cached;
  const major = Number(process.versions.node.split('.')[0]);
  const minor = Number(process.versions.node.split('.')[1]);
  if (major > 22 || (major === 22 && minor >= 19)) return (cached = process.execPath);
  const out = execFileSync('npx', ['-y', '-p', 'node@22', '-c', 'command -v node'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 180_000 });
  const path = out.trim().split('\n').pop();
  if (!path) throw new Error('npx -p node@22 did not provide a node binary');
  return (cached = path);
}
