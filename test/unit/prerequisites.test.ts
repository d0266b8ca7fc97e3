/**
 * What `npm test` does about a machine that lacks what the suite needs (scripts/prerequisites.ts):
 * the programs found on PATH (stub executables in a temp directory stand in for the machine's),
 * and the plan as a table: nothing, install with apt as root, or stop with the one command.
 */
import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { canInstall, INSTALL_COMMAND, missingSystemPackages, onPath, plan, SLURM_PROGRAMS } from '../../scripts/prerequisites.js';
import { tempDir } from '../helpers/tmp.js';

/** A directory holding an executable stub for each name (and `plain`, a file nobody may run). */
function binDir(names: string[]): string {
  const dir = tempDir('rlmcp-bin-');
  for (const name of names) {
    writeFileSync(join(dir, name), '#!/bin/sh\n');
    chmodSync(join(dir, name), 0o755);
  }
  writeFileSync(join(dir, 'plain'), '');
  return dir;
}

test('a program is on PATH when an executable file of its name is in one of the directories', () => {
  const dir = binDir(['chromium']);
  assert.equal(onPath('chromium', `/nonexistent::${dir}`), true);
  assert.equal(onPath('plain', dir), false, 'not executable');
  assert.equal(onPath('chromium', ''), false);
  assert.equal(onPath('chromium', '/nonexistent'), false);
});

test('what the suite lacks: Chromium unless CHROMIUM_PATH, Slurm (every program, daemons in sbin too) unless RL_TEST_SLURM_CONF', () => {
  const empty = binDir([]);
  const all = binDir(['chromium', ...SLURM_PROGRAMS]);
  const daemons = ['slurmctld', 'slurmd', 'munged', 'mungekey', 'slurmdbd', 'mariadbd'];
  const sbin = binDir(daemons);
  const clients = binDir(['chromium', ...SLURM_PROGRAMS.filter((p) => !daemons.includes(p))]);
  const noMariadb = binDir(['chromium', ...SLURM_PROGRAMS.filter((p) => p !== 'mariadbd')]);
  const cases: [string, Record<string, string | undefined>, string[], string[]][] = [
    ['a fresh machine', { PATH: empty }, [], ['chromium', 'slurm']],
    ['everything there', { PATH: all }, [], []],
    ['the daemons in sbin, off PATH', { PATH: clients }, [sbin], []],
    ['the daemons nowhere', { PATH: clients }, [empty], ['slurm']],
    ['one program missing (accounting)', { PATH: noMariadb }, [], ['slurm']],
    ['a browser named by CHROMIUM_PATH', { PATH: empty, CHROMIUM_PATH: '/opt/chrome/chrome' }, [], ['slurm']],
    ['a cluster of one\'s own', { PATH: empty, RL_TEST_SLURM_CONF: '/etc/slurm/slurm.conf' }, [], ['chromium']],
    ['no PATH at all', {}, [], ['chromium', 'slurm']],
  ];
  for (const [what, env, sbinDirs, missing] of cases) assert.deepEqual(missingSystemPackages(env, sbinDirs), missing, what);
});

test('installing needs root and apt-get', () => {
  const apt = binDir(['apt-get']);
  assert.equal(canInstall({ PATH: apt }, 0), true);
  assert.equal(canInstall({ PATH: apt }, 1000), false);
  assert.equal(canInstall({ PATH: binDir([]) }, 0), false);
});

test('the plan: nothing; apt as root (Chromium, then scripts/install-slurm.sh); else stop with the one command', () => {
  assert.deepEqual(plan([], false), { kind: 'ready' });
  assert.deepEqual(plan([], true), { kind: 'ready' });
  assert.deepEqual(plan(['chromium', 'slurm'], true), {
    kind: 'install',
    commands: [['apt-get', 'update', '-qq'], ['apt-get', 'install', '-y', '-qq', 'chromium'], ['bash', 'scripts/install-slurm.sh']],
  });
  assert.deepEqual(plan(['slurm'], true), { kind: 'install', commands: [['bash', 'scripts/install-slurm.sh']] });
  for (const missing of [['chromium'], ['slurm'], ['chromium', 'slurm']] as const) {
    const stopped = plan([...missing], false);
    assert.equal(stopped.kind, 'stop');
    assert.ok(stopped.kind === 'stop' && stopped.message.includes(INSTALL_COMMAND), stopped.kind === 'stop' ? stopped.message : '');
    assert.equal(stopped.kind === 'stop' && stopped.message.includes('Chromium'), missing.includes('chromium' as never));
    assert.equal(stopped.kind === 'stop' && stopped.message.includes('Slurm'), missing.includes('slurm' as never));
  }
  assert.match(INSTALL_COMMAND, /npm run test:prerequisites$/);
});
