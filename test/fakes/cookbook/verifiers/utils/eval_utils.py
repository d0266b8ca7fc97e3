"""``vf-eval``'s run (verifiers/utils/eval_utils.py at v0.1.9.post3): load the endpoint registry,
load the environment, evaluate, print the summary to stdout and, with ``--save-results``, write the
results folder (see path_utils):
- ``results.jsonl``: one JSON object per rollout, sorted by example_id, keys in this order:
  example_id, prompt, completion, task, reward, error (repr of the error or null), generation_ms,
  scoring_ms, total_ms, info (only when some row has one), answer (only when some row has one), then
  one key per rubric function (its score) and the requested state columns.
- ``metadata.json``: env_id, env_args, model, base_url (with a trailing "/"), num_examples,
  rollouts_per_example, sampling_args, time_ms, avg_reward, avg_metrics, state_columns.
The log line "Results saved to <path>" (logger verifiers.utils.eval_utils, stderr) names the folder."""
from __future__ import annotations

import importlib.util
import json
import logging
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from verifiers.envs.environment import ErrorChain
from verifiers.types import EvalConfig, GenerateOutputs
from verifiers.utils.client_utils import setup_client
from verifiers.utils.env_utils import load_environment
from verifiers.utils.logging_utils import print_prompt_completions_sample, print_time
from verifiers.utils.message_utils import messages_to_printable
from verifiers.utils.path_utils import get_eval_results_path

logger = logging.getLogger(__name__)


def load_endpoints(endpoints_path: str) -> dict[str, dict[str, str]]:
    """``ENDPOINTS`` of an ``endpoints.py`` (name -> {"model", "url", "key"}), or {} with a warning."""
    path = Path(endpoints_path)
    file = path / "endpoints.py" if path.is_dir() else path
    try:
        if not file.exists():
            raise ImportError(f"endpoints.py not found at {file}")
        spec = importlib.util.spec_from_file_location("endpoints", file)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if not hasattr(module, "ENDPOINTS"):
            raise AttributeError(f"Module '{file}' does not have a 'ENDPOINTS' attribute")
        return module.ENDPOINTS
    except (ImportError, AttributeError) as error:
        logger.warning(
            f"No local endpoint registry found at {endpoints_path}. "
            f"Please specify the model name (-m), API host base URL (-b), and API key variable name (-k). "
            f"Error details: {error}"
        )
        return {}


def _std(values: list[float]) -> float:
    return statistics.pstdev(values) if values else 0.0


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def print_results(results: GenerateOutputs) -> None:
    metadata = results["metadata"]
    print("--- Evaluation ---")
    print(f"Environment: {metadata['env_id']}")
    print(f"Model: {metadata['model']}")
    print(f"Provider: {metadata['base_url']}")
    print(f"Examples: {metadata['num_examples']}")
    print(f"Rollouts per example: {metadata['rollouts_per_example']}")
    print("--- Example ---")
    errors = [s.get("error") for s in results["state"]]
    print_prompt_completions_sample([messages_to_printable(p) for p in results["prompt"]],
                                    [messages_to_printable(c) for c in results["completion"]],
                                    errors, results["reward"], step=0)
    print("--- All ---")
    print("Rewards:")
    rewards = results["reward"]
    r = metadata["rollouts_per_example"]
    n = len(rewards) // r
    print(f"reward: avg - {_mean(rewards):.3f}, std - {_std(rewards):.3f}")
    # Results are sorted by example_id, so rollout i of each example sits at i, i+r, i+2r, ...
    for i in range(r):
        print(f"r{i + 1}: {[round(rewards[i + j * r], 3) for j in range(n)]}")
    for name, values in results["metrics"].items():
        print(f"{name}: avg - {_mean(values):.3f}, std - {_std(values):.3f}")
        for i in range(r):
            print(f"r{i + 1}: {[round(values[i + j * r], 3) for j in range(n)]}")
    print("Info:")
    truncated = [float(t) for t in results["is_truncated"]]
    print(f"is_truncated: avg - {_mean(truncated):.3f}, std - {_std(truncated):.3f}")
    counts = Counter(results["stop_conditions"])
    print(f"stop_conditions: {', '.join(f'{k}: {v / counts.total():.3f}' for k, v in counts.items())}")
    failed = [float(e is not None) for e in errors]
    if any(failed):
        print(f"errors: avg - {_mean(failed):.3f}, std - {_std(failed):.3f}")
        chains = Counter(ErrorChain(e) for e in errors if e is not None)
        for chain, count in chains.items():
            print(f" - {chain!r}: {count / chains.total():.3f}")
    print("Timing:")
    for phase in ("generation", "scoring", "total"):
        seconds = [s["timing"][f"{phase}_ms"] / 1000 for s in results["state"]]
        print(f"{phase}: min - {print_time(min(seconds))}, mean - {print_time(_mean(seconds))}, max - {print_time(max(seconds))}")


