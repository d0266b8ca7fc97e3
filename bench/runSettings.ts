/** The settings of a bench's server over a fake install and a fake Tinker, runs of 1000 locked steps without W&B. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Settings } from '../src/core/settings.js';
import { loadSettings } from '../src/runtime/config/settings.js';
import type { FakeInstall } from '../test/helpers/fakeInstall.js';
import { makeFakeTinker } from '../test/helpers/fakeTinker.js';
import { freePort } from '../test/helpers/tmp.js';

/** `dir` holds the fake Tinker's state (`tinker/`, made first) and the config file; RL_HOME is `dir/home`. */
export async function fakeRunSettings(dir: string, install: Pick<FakeInstall, 'root' | 'python'>, env: Record<string, string> = {}): Promise<Settings> {
  const key = 'tml-bench-runs';
  const tinker = makeFakeTinker(join(dir, 'tinker'));
  tinker.addKey(key);
  tinker.setModels(['Qwen/Qwen3-8B']);
  const configFile = join(dir, 'rl.yaml');
  writeFileSync(configFile, 'locked:\n  env:\n    total_steps: 1000\n    use_wandb: false\n');
  return loadSettings({
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TINKER_ATROPOS_ROOT: install.root,
    RL_PYTHON: install.python,
    RL_HOME: join(dir, 'home'),
    RL_MCP_CONFIG: configFile,
    RL_API_PORT: String(await freePort()),
    RL_INFERENCE_PORT: String(await freePort()),
    TINKER_API_KEY: key,
    TINKER_BASE_URL: `file://${tinker.dir}`,
    LOG_LEVEL: 'warn',
    ...env,
  });
}
