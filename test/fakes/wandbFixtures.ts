/**
 * A training run as tinker-atropos and atroposlib leave it in W&B (tinker-atropos' trainer.py, atroposlib's BaseEnv), for
 * tests and benchmarks: a trainer run (tag `trainer`, name `<env>-<run_id>-trainer-<suffix>`) and
 * an environment run whose keys carry the `<wandb_name>_<n>_` prefix, both in group `run_id`,
 * plus decoys a correct lookup must not read (an older crashed trainer, another group's trainer).
 */
import type { WandbRunRef } from '../../src/runtime/wandb/reader.js';
import type { FakeWandb } from './wandbServer.js';

export const KEY = 'wandb_v1_' + 'k'.repeat(77);
export const ENTITY = 'alice';
export const PROJECT = 'atropos-tinker';
export const RUN: WandbRunRef = { run_id: 'a1b2c3d4', wandb_project: PROJECT, wandb_name: 'gsm8k-20260101-120000' };
export const PREFIX = `${RUN.wandb_name}_0_`;
export const TRAINER = 'tr8k2m1x';
export const ENV_RUN = 'en5v9q2w';
export const steps = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

/** A trainer and an environment run in the group (`stepCount` steps), plus decoys that must not be read. */
export function seedTrainingRun(fake: FakeWandb, entity = ENTITY, project = PROJECT, run: WandbRunRef = RUN, stepCount = 30): void {
  const prefix = `${run.wandb_name}_0_`;
  fake.addRun(entity, project, {
    name: 'old1trnr',
    displayName: `gsm8k-${run.run_id}-trainer-old1`,
    group: run.run_id,
    state: 'crashed',
    history: [{ _step: 3, 'reward/mean': 0.01, 'train/loss': 9 }],
  });
  fake.addRun(entity, project, {
    name: 'decoy001',
    displayName: 'gsm8k-ffffffff-trainer-zzzz',
    tags: ['trainer'],
    group: 'ffffffff',
    history: [{ _step: 99, 'reward/mean': 0.99, 'train/loss': 0.001 }],
  });
  fake.addRun(entity, project, {
    name: TRAINER,
    displayName: `gsm8k-${run.run_id}-trainer-q7zp`,
    tags: ['trainer'],
    group: run.run_id,
    state: 'running',
    history: steps(stepCount).map((s) => ({ _step: s, 'train/loss': 1 / s, 'train/learning_rate': 4e-5, 'reward/mean': s / stepCount })),
  });
  fake.addRun(entity, project, {
    name: ENV_RUN,
    displayName: `${run.wandb_name}-2026-01-01-abcdef`,
    group: run.run_id,
    state: 'running',
    config: { group_size: 16 },
    history: steps(stepCount).map((s) => ({
      _step: s,
      [`${prefix}train/percent_correct`]: s / (2 * stepCount),
      'server/server_0_request_time_avg': 1.5,
      ...(s % 10 === 0 ? { [`${prefix}eval/percent_correct`]: 0.5 + s / 100 } : {}),
    })),
  });
}
