"""``vf-eval`` (console script ``verifiers.scripts.eval:main``; also ``python -m verifiers.scripts.eval``),
the flags of verifiers v0.1.9.post3 (verifiers/scripts/eval.py):

  vf-eval ENV_ID [-a/--env-args JSON] [-p/--env-dir-path ./environments] [-e/--endpoints-path
      ./configs/endpoints.py] [-m/--model openai/gpt-4.1-mini] [-k/--api-key-var VAR]
      [-b/--api-base-url URL] [--header 'Name: Value']... [-n/--num-examples N]
      [-r/--rollouts-per-example R] [-c/--max-concurrent 32] [--max-concurrent-generation N]
      [--max-concurrent-scoring N] [-t/--max-tokens N] [-T/--temperature T] [-S/--sampling-args JSON]
      [-v/--verbose] [-N/--no-interleave-scoring] [-C/--state-columns a,b] [-s/--save-results]
      [-f/--save-every N] [-R/--independent-scoring] [-H/--save-to-hf-hub] [-D/--hf-hub-dataset-name]
      [-x/--extra-env-kwargs JSON]

A model not in the endpoint registry uses -k (default PRIME_API_KEY, the key read from that variable,
"EMPTY" if unset) and -b (default https://api.pinference.ai/api/v1). -n and -r default to the
environment package's ``[tool.verifiers.eval]`` in its pyproject.toml, else 5 and 3. Unknown flags
and a missing ENV_ID are argparse errors (usage on stderr, exit code 2). Pushing to the HF Hub is
not supported (the flag is accepted and ignored)."""
import argparse
import asyncio
import importlib.resources
import json
import logging
import os
import tomllib
from typing import Any

from verifiers.types import ClientConfig, EvalConfig
from verifiers.utils.eval_utils import load_endpoints, run_evaluation
from verifiers.utils.logging_utils import setup_logging

logger = logging.getLogger("verifiers.scripts.eval")

DEFAULT_NUM_EXAMPLES = 5
DEFAULT_ROLLOUTS_PER_EXAMPLE = 3
DEFAULT_API_KEY_VAR = "PRIME_API_KEY"
DEFAULT_API_BASE_URL = "https://api.pinference.ai/api/v1"


def get_env_eval_defaults(env_id: str) -> dict[str, Any]:
    module_name = env_id.replace("-", "_").split("/")[-1]
    try:
        pyproject = importlib.resources.files(module_name) / "pyproject.toml"
        if not pyproject.is_file():
            return {}
        with pyproject.open("rb") as f:
            section = tomllib.load(f).get("tool", {}).get("verifiers", {}).get("eval", {})
        return {k: section[k] for k in ("num_examples", "rollouts_per_example") if k in section}
    except Exception:
        return {}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    parser.add_argument("env_id", type=str, default="gsm8k", help="Environment module name")
    parser.add_argument("--env-args", "-a", type=json.loads, default={})
    parser.add_argument("--env-dir-path", "-p", type=str, default="./environments")
    parser.add_argument("--endpoints-path", "-e", type=str, default="./configs/endpoints.py")
    parser.add_argument("--model", "-m", type=str, default="openai/gpt-4.1-mini")
    parser.add_argument("--api-key-var", "-k", type=str, default=None)
    parser.add_argument("--api-base-url", "-b", type=str, default=None)
    parser.add_argument("--header", action="append", default=None)
    parser.add_argument("--num-examples", "-n", type=int, default=None)
    parser.add_argument("--rollouts-per-example", "-r", type=int, default=None)
    parser.add_argument("--max-concurrent", "-c", type=int, default=32)
    parser.add_argument("--max-concurrent-generation", type=int, default=None)
    parser.add_argument("--max-concurrent-scoring", type=int, default=None)
    parser.add_argument("--max-tokens", "-t", type=int, default=None)
    parser.add_argument("--temperature", "-T", type=float, default=None)
    parser.add_argument("--sampling-args", "-S", type=json.loads, default=None)
    parser.add_argument("--verbose", "-v", default=False, action="store_true")
    parser.add_argument("--no-interleave-scoring", "-N", default=False, action="store_true")
    parser.add_argument("--state-columns", "-C", type=lambda t: [s.strip() for s in t.split(",")], default=[])
    parser.add_argument("--save-results", "-s", default=False, action="store_true")
    parser.add_argument("--save-every", "-f", type=int, default=-1)
    parser.add_argument("--independent-scoring", "-R", default=False, action="store_true")
    parser.add_argument("--save-to-hf-hub", "-H", default=False, action="store_true")
    parser.add_argument("--hf-hub-dataset-name", "-D", type=str, default="")
    parser.add_argument("--extra-env-kwargs", "-x", type=json.loads, default={})
    return parser


def main() -> None:
    args = build_parser().parse_args()
    setup_logging("DEBUG" if args.verbose else os.getenv("VF_LOG_LEVEL", "INFO"))
    defaults = get_env_eval_defaults(args.env_id)
    num_examples = args.num_examples if args.num_examples is not None else defaults.get("num_examples", DEFAULT_NUM_EXAMPLES)
    rollouts = (args.rollouts_per_example if args.rollouts_per_example is not None
                else defaults.get("rollouts_per_example", DEFAULT_ROLLOUTS_PER_EXAMPLE))

    endpoints = load_endpoints(args.endpoints_path)
    if args.model in endpoints:
        endpoint = endpoints[args.model]
        api_key_var = args.api_key_var or endpoint["key"]
        api_base_url = args.api_base_url or endpoint["url"]
        args.model = endpoint["model"]
    else:
        logger.debug("Model '%s' not found in endpoint registry, using command-line arguments", args.model)
        api_key_var = args.api_key_var or DEFAULT_API_KEY_VAR
        api_base_url = args.api_base_url or DEFAULT_API_BASE_URL

    sampling_args: dict[str, Any] = dict(args.sampling_args or {})
    sampling_args.setdefault("max_tokens", args.max_tokens)
    if args.temperature is not None:
        sampling_args.setdefault("temperature", args.temperature)

    headers: dict[str, str] = {}
    for header in args.header or []:
        if ":" not in header:
            raise ValueError(f"--header must be 'Name: Value', got: {header!r}")
        name, value = (part.strip() for part in header.split(":", 1))
        if not name:
            raise ValueError("--header name cannot be empty")
        headers[name] = value

    config = EvalConfig(
        env_id=args.env_id, env_args=args.env_args, env_dir_path=args.env_dir_path,
        extra_env_kwargs=args.extra_env_kwargs, model=args.model,
        client_config=ClientConfig(api_key_var=api_key_var, api_base_url=api_base_url, extra_headers=headers),
        sampling_args=sampling_args, num_examples=num_examples, rollouts_per_example=rollouts,
        max_concurrent=args.max_concurrent, max_concurrent_generation=args.max_concurrent_generation,
        max_concurrent_scoring=args.max_concurrent_scoring, print_results=True, verbose=args.verbose,
        state_columns=args.state_columns, save_results=args.save_results, save_every=args.save_every,
        independent_scoring=args.independent_scoring, save_to_hf_hub=args.save_to_hf_hub,
        hf_hub_dataset_name=args.hf_hub_dataset_name,
    )
    logger.debug(f"Evaluation config: {config.model_dump_json(indent=2)}")
    asyncio.run(run_evaluation(config))


if __name__ == "__main__":
    main()
