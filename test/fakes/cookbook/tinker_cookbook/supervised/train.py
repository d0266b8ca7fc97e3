"""The supervised trainer (tinker_cookbook/supervised/train.py).

Like the RL trainer it writes config.json, logs.log, metrics.jsonl and checkpoints.jsonl (see
utils/ml_log.py, checkpoint_utils.py) and resumes from the last record with a ``state_path``, but:
steps run over ``num_epochs`` x batches (``max_steps`` caps them); a metrics row holds ``step``,
``epoch``, ``progress``, ``learning_rate`` (scheduled), ``num_sequences``, ``num_tokens``,
``num_loss_tokens``, ``train_mean_nll``, ``time/...`` (no ``env/``, ``optim/`` or ``progress/``
keys); the loss is ``cross_entropy``; checkpoint records carry ``epoch``, ``batch`` (the batch of
that step, which a resume runs again) and ``elapsed_tokens``; the final record is
``{"name": "final", "batch": 0, "epoch": num_epochs, ...}``.
"""
from __future__ import annotations

import logging
import math
import time
from pathlib import Path
from typing import Any, Literal

import chz
import tinker

from tinker_cookbook import _fake_control, checkpoint_utils
from tinker_cookbook.exceptions import ConfigurationError
from tinker_cookbook.utils import ml_log

logger = logging.getLogger(__name__)

LRSchedule = Literal["linear", "cosine", "constant"]


class SupervisedDataset:
    def get_batch(self, index: int) -> list[tinker.Datum]:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def set_epoch(self, seed: int = 0) -> None:
        pass


class SupervisedDatasetBuilder:
    def __call__(self) -> tuple[SupervisedDataset, SupervisedDataset | None]:
        raise NotImplementedError


@chz.chz
class Config:
    log_path: str = chz.field(munger=lambda _, s: str(Path(s).expanduser()))
    model_name: str
    recipe_name: str
    load_checkpoint_path: str | None = None
    renderer_name: str | None = None
    dataset_builder: SupervisedDatasetBuilder
    learning_rate: float = 1e-4
    lr_schedule: LRSchedule = "linear"
    num_epochs: int = 1
    lora_rank: int = 32
    base_url: str | None = None
    evaluator_builders: list = chz.field(default_factory=list)
    infrequent_evaluator_builders: list = chz.field(default_factory=list)
    save_every: int = 20
    save_every_tokens: int = 0
    save_every_seconds: float = 0.0
    eval_every: int = 10
    infrequent_eval_every: int = 100
    ttl_seconds: int | None = 604800
    rolling_save_every: int = 0
    rolling_ttl_seconds: int = 7200
    async_periodic_saves: bool = False
    adam_beta1: float = 0.9
    adam_beta2: float = 0.95
    adam_eps: float = 1e-8
    wandb_project: str | None = None
    wandb_name: str | None = None
    enable_trace: bool = False
    span_chart_every: int = 0
    max_steps: int | None = None


def compute_schedule_lr_multiplier(lr_schedule: LRSchedule, step: int, total_steps: int) -> float:
    if total_steps <= 0:
        raise ConfigurationError(f"total_steps must be positive, got {total_steps}")
    if lr_schedule == "linear":
        return 1 - step / total_steps
    if lr_schedule == "cosine":
        return 0.5 * (1 + math.cos(math.pi * step / total_steps))
    if lr_schedule == "constant":
        return 1
    raise ConfigurationError(f"Unknown learning rate schedule: {lr_schedule}")


def compute_mean_nll(logprobs: list[list[float]], weights: list[list[float]]) -> float:
    total = sum(w for ws in weights for w in ws)
    return -sum(lp * w for lps, ws in zip(logprobs, weights) for lp, w in zip(lps, ws)) / total if total else 0.0


async def main(config: Config) -> None:
    _fake_control.at_trainer_start()
    resume_info = checkpoint_utils.get_last_checkpoint(config.log_path)
    start_epoch = (resume_info.epoch or 0) if resume_info else 0
    start_batch = resume_info.batch if resume_info else 0
    elapsed_tokens = int(resume_info.get("elapsed_tokens", 0)) if resume_info else 0

    ml_logger = ml_log.setup_logging(log_dir=config.log_path, wandb_project=config.wandb_project,
                                     wandb_name=config.wandb_name, config=config)
    service_client, training_client = await checkpoint_utils.create_training_client_async(
        config, resume_info, ml_logger.get_logger_url())

    checkpoint_mgr = checkpoint_utils.CheckpointManager(
        training_client=training_client, service_client=service_client, log_path=config.log_path,
        save_every=config.save_every, ttl_seconds=config.ttl_seconds, rolling_save_every=config.rolling_save_every,
        rolling_ttl_seconds=config.rolling_ttl_seconds)
    dataset, _test = config.dataset_builder()
    n_batches = len(dataset)
    total_steps = n_batches * config.num_epochs
    if config.max_steps is not None:
        total_steps = min(total_steps, config.max_steps)
    logger.info(f"Training for {n_batches} batches x {config.num_epochs} epochs = {n_batches * config.num_epochs} steps")

    for epoch in range(start_epoch, config.num_epochs):
        logger.info(f"Starting epoch {epoch}")
        dataset.set_epoch(seed=epoch)
        for batch in range(start_batch if epoch == start_epoch else 0, n_batches):
            step = epoch * n_batches + batch
            if config.max_steps is not None and step >= config.max_steps:
                break
            started = time.time()
            lr = config.learning_rate * compute_schedule_lr_multiplier(config.lr_schedule, step, max(total_steps, 1))
            metrics: dict[str, Any] = {"epoch": epoch, "progress": step / max(total_steps, 1), "learning_rate": lr}
            await _fake_control.before_step(step)
            data = dataset.get_batch(batch)
            fwd_bwd = await training_client.forward_backward_async(data, loss_fn="cross_entropy")
            optim = await training_client.optim_step_async(tinker.AdamParams(
                learning_rate=lr, beta1=config.adam_beta1, beta2=config.adam_beta2, eps=config.adam_eps))
            num_tokens = sum(d.model_input.length for d in data)
            elapsed_tokens += num_tokens
            metrics["progress"] = min((step + 1) / max(total_steps, 1), 1.0)
            await checkpoint_mgr.maybe_save_async(step, {"epoch": epoch, "batch": batch, "elapsed_tokens": elapsed_tokens})
            outputs = (await fwd_bwd.result_async()).loss_fn_outputs
            metrics.update((await optim.result_async()).metrics or {})
            weights = [d.loss_fn_inputs["weights"].tolist() for d in data]
            metrics.update(num_sequences=len(data), num_tokens=num_tokens,
                           num_loss_tokens=sum(sum(w) for w in weights),
                           train_mean_nll=compute_mean_nll([o["logprobs"].tolist() for o in outputs], weights))
            metrics["time/total"] = time.time() - started
            ml_logger.log_metrics(metrics=metrics, step=step)

    if start_epoch < config.num_epochs and (config.max_steps is None or start_epoch * n_batches + start_batch < config.max_steps):
        await checkpoint_mgr.save_final_async(loop_state={"epoch": config.num_epochs, "batch": 0,
                                                          "elapsed_tokens": elapsed_tokens})
    else:
        logger.info("Training was already complete; nothing to do")
        await checkpoint_mgr.finalize_async()
    ml_logger.close()
    logger.info("Training completed successfully")
