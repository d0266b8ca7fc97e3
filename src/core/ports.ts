/** Port checks before starting processes that must bind a fixed port. */
import { createServer } from 'node:net';

/**
 * True when `port` can be bound on `host` right now (we bind it and let go at once). Any bind
 * error counts as busy: the child would hit the same error.
 */
export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.unref();
    probe.once('error', () => resolve(false));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}
