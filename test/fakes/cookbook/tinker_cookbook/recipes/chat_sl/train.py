"""``python -m tinker_cookbook.recipes.chat_sl.train key=value ...`` (tinker_cookbook/recipes/chat_sl/
train.py): supervised fine-tuning on chat conversations. Not an RL recipe: it trains through the
supervised trainer, and its CLIConfig has no group fields."""
import asyncio
from datetime import datetime

import chz

from tinker_cookbook import checkpoint_utils, cli_utils, renderers
from tinker_cookbook.recipes.chat_sl import chat_datasets
from tinker_cookbook.supervised import train
from tinker_cookbook.supervised.train import LRSchedule


@chz.chz
class CLIConfig:
    log_path: str | None = None
    model_name: str = "Qwen/Qwen3.5-9B-Base"
    load_checkpoint_path: str | None = None
    dataset: str = "no_robots"

    learning_rate: float = 1e-4
    lr_schedule: LRSchedule = "linear"
    num_epochs: int = 1
    lora_rank: int = 32
    base_url: str | None = None

    save_every: int = 20
    eval_every: int = 20
    infrequent_eval_every: int = 100
    inline_evals: str | None = None

    renderer_name: str | None = None
    train_on_what: renderers.TrainOnWhat | None = None
    max_length: int | None = 16384
    batch_size: int = 256

    wandb_project: str | None = None
    wandb_name: str | None = None
    behavior_if_log_dir_exists: cli_utils.LogdirBehavior = "ask"
    max_steps: int | None = None
    rolling_save_every: int = 0
    rolling_ttl_seconds: int = 7200


def get_dataset_builder(dataset: str, model_name: str, renderer_name: str, max_length: int | None, batch_size: int,
                        train_on_what: renderers.TrainOnWhat | None = None) -> train.SupervisedDatasetBuilder:
    common = chat_datasets.ChatDatasetBuilderCommonConfig(model_name_for_tokenizer=model_name, renderer_name=renderer_name,
                                                          max_length=max_length, batch_size=batch_size,
                                                          train_on_what=train_on_what)
    if dataset == "tulu3":
        return chat_datasets.Tulu3Builder(common_config=common)
    if dataset == "no_robots":
        return chat_datasets.NoRobotsBuilder(common_config=common)
    if dataset.endswith(".jsonl"):
        return chat_datasets.FromConversationFileBuilder(common_config=common, file_path=dataset)
    raise ValueError(f"Unknown dataset: {dataset}")


def cli_main(cli_config: CLIConfig) -> None:
    run_name = (f"{cli_config.dataset}-{cli_config.model_name.replace('/', '-')}-{cli_config.lora_rank}rank-"
                f"{cli_config.learning_rate}lr-{cli_config.batch_size}batch-{datetime.now().strftime('%Y-%m-%d-%H-%M')}")
    log_path = cli_config.log_path if cli_config.log_path is not None else f"/tmp/tinker-examples/chat_sl/{run_name}"
    cli_utils.check_log_dir(log_path, behavior_if_exists=cli_config.behavior_if_log_dir_exists)
    renderer_name = checkpoint_utils.resolve_renderer_name_from_checkpoint_or_default(
        model_name=cli_config.model_name, explicit_renderer_name=cli_config.renderer_name,
        load_checkpoint_path=cli_config.load_checkpoint_path, base_url=cli_config.base_url)
    if cli_config.inline_evals is not None:
        raise ValueError(f"Unknown inline evaluator: {cli_config.inline_evals}")
    config = train.Config(
        log_path=log_path,
        model_name=cli_config.model_name,
        recipe_name="recipe_chat_sl",
        renderer_name=renderer_name,
        load_checkpoint_path=cli_config.load_checkpoint_path,
        dataset_builder=get_dataset_builder(cli_config.dataset, cli_config.model_name, renderer_name,
                                            cli_config.max_length, cli_config.batch_size, cli_config.train_on_what),
        learning_rate=cli_config.learning_rate,
        lr_schedule=cli_config.lr_schedule,
        num_epochs=cli_config.num_epochs,
        base_url=cli_config.base_url,
        wandb_project=cli_config.wandb_project,
        wandb_name=cli_config.wandb_name if cli_config.wandb_name is not None else run_name,
        lora_rank=cli_config.lora_rank,
        save_every=cli_config.save_every,
        eval_every=cli_config.eval_every,
        infrequent_eval_every=cli_config.infrequent_eval_every,
        max_steps=cli_config.max_steps,
        rolling_save_every=cli_config.rolling_save_every,
        rolling_ttl_seconds=cli_config.rolling_ttl_seconds,
    )
    asyncio.run(train.main(config))


if __name__ == "__main__":
    cli_main(chz.entrypoint(CLIConfig))