def _rows(results: GenerateOutputs) -> list[dict[str, Any]]:
    save_info = any(info != {} for info in results["info"])
    save_answer = any(answer != "" for answer in results["answer"])
    state_columns = results["metadata"]["state_columns"]
    rows = []
    for i, state in enumerate(results["state"]):
        row = {
            "example_id": results["example_id"][i],
            "prompt": messages_to_printable(results["prompt"][i]),
            "completion": messages_to_printable(results["completion"][i]),
            "task": results["task"][i],
            "reward": results["reward"][i],
            "error": repr(state["error"]) if state.get("error") is not None else None,
            "generation_ms": state["timing"]["generation_ms"],
            "scoring_ms": state["timing"]["scoring_ms"],
            "total_ms": state["timing"]["total_ms"],
        }
        if save_info:
            row["info"] = results["info"][i]
        if save_answer:
            row["answer"] = results["answer"][i]
        for name, values in results["metrics"].items():
            row[name] = values[i]
        for column in state_columns:
            row[column] = state.get(column)
        rows.append(row)
    return rows


def save_rollout_results(results: GenerateOutputs) -> None:
    path: Path = results["metadata"]["path_to_save"]
    path.mkdir(parents=True, exist_ok=True)
    with open(path / "results.jsonl", "w") as out:
        for row in _rows(results):
            out.write(json.dumps(row, default=str) + "\n")
    metadata = {k: v for k, v in results["metadata"].items() if k not in ("path_to_save", "date")}
    with open(path / "metadata.json", "w") as out:
        json.dump(metadata, out)
    logger.info(f"Results saved to {path}")


async def run_evaluation(config: EvalConfig) -> GenerateOutputs:
    client = setup_client(config.client_config)
    logger.debug(f"Initialized AsyncOpenAI client with base_url: {config.client_config.api_base_url}")
    env = load_environment(config.env_id, **config.env_args)
    if config.extra_env_kwargs:
        logger.info(f"Setting extra environment kwargs: {config.extra_env_kwargs}")
        env.set_kwargs(**config.extra_env_kwargs)
    results_path = get_eval_results_path(config)
    logger.info(f"Starting evaluation with model: {config.model}")
    logger.info(f"Configuration: num_examples={config.num_examples}, rollouts_per_example={config.rollouts_per_example}, "
                f"max_concurrent={config.max_concurrent}")
    started = time.time()
    results = await env.evaluate(
        client=client, model=config.model, sampling_args=config.sampling_args, num_examples=config.num_examples,
        rollouts_per_example=config.rollouts_per_example, max_concurrent=config.max_concurrent,
        max_concurrent_generation=config.max_concurrent_generation,
        max_concurrent_scoring=config.max_concurrent_scoring, results_path=results_path,
        state_columns=config.state_columns, save_results=config.save_results, save_every=config.save_every,
        independent_scoring=config.independent_scoring,
    )
    logger.info(f"Evaluation completed in {time.time() - started:.2f} seconds")
    if config.print_results:
        print_results(results)
    if config.save_results:
        save_rollout_results(results)
    return results
