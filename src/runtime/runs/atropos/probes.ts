/**
 * Side-effect-free HTTP probes of the Atropos API.
 * Never /batch, /register-env or /reset_data: those change the API's state.
 */
import type { Agent } from 'node:http';
import { nodeHttp } from '../../../core/onDemand.js';

const PROBE_TIMEOUT_MS = 2_000;

/**
 * Probes keep their connections open between probes, as a client of an HTTP server would: a new
 * connection per probe cost the Atropos API (Python) an accept and a parser each time, on the
 * cores a starting run's processes need. A socket waiting in the pool does not hold the event
 * loop (Node's agent unrefs it); one idle for the probe timeout is closed.
 */
let agent: Agent | undefined;
const probeAgent = (): Agent => (agent ??= new (nodeHttp().Agent)({ keepAlive: true, timeout: PROBE_TIMEOUT_MS }));

/** Where a run's server listens, as the server reaches it: this host's loopback, or a Slurm node's address. */
export interface Endpoint {
  host: string;
  port: number;
}

/** GET http://<host>:<port><path> as JSON; undefined when nothing answers (refused, timeout, not JSON). `fresh`: on a new connection. */
export function getJson(at: Endpoint, path: string, fresh = false): Promise<{ status: number; body: unknown } | undefined> {
  return new Promise((resolve) => {
    const { host, port } = at;
    const req = nodeHttp().request({ host, port, path, method: 'GET', agent: fresh ? false : probeAgent(), timeout: PROBE_TIMEOUT_MS, headers: { accept: 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (text.length < 64 * 1024) text += chunk;
      });
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown });
        } catch {
          resolve({ status: res.statusCode ?? 0, body: undefined });
        }
      });
      res.on('error', () => resolve(undefined));
      // Cut off mid-body (the deadline below): after 'end' this is a no-op.
      res.on('close', () => resolve(undefined));
    });
    // A whole-request deadline, not only an idle one: a body that trickles in would otherwise
    // hold a start-up stage (and a stop waiting on it) past every deadline.
    const deadline = setTimeout(() => req.destroy(), PROBE_TIMEOUT_MS);
    req.on('close', () => clearTimeout(deadline));
    req.on('timeout', () => req.destroy());
    req.on('error', (err: NodeJS.ErrnoException) => {
      // The server closed a kept connection as it was reused: asked once more on a new one.
      if (req.reusedSocket && err.code === 'ECONNRESET') void getJson(at, path, true).then(resolve);
      else resolve(undefined);
    });
    req.end();
  });
}

const field = (body: unknown, name: string): unknown => (typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined);

/** `GET <path>` answers 200 (the API's `/`, the trainer's inference server `/health`). */
export async function serverAnswers(at: Endpoint, path: string): Promise<boolean> {
  return (await getJson(at, path))?.status === 200;
}

/** The API is up: `GET /` answers 200. */
export function apiAnswers(at: Endpoint): Promise<boolean> {
  return serverAnswers(at, '/');
}

/** A trainer has registered: `GET /wandb_info` names a project. */
export async function trainerRegistered(at: Endpoint): Promise<boolean> {
  const answer = await getJson(at, '/wandb_info');
  const project = field(answer?.body, 'project');
  return answer?.status === 200 && typeof project === 'string' && project !== '';
}

/** Where the API says what it holds. */
export const STATUS_PATH = '/status';

/** Environment data has reached the API: groups queued, or batches already handed out. */
export async function dataFlowing(at: Endpoint): Promise<boolean> {
  const answer = await getJson(at, STATUS_PATH);
  if (answer?.status !== 200) return false;
  const queue = field(answer.body, 'queue_size');
  const step = field(answer.body, 'current_step');
  return (typeof queue === 'number' && queue > 0) || (typeof step === 'number' && step > 0);
}
