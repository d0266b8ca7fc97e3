/** Port checks before starting processes that must bind a port, and free ports to give them. */
import { createServer, type AddressInfo } from 'node:net';

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

/** A port the system calls free on `host` now (bound to port 0, read, let go). */
export function anyFreePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen({ port: 0, host, exclusive: true }, () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
