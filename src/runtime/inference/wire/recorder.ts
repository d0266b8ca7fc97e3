/**
 * A model process's way to its endpoint: through a recording proxy (proxy.ts) whenever one can
 * stand in front of it. Not when the server's environment sends that endpoint through an HTTP
 * proxy (HTTPS_PROXY and friends, which the process honours and the recording proxy does not):
 * the process then goes to the endpoint as before, and nothing is recorded. A recorded process is
 * kept off any HTTP proxy for 127.0.0.1 (NO_PROXY), where the recording proxy listens.
 */
import type { Logger } from '../../../core/logger.js';
import type { SecretRedactor } from '../../../core/redact.js';
import { startWireProxy } from './proxy.js';
import type { WireExchange } from './exchanges.js';

export interface WireRecording {
  /** The base_url to give the process: the recording proxy's, or the endpoint's own. */
  baseUrl: string;
  /** Whether the exchanges are recorded. */
  recording: boolean;
  /** The process's environment, with what the recording needs. */
  env(base: Record<string, string>): Record<string, string>;
  /** A line for the model's log: what the process talks to. */
  note: string;
  stop(): Promise<void>;
}

const proxyVariable = (env: Readonly<Record<string, string | undefined>>, name: string): string | undefined => env[name] || env[name.toUpperCase()] || undefined;

/** NO_PROXY's rule (curl's, which Python's clients follow): `*`, or a host or domain suffix, any port. */
function bypassed(host: string, noProxy: string | undefined): boolean {
  return (noProxy ?? '').split(',').map((e) => e.trim().toLowerCase().replace(/:\d+$/, '').replace(/^\*?\./, '')).some((e) => e === '*' || (e !== '' && (host === e || host.endsWith(`.${e}`))));
}

/** The endpoint goes through an HTTP proxy named in the environment. */
export function viaEnvironmentProxy(endpoint: string, env: Readonly<Record<string, string | undefined>>): boolean {
  const url = new URL(endpoint);
  const proxy = proxyVariable(env, url.protocol === 'https:' ? 'https_proxy' : 'http_proxy') ?? proxyVariable(env, 'all_proxy');
  return proxy !== undefined && !bypassed(url.hostname.toLowerCase(), proxyVariable(env, 'no_proxy'));
}

function withLocalBypass(base: Record<string, string>): Record<string, string> {
  const noProxy = [base.NO_PROXY ?? base.no_proxy, '127.0.0.1'].filter(Boolean).join(',');
  return { ...base, NO_PROXY: noProxy, no_proxy: noProxy };
}

export async function recordWire(
  endpoint: string,
  recordFile: string,
  services: { redactor: SecretRedactor; logger: Logger; processEnv: Readonly<Record<string, string | undefined>>; onExchange?: (exchange: WireExchange) => void },
): Promise<WireRecording> {
  if (viaEnvironmentProxy(endpoint, services.processEnv)) {
    const note = `# ${endpoint} is reached through the HTTP proxy of the environment: the exchanges are not recorded`;
    return { baseUrl: endpoint, recording: false, env: (base) => base, note, stop: async () => undefined };
  }
  const proxy = await startWireProxy({ upstream: endpoint, recordFile, redactor: services.redactor, logger: services.logger, ...(services.onExchange ? { onExchange: services.onExchange } : {}) });
  return {
    baseUrl: proxy.baseUrl,
    recording: true,
    env: withLocalBypass,
    note: `# requests to ${endpoint} go through a local recording proxy, ${proxy.baseUrl}; the exchanges (no headers) are in ${recordFile}`,
    stop: () => proxy.close(),
  };
}
