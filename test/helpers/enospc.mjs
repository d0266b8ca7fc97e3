/**
 * Loaded into a server under test (`node --import`) where a tmpfs cannot be mounted (not root):
 * while the file named by RL_TEST_FULL_MARKER exists, every write under RL_HOME fails with ENOSPC
 * the way a full file system fails it (the file is created or truncated, no byte lands), and
 * statfs reports no space left. The server's own imports of node:fs see the patched functions.
 */
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { resolve, sep } from 'node:path';

const home = resolve(process.env.RL_HOME);
const marker = process.env.RL_TEST_FULL_MARKER;
const real = { ...fs, promises: { ...fs.promises } };
const full = () => real.existsSync(marker);
const underHome = (path) => (typeof path === 'string' || path instanceof URL) && `${resolve(String(path))}${sep}`.startsWith(`${home}${sep}`);
const enospc = (syscall, path) =>
  Object.assign(new Error(`ENOSPC: no space left on device, ${syscall}${path === undefined ? '' : ` '${path}'`}`), { code: 'ENOSPC', errno: -28, syscall, ...(path === undefined ? {} : { path: String(path) }) });
const flagOf = (options, fallback) => (typeof options === 'object' && options?.flag) || fallback;

/** File descriptors open on files under RL_HOME. */
const homeFds = new Set();
fs.openSync = (path, ...rest) => {
  const fd = real.openSync(path, ...rest);
  if (underHome(path)) homeFds.add(fd);
  else homeFds.delete(fd);
  return fd;
};
fs.closeSync = (fd) => {
  homeFds.delete(fd);
  return real.closeSync(fd);
};
fs.writeSync = (fd, ...rest) => {
  if (homeFds.has(fd) && full()) throw enospc('write');
  return real.writeSync(fd, ...rest);
};
const refusedFile = (file) => (typeof file === 'number' ? homeFds.has(file) : underHome(file)) && full();
fs.writeFileSync = (file, data, options) => {
  if (!refusedFile(file)) return real.writeFileSync(file, data, options);
  if (typeof file !== 'number') real.closeSync(real.openSync(file, flagOf(options, 'w')));
  throw enospc('write', file);
};
fs.appendFileSync = (file, data, options) => {
  if (!refusedFile(file)) return real.appendFileSync(file, data, options);
  throw enospc('write', file);
};
fs.promises.writeFile = async (file, data, options) => {
  if (!(underHome(file) && full())) return real.promises.writeFile(file, data, options);
  await (await real.promises.open(file, flagOf(options, 'w'))).close();
  throw enospc('write', file);
};
fs.promises.appendFile = async (file, data, options) => {
  if (!(underHome(file) && full())) return real.promises.appendFile(file, data, options);
  throw enospc('write', file);
};
fs.statfsSync = (path, options) => {
  const stats = real.statfsSync(path, options);
  return underHome(path) && full() ? Object.assign(stats, { bavail: 0, bfree: 0 }) : stats;
};
syncBuiltinESMExports();
