"""The verifiers types the cookbook and ``vf-eval`` use (verifiers/types.py at v0.1.9.post3).

``GenerateOutputs`` is the v0.1.9 shape (column lists: prompt, completion, answer, state, task,
info, example_id, reward, metrics, stop_conditions, is_truncated, metadata), the one the cookbook's
verifiers_rl recipe reads; verifiers 0.1.10+ changed it, which the cookbook pins against
(``verifiers>=0.1.9,<0.1.10``)."""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel

Messages = Any
Info = dict
SamplingArgs = dict


class RolloutInput(dict):
    """prompt, example_id, task (required); answer, info (optional)."""


class State(dict):
    """One rollout: its input fields, ``trajectory``, ``completion``, ``reward``, ``metrics``,
    ``timing`` (generation_ms, scoring_ms, total_ms), ``stop_condition``, ``is_truncated``, ``error``."""


class GenerateOutputs(dict):
    pass


class GenerateMetadata(dict):
    """env_id, env_args, model, base_url, num_examples, rollouts_per_example, sampling_args, date,
    time_ms, avg_reward, avg_metrics, state_columns, path_to_save (the last two of date and
    path_to_save are left out of metadata.json)."""


class ClientConfig(BaseModel):
    api_key_var: str = "PRIME_API_KEY"
    api_base_url: str = "https://api.pinference.ai/api/v1"
    timeout: float = 3600.0
    max_retries: int = 10
    extra_headers: dict[str, str] = {}


class EvalConfig(BaseModel):
    env_id: str
    env_args: dict
    env_dir_path: str
    model: str
    client_config: ClientConfig
    sampling_args: dict
    num_examples: int
    rollouts_per_example: int
    max_concurrent: int
    max_concurrent_generation: int | None = None
    max_concurrent_scoring: int | None = None
    independent_scoring: bool = False
    extra_env_kwargs: dict = {}
    print_results: bool = False
    verbose: bool = False
    state_columns: list[str] | None = None
    save_results: bool = False
    save_every: int = -1
    save_to_hf_hub: bool = False
    hf_hub_dataset_name: str | None = None
