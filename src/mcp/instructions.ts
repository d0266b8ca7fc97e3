/** Sent in `initialize`; clients truncate instructions past ~2 KB, so keep this short. */
export const SERVER_INSTRUCTIONS = `Reinforcement-learning training of language models on Tinker-Atropos.
Workflow: rl_list_environments -> rl_select_environment(name) -> rl_get_current_config -> rl_edit_config(field, value) as needed -> rl_test_inference (smoke test against an OpenAI-compatible endpoint; cheap, do it before paying for training) -> rl_start_training -> rl_check_status(run_id) about every 30 minutes -> rl_get_results(run_id).
rl_start_training returns at once with a run_id; the server starts and supervises the processes. Runs last hours and survive server restarts; rl_list_runs shows them, rl_compare_runs(run_ids) shows what differs between runs (a sweep) and which is best. rl_check_status is rate limited per run (default one full check per 30 minutes); inside the window it still returns the current status. Use rl_stop_training to stop a run (processes are stopped env -> trainer -> API).
The selection and its edits are saved in RL_HOME and shared by every server using it. rl_start_training(environment?, config?) starts a fully specified run without changing the selection: a sweep is one call per value.
Locked fields (model, LoRA rank, learning rate, ...) are set by the operator and cannot be edited.
Errors come back as JSON {error, ...} with a hint of what to do next.`;
