"""``python -m tinker_cookbook.recipes.verifiers_rl.evaluate vf_env_id=<env> [model_path=tinker://...]
[model_name=<base>] ...`` (tinker_cookbook/recipes/verifiers_rl/evaluate.py): evaluates a checkpoint's
sampler weights (``model_path``, e.g. a ``sampler_path`` of checkpoints.jsonl; the base model is read
from its training run) or a base model with the environment's own ``evaluate``, sampling through the
Tinker SDK (not an HTTP endpoint). It writes no file: the summary goes to stdout ("Using renderer:
...", "Evaluation completed in <s> seconds", "--- Evaluation ---" ... "reward: avg - <mean>, std -
<std>", one "r<i>: [...]" line per rollout index, then each rubric metric likewise). Errors: neither
model given -> ValueError("model_name or model_path must be provided"); a model_name that is not the
checkpoint's base model -> ValueError("Model name <a> does not match training run base model <b>")."""
from __future__ import annotations

import asyncio
import json
import statistics
import time
from typing import Any

import chz
import tinker
import verifiers as vf
from verifiers.utils.message_utils import messages_to_printable

from tinker_cookbook import checkpoint_utils, model_info, renderers
from tinker_cookbook.recipes.verifiers_rl.tinker_openai import TinkerAsyncOpenAIClient
from tinker_cookbook.tokenizer_utils import get_tokenizer
from tinker_cookbook.utils.git_rev import recipe_user_metadata


def _summary(name: str, values: list[float], r: int) -> None:
    n = len(values) // r
    print(f"{name}: avg - {sum(values) / len(values):.3f}, std - {statistics.pstdev(values):.3f}")
    # Upstream reads rollout i of example j at index i*n + j.
    for i in range(r):
        print(f"r{i + 1}: {[round(values[i * n + j], 3) for j in range(n)]}")


def log_results(results: Any, vf_env_id: str, model_name: str, num_examples: int, rollouts_per_example: int,
                time_s: float) -> None:
    print(f"Evaluation completed in {time_s:.2f} seconds")
    print("--- Evaluation ---")
    print(f"Environment: {vf_env_id}")
    print(f"Model: {model_name}")
    print(f"Examples: {num_examples}")
    print(f"Rollouts per example: {rollouts_per_example}")
    print("--- Example ---")
    vf.print_prompt_completions_sample(prompts=[messages_to_printable(p) for p in results["prompt"]],
                                       completions=[messages_to_printable(c) for c in results["completion"]],
                                       errors=[], rewards=results["reward"], step=0)
    print("--- All ---")
    print("Rewards:")
    _summary("reward", results["reward"], rollouts_per_example)
    for name, values in results["metrics"].items():
        _summary(name, values, rollouts_per_example)


async def evaluate(vf_env_id: str, vf_env_args: dict, model_name: str | None, num_examples: int,
                   rollouts_per_example: int, max_concurrent: int, max_tokens: int, temperature: float,
                   model_path: str | None = None) -> Any:
    service = tinker.ServiceClient(user_metadata=recipe_user_metadata("eval_verifiers_rl"))
    if model_path is not None:
        training_run = await service.create_rest_client().get_training_run_by_tinker_path_async(model_path)
        if model_name and model_name != training_run.base_model:
            raise ValueError(f"Model name {model_name} does not match training run base model {training_run.base_model}")
        model_name = model_name or training_run.base_model
    if model_name is None:
        raise ValueError("model_name or model_path must be provided")

    env = vf.load_environment(vf_env_id, **vf_env_args)
    tokenizer = get_tokenizer(model_name)
    renderer_name = None
    if model_path is not None:
        renderer_name = await checkpoint_utils.get_renderer_name_from_checkpoint_async(service, model_path)
    if renderer_name is None:
        renderer_name = model_info.get_recommended_renderer_name(model_name)
    print(f"Using renderer: {renderer_name}")
    renderer = renderers.get_renderer(renderer_name, tokenizer)
    if model_path:
        sampling = service.create_sampling_client(model_path=model_path, base_model=model_name)
    else:
        sampling = service.create_sampling_client(base_model=model_name)

    client = TinkerAsyncOpenAIClient(sampling, renderer, tokenizer)
    started = time.time()
    results = env.evaluate_sync(client=client, model=model_name, num_examples=num_examples,
                                rollouts_per_example=rollouts_per_example, max_concurrent=max_concurrent,
                                sampling_args={"max_tokens": max_tokens, "temperature": temperature})
    log_results(results, vf_env_id, model_name, num_examples, rollouts_per_example, time.time() - started)
    return results


@chz.chz
class CLIConfig:
    model_name: str | None = None  # the base model; read from the checkpoint's run when model_path is set
    model_path: str | None = None  # a sampler checkpoint, e.g. a sampler_path of checkpoints.jsonl
    vf_env_id: str = "reverse-text"
    vf_env_args: str | None = None  # a JSON object
    num_examples: int = 5
    rollouts_per_example: int = 3
    max_concurrent: int = 32
    max_tokens: int = 1024
    temperature: float = 1.0


async def cli_main(config: CLIConfig) -> Any:
    return await evaluate(
        vf_env_id=config.vf_env_id, vf_env_args=json.loads(config.vf_env_args) if config.vf_env_args else {},
        model_name=config.model_name, num_examples=config.num_examples,
        rollouts_per_example=config.rollouts_per_example, max_concurrent=config.max_concurrent,
        max_tokens=config.max_tokens, temperature=config.temperature, model_path=config.model_path)


if __name__ == "__main__":
    asyncio.run(cli_main(chz.entrypoint(CLIConfig)))
