/**
 * What a server start does not need, loaded on first use.
 * - Dependencies: spawning processes with their output (execa) and YAML. They stay outside the
 *   bundle (build.ts marks them external), so a start neither reads nor compiles them; the first
 *   run, inference test, discovery or YAML file pays for it once.
 * - Node's own modules for HTTP (readiness probes, the inference test's recording proxy), TLS
 *   behind https, zlib, child processes and reading files line by line: a static import loads
 *   each at start, and together they were about 4 MiB of an idle server's memory
 *   (docs/architecture.md, "Build and serving").
 *   Only this file imports them (test/unit/architecture.test.ts).
 */
import { createRequire } from 'node:module';

export type Execa = typeof import('execa');
type Yaml = typeof import('yaml');

const load = createRequire(import.meta.url);
let execaModule: Promise<Execa> | undefined;

/** execa, imported on the first call (it is an ES module only, so this is asynchronous). */
export function loadExeca(): Promise<Execa> {
  return (execaModule ??= import('execa'));
}

/** The `yaml` package; synchronous because settings are read synchronously. */
export const yaml = (): Yaml => load('yaml') as Yaml;

export const nodeHttp = (): typeof import('node:http') => load('node:http') as typeof import('node:http');
export const nodeHttps = (): typeof import('node:https') => load('node:https') as typeof import('node:https');
export const nodeZlib = (): typeof import('node:zlib') => load('node:zlib') as typeof import('node:zlib');
export const nodeReadline = (): typeof import('node:readline') => load('node:readline') as typeof import('node:readline');
export const childProcess = (): typeof import('node:child_process') => load('node:child_process') as typeof import('node:child_process');
