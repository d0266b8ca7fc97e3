"""Test fake of Prime Intellect's ``verifiers`` at v0.1.9.post3, the version tinker-cookbook's
verifiers_rl recipe pins (``verifiers>=0.1.9,<0.1.10``), written from its source
(PrimeIntellect-ai/verifiers tag v0.1.9.post3: verifiers/envs/environment.py, verifiers/utils/env_utils.py,
verifiers/utils/eval_utils.py, verifiers/scripts/eval.py).

What it keeps: ``vf.load_environment(env_id, **env_args)`` importing the environment's module and
calling its ``load_environment``; ``Environment``/``MultiTurnEnv``/``SingleTurnEnv`` with datasets,
parsers and rubrics; ``evaluate``/``evaluate_sync``/``run_group``/``get_dataset`` and the v0.1.9
``GenerateOutputs``; the ``vf-eval`` command (verifiers/scripts/eval.py) with its flags, its stdout
summary and its results folder. It talks to any OpenAI-compatible chat-completions endpoint over HTTP
(verifiers/utils/client_utils.py). Stand-ins where the real package needs what the tests'
interpreter lacks: ``verifiers.dataset.Dataset`` for ``datasets.Dataset`` and a small HTTP client for
``openai.AsyncOpenAI``; tool environments, sandboxes and the RL trainer are left out.
"""
import os

from verifiers.dataset import Dataset
from verifiers.envs.environment import Environment, MultiTurnEnv, SingleTurnEnv
from verifiers.errors import EmptyModelResponseError, Error, InfraError, ModelError, OverlongPromptError
from verifiers.parsers.parser import MaybeThinkParser, Parser
from verifiers.rubrics.rubric import MathRubric, Rubric
from verifiers.types import (
    ClientConfig,
    EvalConfig,
    GenerateMetadata,
    GenerateOutputs,
    Info,
    Messages,
    RolloutInput,
    SamplingArgs,
    State,
)
from verifiers.utils.data_utils import extract_boxed_answer, extract_hash_answer
from verifiers.utils.env_utils import load_environment
from verifiers.utils.logging_utils import print_prompt_completions_sample, setup_logging

__version__ = "0.1.9.post3"

__all__ = [
    "ClientConfig", "Dataset", "EmptyModelResponseError", "Environment", "Error", "EvalConfig",
    "GenerateMetadata", "GenerateOutputs", "Info", "InfraError", "MathRubric", "MaybeThinkParser",
    "Messages", "ModelError", "MultiTurnEnv", "OverlongPromptError", "Parser", "RolloutInput", "Rubric",
    "SamplingArgs", "SingleTurnEnv", "State", "extract_boxed_answer", "extract_hash_answer",
    "load_environment", "print_prompt_completions_sample", "setup_logging",
]

setup_logging(os.getenv("VF_LOG_LEVEL", "INFO"))
