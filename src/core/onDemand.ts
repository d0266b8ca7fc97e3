/**
 * Dependencies a server start does not need, loaded on first use: spawning processes (execa) and
 * YAML. They stay outside the bundle (build.ts marks them external), so a start neither reads nor
 * compiles them; the first run, inference test, discovery or YAML file pays for it once.
 */
import { createRequire } from 'node:module';

export type Execa = typeof import('execa');
type Yaml = typeof import('yaml');

let execaModule: Promise<Execa> | undefined;
let yamlModule: Yaml | undefined;

/** execa, imported on the first call (it is an ES module only, so this is asynchronous). */
export function loadExeca(): Promise<Execa> {
  return (execaModule ??= import('execa'));
}

/** The `yaml` package, read on the first call; synchronous because settings are read synchronously. */
export function yaml(): Yaml {
  return (yamlModule ??= createRequire(import.meta.url)('yaml') as Yaml);
}
