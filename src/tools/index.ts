/** Every tool the server offers, in the order of the Hermes workflow (the dashboard view's own tool last). */
import type { ToolDefinition } from './define.js';
import { rlListEnvironments } from './rl_list_environments.js';
import { rlSelectEnvironment } from './rl_select_environment.js';
import { rlGetCurrentConfig } from './rl_get_current_config.js';
import { rlEditConfig } from './rl_edit_config.js';
import { rlEstimateCost } from './rl_estimate_cost.js';
import { rlCheckEnvironment } from './rl_check_environment.js';
import { rlStartTraining } from './rl_start_training.js';
import { rlCheckStatus } from './rl_check_status.js';
import { rlWaitForRun } from './rl_wait_for_run.js';
import { rlStopTraining } from './rl_stop_training.js';
import { rlResumeTraining } from './rl_resume_training.js';
import { rlGetResults } from './rl_get_results.js';
import { rlCheckpoints } from './rl_checkpoints.js';
import { rlListRuns } from './rl_list_runs.js';
import { rlCompareRuns } from './rl_compare_runs.js';
import { rlReadLog } from './rl_read_log.js';
import { rlTestInference } from './rl_test_inference.js';
import { rlEvaluate } from './rl_evaluate.js';
import { rlGetRollouts } from './rl_get_rollouts.js';
import { rlDoctor } from './rl_doctor.js';
import { rlDashboardSnapshot } from './rl_dashboard_snapshot.js';

export const ALL_TOOLS: readonly ToolDefinition[] = [
  rlListEnvironments,
  rlSelectEnvironment,
  rlGetCurrentConfig,
  rlEditConfig,
  rlEstimateCost,
  rlCheckEnvironment,
  rlStartTraining,
  rlCheckStatus,
  rlWaitForRun,
  rlStopTraining,
  rlResumeTraining,
  rlGetResults,
  rlCheckpoints,
  rlListRuns,
  rlCompareRuns,
  rlReadLog,
  rlTestInference,
  rlEvaluate,
  rlGetRollouts,
  rlDoctor,
  rlDashboardSnapshot,
] as ToolDefinition[];
