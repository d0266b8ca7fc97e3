"""``python -m tinker_cookbook.recipes.math_rl.train key=value ...`` (tinker_cookbook/recipes/math_rl/
train.py): RL on math problems. The fake keeps ``env=arithmetic`` (generated, no test set) and
``env=gsm8k`` (a test set, from math_env.py's hub stand-in); math, polaris and deepmath fail as an
unknown value does."""
import asyncio
import logging
from datetime import datetime
from typing import Any

import chz
from tinker.types import LossFnType

from tinker_cookbook import checkpoint_utils, cli_utils
from tinker_cookbook.recipes.math_rl import arithmetic_env, math_env
from tinker_cookbook.rl.train import AsyncConfig, Config, StreamMinibatchConfig, main
from tinker_cookbook.rl.types import RLDatasetBuilder

logger = logging.getLogger(__name__)


@chz.chz
class CLIConfig:
    """Simple command-line configuration for RL training."""

    # the model
    model_name: str = "Qwen/Qwen3.5-9B"
    lora_rank: int = 32
    renderer_name: str | None = None
    load_checkpoint_path: str | None = None

    # the environment: arithmetic, math, polaris, deepmath, gsm8k
    env: str = "arithmetic"
    seed: int = 0

    # training
    group_size: int = 4
    groups_per_batch: int = 100
    learning_rate: float = 1e-5
    max_tokens: int = 5
    temperature: float = 1.0
    kl_penalty_coef: float = 0.0
    num_substeps: int = 1

    # logging
    log_path: str | None = None
    wandb_project: str | None = None
    wandb_name: str | None = None
    compute_post_kl: bool = False
    eval_every: int = 20
    save_every: int = 20

    base_url: str | None = None
    behavior_if_log_dir_exists: cli_utils.LogdirBehavior = "ask"
    max_steps_off_policy: int | None = None
    stream_minibatch_config: StreamMinibatchConfig | None = None
    loss_fn: LossFnType = "importance_sampling"
    loss_fn_config: dict[str, Any] | None = None
    max_steps: int | None = None


def get_dataset_builder(env: str, batch_size: int, model_name: str, renderer_name: str, group_size: int,
                        seed: int = 0) -> RLDatasetBuilder:
    if env == "arithmetic":
        return arithmetic_env.ArithmeticDatasetBuilder(batch_size=batch_size, model_name_for_tokenizer=model_name,
                                                       renderer_name=renderer_name, n_batches=100,
                                                       include_fewshot=True, group_size=group_size)
    elif env in ["gsm8k"]:
        return math_env.get_math_dataset_builder(dataset_name=env, batch_size=batch_size, model_name_for_tokenizer=model_name,
                                                 renderer_name=renderer_name, group_size=group_size, seed=seed)
    raise ValueError(f"Unknown environment: {env}")


async def cli_main(cli_config: CLIConfig) -> None:
    renderer_name = await checkpoint_utils.resolve_renderer_name_from_checkpoint_or_default_async(
        model_name=cli_config.model_name, explicit_renderer_name=cli_config.renderer_name,
        load_checkpoint_path=cli_config.load_checkpoint_path, base_url=cli_config.base_url)
    model_name = cli_config.model_name.replace("/", "-")
    run_name = (f"{cli_config.env}-{model_name}-{cli_config.lora_rank}rank-{cli_config.learning_rate}lr-"
                f"{cli_config.group_size}group-{cli_config.groups_per_batch}batch-{cli_config.loss_fn}-"
                f"seed{cli_config.seed}-{datetime.now().strftime('%Y-%m-%d-%H-%M')}")
    log_path = cli_config.log_path if cli_config.log_path is not None else f"/tmp/tinker-examples/math_rl/{run_name}"
    config = Config(
        learning_rate=cli_config.learning_rate,
        dataset_builder=get_dataset_builder(cli_config.env, cli_config.groups_per_batch, cli_config.model_name,
                                            renderer_name, cli_config.group_size, cli_config.seed),
        model_name=cli_config.model_name,
        recipe_name="recipe_math_rl",
        renderer_name=renderer_name,
        lora_rank=cli_config.lora_rank,
        max_tokens=cli_config.max_tokens,
        temperature=cli_config.temperature,
        wandb_project=cli_config.wandb_project,
        wandb_name=cli_config.wandb_name if cli_config.wandb_name is not None else run_name,
        log_path=log_path,
        base_url=cli_config.base_url,
        load_checkpoint_path=cli_config.load_checkpoint_path,
        compute_post_kl=cli_config.compute_post_kl,
        kl_penalty_coef=cli_config.kl_penalty_coef,
        num_substeps=cli_config.num_substeps,
        eval_every=cli_config.eval_every,
        save_every=cli_config.save_every,
        async_config=AsyncConfig(max_steps_off_policy=cli_config.max_steps_off_policy,
                                 groups_per_batch=cli_config.groups_per_batch)
        if cli_config.max_steps_off_policy is not None else None,
        loss_fn=cli_config.loss_fn,
        loss_fn_config=cli_config.loss_fn_config,
        max_steps=cli_config.max_steps,
    )
    cli_utils.check_log_dir(log_path, behavior_if_exists=cli_config.behavior_if_log_dir_exists)
    await main(config)


if __name__ == "__main__":
    asyncio.run(cli_main(chz.entrypoint(CLIConfig)))
