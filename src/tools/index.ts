/**
 * Every tool the server offers, in the order of the Hermes workflow (the dashboard view's own tool
 * last), each as the loader of its module: a call imports the code of the tool it calls, not of
 * all of them (in the bundle each tool is a chunk of its own, so a start's first call loads one).
 */
import type { ToolDefinition } from './define.js';

export const TOOL_MODULES = {
  rl_list_environments: async () => (await import('./rl_list_environments.js')).rlListEnvironments,
  rl_select_environment: async () => (await import('./rl_select_environment.js')).rlSelectEnvironment,
  rl_get_current_config: async () => (await import('./rl_get_current_config.js')).rlGetCurrentConfig,
  rl_edit_config: async () => (await import('./rl_edit_config.js')).rlEditConfig,
  rl_estimate_cost: async () => (await import('./rl_estimate_cost.js')).rlEstimateCost,
  rl_check_environment: async () => (await import('./rl_check_environment.js')).rlCheckEnvironment,
  rl_start_training: async () => (await import('./rl_start_training.js')).rlStartTraining,
  rl_check_status: async () => (await import('./rl_check_status.js')).rlCheckStatus,
  rl_wait_for_run: async () => (await import('./rl_wait_for_run.js')).rlWaitForRun,
  rl_stop_training: async () => (await import('./rl_stop_training.js')).rlStopTraining,
  rl_resume_training: async () => (await import('./rl_resume_training.js')).rlResumeTraining,
  rl_get_results: async () => (await import('./rl_get_results.js')).rlGetResults,
  rl_checkpoints: async () => (await import('./rl_checkpoints.js')).rlCheckpoints,
  rl_list_runs: async () => (await import('./rl_list_runs.js')).rlListRuns,
  rl_compare_runs: async () => (await import('./rl_compare_runs.js')).rlCompareRuns,
  rl_read_log: async () => (await import('./rl_read_log.js')).rlReadLog,
  rl_test_inference: async () => (await import('./rl_test_inference.js')).rlTestInference,
  rl_evaluate: async () => (await import('./rl_evaluate.js')).rlEvaluate,
  rl_get_rollouts: async () => (await import('./rl_get_rollouts.js')).rlGetRollouts,
  rl_doctor: async () => (await import('./rl_doctor.js')).rlDoctor,
  rl_dashboard_snapshot: async () => (await import('./rl_dashboard_snapshot.js')).rlDashboardSnapshot,
} satisfies Record<string, () => Promise<ToolDefinition>>;

/** The tool of this name, its module imported; undefined when no tool has the name. */
export function loadTool(name: string): Promise<ToolDefinition> | undefined {
  return Object.hasOwn(TOOL_MODULES, name) ? TOOL_MODULES[name as keyof typeof TOOL_MODULES]() : undefined;
}

/** Every tool, in order: the build's tool list, the sources run by tsx, the tests. */
export function loadAllTools(): Promise<ToolDefinition[]> {
  return Promise.all(Object.values(TOOL_MODULES).map((load) => load()));
}
