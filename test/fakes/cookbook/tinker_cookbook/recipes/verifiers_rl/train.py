"""``python -m tinker_cookbook.recipes.verifiers_rl.train vf_env_id=<env> vf_env_args='<json>' ...``
(tinker_cookbook/recipes/verifiers_rl/train.py): RL on an installed verifiers environment. The log
directory is checked first (before the environment loads); each group's rollouts run through the
environment (``run_group``) against the policy's Tinker sampler, and the rubric's scores are the
rewards (its functions' values appear as ``env/all/<name>`` metrics)."""
from __future__ import annotations

import asyncio
import json
import logging
from datetime import datetime
from typing import Any, cast

import chz
from verifiers.utils.async_utils import maybe_semaphore

from tinker_cookbook import cli_utils, model_info, renderers
from tinker_cookbook.recipes.verifiers_rl.tinker_openai import TinkerAsyncOpenAIClient
from tinker_cookbook.recipes.verifiers_rl.verifiers_env import (
    VerifiersEnvGroupBuilder,
    VerifiersRLDatasetBuilder,
    convert_states_to_trajectory_group,
)
from tinker_cookbook.rl import rollouts, train
from tinker_cookbook.rl.rollouts import TinkerTokenCompleter
from tinker_cookbook.rl.types import EnvGroupBuilder, TrajectoryGroup
from tinker_cookbook.tokenizer_utils import get_tokenizer

logger = logging.getLogger(__name__)


@chz.chz
class CLIConfig:
    # the model
    model_name: str = "Qwen/Qwen3.5-4B"
    lora_rank: int = 32
    renderer_name: str | None = "qwen3_5_disable_thinking"

    # the environment; vf_env_args is a JSON object
    vf_env_id: str = "reverse-text"
    vf_env_args: str | None = None
    dataset_n: int = -1
    dataset_seed: int | None = None

    # training
    group_size: int = 8
    groups_per_batch: int = 32
    num_substeps: int = 1
    learning_rate: float = 1e-5
    max_tokens: int = 512
    temperature: float = 1.0
    kl_penalty_coef: float = 0.0
    max_concurrent_generation: int = -1
    max_concurrent_scoring: int = -1

    # logging
    eval_every: int = 0
    save_every: int = 10
    log_path: str | None = None
    wandb_project: str | None = None
    wandb_name: str | None = None
    behavior_if_log_dir_exists: cli_utils.LogdirBehavior = "ask"

    max_steps: int | None = None


async def cli_main(cli_config: CLIConfig, env: Any | None) -> None:
    run_name = (f"verifiers_rl_{cli_config.model_name.replace('/', '-')}_gp{cli_config.groups_per_batch}"
                f"_gs{cli_config.group_size}_lr{cli_config.learning_rate}_rank{cli_config.lora_rank}"
                f"_{datetime.now().strftime('%Y-%m-%d-%H-%M')}")
    log_path = cli_config.log_path or f"/tmp/tinker-examples/verifiers_rl/{run_name}"
    cli_utils.check_log_dir(log_path, behavior_if_exists=cli_config.behavior_if_log_dir_exists)
    env_args = json.loads(cli_config.vf_env_args) if cli_config.vf_env_args else {}
    client: TinkerAsyncOpenAIClient | None = None

    async def custom_do_group_rollout(builder: EnvGroupBuilder, policy: TinkerTokenCompleter,
                                      strategy: Any = None) -> TrajectoryGroup:
        nonlocal client
        if client is None:
            tokenizer = get_tokenizer(cli_config.model_name)
            renderer = renderers.get_renderer(
                cli_config.renderer_name or model_info.get_recommended_renderer_name(cli_config.model_name), tokenizer)
            client = TinkerAsyncOpenAIClient(policy.sampling_client, renderer, tokenizer)
        else:
            client.set_sampling_client(policy.sampling_client)
        vf_builder = cast(VerifiersEnvGroupBuilder, builder)
        states = await vf_builder.vf_env.run_group(
            group_inputs=vf_builder.get_rollout_inputs(cli_config.group_size), client=client, model="tinker",
            gen_sampling_args={"max_tokens": cli_config.max_tokens, "temperature": cli_config.temperature},
            gen_sem=await maybe_semaphore(cli_config.max_concurrent_generation),
            score_sem=await maybe_semaphore(cli_config.max_concurrent_scoring))
        return convert_states_to_trajectory_group(states)

    rollouts.do_group_rollout = custom_do_group_rollout
    config = train.Config(
        learning_rate=cli_config.learning_rate,
        dataset_builder=VerifiersRLDatasetBuilder(vf_env_id=cli_config.vf_env_id, vf_env_args=env_args,
                                                  groups_per_batch=cli_config.groups_per_batch,
                                                  dataset_n=cli_config.dataset_n, dataset_seed=cli_config.dataset_seed),
        model_name=cli_config.model_name,
        recipe_name="recipe_verifiers_rl",
        renderer_name=cli_config.renderer_name,
        max_tokens=cli_config.max_tokens,
        temperature=cli_config.temperature,
        lora_rank=cli_config.lora_rank,
        kl_penalty_coef=cli_config.kl_penalty_coef,
        num_substeps=cli_config.num_substeps,
        wandb_project=cli_config.wandb_project,
        wandb_name=cli_config.wandb_name or run_name,
        log_path=log_path,
        eval_every=cli_config.eval_every,
        save_every=cli_config.save_every,
        stream_minibatch_config=None,
        max_steps=cli_config.max_steps,
    )
    await train.main(config)


if __name__ == "__main__":
    asyncio.run(cli_main(chz.entrypoint(CLIConfig), None))
