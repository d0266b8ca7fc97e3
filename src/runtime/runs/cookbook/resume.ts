/**
 * Where a cookbook run resumes: the recipe, launched again in the same log_path with
 * behavior_if_log_dir_exists=resume, continues from the last checkpoints.jsonl record with a
 * state (its `batch`) through Tinker's load of that state with its optimizer. Without such a
 * record it would start over, so that is refused; a `final` record means nothing is left to train.
 */
import { UserError } from '../../../core/errors.js';
import type { ResumePoint } from '../seams/framework.js';
import type { RunRecord } from '../seams/record.js';
import type { CookbookCheckpoint } from './files.js';

export function resumePointOf(record: Pick<RunRecord, 'run_id'>, last: CookbookCheckpoint | undefined): ResumePoint {
  if (last === undefined) {
    throw new UserError(
      `Run '${record.run_id}' saved no resumable state (checkpoints.jsonl has no record with a state_path: it ended before its first checkpoint, every save_every steps), so a resume would start over. Start a new run instead, with a smaller save_every if runs end early.`,
      { run_id: record.run_id, resumable: false },
    );
  }
  if (last.name === 'final') {
    throw new UserError(`Run '${record.run_id}' saved its final checkpoint (${last.sampler_path ?? last.state_path}): it has nothing left to train.`, { run_id: record.run_id, resumable: false });
  }
  return { from_step: last.batch ?? 0, state_path: last.state_path! };
}
