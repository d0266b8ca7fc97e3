/** What an inference test reports: its states, each model's report, and the answer while running and once finished. */
import type { ServerType } from './command.js';
import type { FailureKind } from './failures.js';
import type { ModelScores, TestSummary } from './scoring.js';
import type { RolloutLengths } from '../cost/lengths.js';
import type { SignalStats } from '../readiness/verdicts/signal.js';

export type TestStatus = 'running' | 'completed' | 'cancelled';
export type ModelState = 'queued' | 'running' | 'succeeded' | 'failed' | 'timed_out' | 'cancelled';

export interface ModelReport extends ModelScores {
  model: string;
  name: string;
  scale: string;
  output_file: string;
  log_file: string;
  duration_seconds?: number;
  error?: string;
  stderr_tail?: string;
  exit_code?: number | null;
  timed_out?: boolean;
  /** What kind of failure `error` describes; for a model that ran, what `warning` says (no_learning_signal). */
  error_kind?: FailureKind;
  /** The model ran, but what it produced cannot be learned from. */
  warning?: string;
  /** Prompt and completion tokens per rollout, measured from the output file or the wire (what cost estimates use). */
  rollout_tokens?: RolloutLengths;
  /** Its groups' training signal: mixed, all-right and all-wrong shares, reward range, invalid rewards apart from zeros. */
  signal?: Omit<SignalStats, 'model' | 'error'>;
  /** The endpoint that served this model, when not the test's base_url (Tinker models). */
  endpoint?: string;
}

export interface TestConfig {
  num_steps: number;
  group_size: number;
  rollouts_per_model: number;
  total_rollouts: number;
  base_url: string;
  server_type: ServerType;
}

export interface TestProgress {
  models_total: number;
  models_finished: number;
  elapsed_seconds: number;
  models: { model: string; state: ModelState; log_file: string; elapsed_seconds?: number; pid?: number }[];
}

/** What the tool answers: the Hermes result once finished, `progress` while running. */
export interface TestOutput {
  test_id: string;
  status: TestStatus;
  message?: string;
  environment: string;
  environment_file: string;
  test_config: TestConfig;
  progress?: TestProgress;
  models_tested?: ModelReport[];
  summary?: TestSummary;
}
