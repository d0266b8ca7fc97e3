"""The RL trainer (tinker_cookbook/rl/train.py), its synchronous on-policy loop.

``main(config)``:
1. ``ml_log.setup_logging``: config.json, code.diff, logs.log (see utils/ml_log.py).
2. ``get_last_checkpoint(log_path)``: with a record holding a ``state_path``, training resumes at
   that record's ``batch`` from ``create_training_client_from_state_with_optimizer_async(state_path)``
   and logs "Resumed training from <state_path>"; else ``load_checkpoint_path`` (weights only) or a
   new ``create_lora_training_client_async(model_name, rank=lora_rank)``. An unknown or retired
   base model fails here with the service's error (a traceback, exit code 1).
3. "Will train on <n> batches": n = len(dataset), or ``max_steps`` when smaller.
4. For each batch i from the start batch: first, when i is a multiple of ``eval_every`` (> 0), the
   evaluators with the current sampling client (the test set's ``RLTestSetEvaluator`` when the
   dataset builder returned one: its ``env/all`` keys prefixed ``test/`` in the row; at i = 0 the untrained
   weights); then sample every group with the current sampling client,
   train (``forward_backward_async`` + ``optim_step_async`` per substep), then save a checkpoint
   when i+1 is a multiple of ``save_every`` (state + sampler, ``ttl_seconds``, record batch i+1)
   and sample from it, else from ``save_weights_and_get_sampling_client_async()``; then one
   metrics.jsonl row with step i: ``progress/batch``, ``optim/lr``, ``progress/done_frac`` ((i+1)/n),
   ``env/all/...`` (token counts ``total_ac_tokens``/``total_ob_tokens``, ``reward/total``, ...),
   ``optim/kl_sample_train_v1``/``_v2``, ``optim/entropy``, ``time/...``.
5. The final checkpoint (record "final", batch n, no TTL), unless the start batch was already n
   ("Training was already complete; nothing to do"); then "Training completed successfully".
An exception anywhere ends the process with its traceback on stderr (logs.log does not get it).
Not modelled: evaluator_builders (other evaluators than the test set), async and streaming-minibatch modes,
KL penalties, trace files, per-iteration rollout dumps.
"""
from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Any

import chz
import tinker

from tinker_cookbook import _fake_control, checkpoint_utils
from tinker_cookbook.exceptions import ConfigurationError
from tinker_cookbook.rl import rollouts
from tinker_cookbook.rl.rollouts import TinkerTokenCompleter
from tinker_cookbook.rl.metric_util import RLTestSetEvaluator
from tinker_cookbook.rl.types import RLDataset, RLDatasetBuilder, TrajectoryGroup, trajectory_group_metrics
from tinker_cookbook.utils import ml_log

logger = logging.getLogger(__name__)


@chz.chz
class KLReferenceConfig:
    base_model: str
    load_checkpoint_path: str | None = None


@chz.chz
class StreamMinibatchConfig:
    groups_per_batch: int
    num_minibatches: int


@chz.chz
class AsyncConfig:
    max_steps_off_policy: int
    groups_per_batch: int


@chz.chz
class Config:
    learning_rate: float
    dataset_builder: RLDatasetBuilder
    model_name: str
    recipe_name: str
    max_tokens: int
    log_path: str = chz.field(munger=lambda _, s: str(Path(s).expanduser()))
    eval_every: int = 20
    save_every: int = 20
    evaluator_builders: list = chz.field(default_factory=list)
    load_checkpoint_path: str | None = None
    renderer_name: str | None = None
    wandb_project: str | None = None
    wandb_name: str | None = None
    kl_penalty_coef: float = 0.0
    kl_discount_factor: float = 0.0
    kl_reference_config: KLReferenceConfig | None = None
    loss_fn: str = "importance_sampling"
    loss_fn_config: dict[str, Any] | None = None
    num_substeps: int = 1
    lora_rank: int = 32
    temperature: float = 1.0
    compute_post_kl: bool = False
    remove_constant_reward_groups: bool = False
    rollout_error_tolerance: bool | None = None
    termination: Any = None
    enable_trace: bool = False
    span_chart_every: int = 0
    async_config: AsyncConfig | None = None
    stream_minibatch_config: StreamMinibatchConfig | None = None
    base_url: str | None = None
    ttl_seconds: int | None = 604800
    rolling_save_every: int = 0
    rolling_ttl_seconds: int = 7200
    num_groups_to_log: int = 4
    rollout_json_export: bool = True
    max_steps: int | None = None


def _datum(transition: Any, advantage: float) -> tinker.Datum:
    """One trajectory as training data: the prompt and all but the last sampled token in, the
    sampled tokens as targets with their sampling logprobs and the group-relative advantage."""
    prompt = transition.ob.to_ints()
    tokens = prompt + transition.ac.tokens
    n_prompt = len(prompt) - 1
    return tinker.Datum(
        model_input=tinker.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={
            "target_tokens": tokens[1:],
            "logprobs": [0.0] * n_prompt + transition.ac.logprobs,
            "advantages": [0.0] * n_prompt + [advantage] * len(transition.ac.tokens),
            "mask": [0.0] * n_prompt + [1.0] * len(transition.ac.tokens),
        },
    )


def assemble_training_data(groups: list[TrajectoryGroup]) -> list[tinker.Datum]:
    data = []
    for group in groups:
        rewards = group.get_total_rewards()
        mean = sum(rewards) / len(rewards)
        for trajectory, reward in zip(group.trajectories_G, rewards):
            data += [_datum(t, reward - mean) for t in trajectory.transitions if t.ac.tokens]
    return data


def _remove_mask(datum: tinker.Datum) -> tinker.Datum:
    return tinker.Datum(model_input=datum.model_input,
                        loss_fn_inputs={k: v for k, v in datum.loss_fn_inputs.items() if k != "mask"})


def compute_kl_sample_train(data: list[tinker.Datum], training_logprobs: list[list[float]]) -> dict[str, float]:
    diffs, sampled = [], []
    for datum, train in zip(data, training_logprobs):
        for s, t, m in zip(datum.loss_fn_inputs["logprobs"].tolist(), train, datum.loss_fn_inputs["mask"].tolist()):
            if m > 0:
                diffs.append(s - t)
                sampled.append(s)
    if not diffs:
        return {}
    return {
        "optim/kl_sample_train_v1": sum(diffs) / len(diffs),
        "optim/kl_sample_train_v2": 0.5 * sum(d * d for d in diffs) / len(diffs),
        "optim/entropy": -sum(sampled) / len(sampled),
    }


async def train_step(data: list[tinker.Datum], training_client: tinker.TrainingClient, learning_rate: float,
                     num_substeps: int, loss_fn: str, loss_fn_config: dict[str, Any] | None,
                     metrics: dict[str, Any]) -> list[list[float]]:
    adam = tinker.AdamParams(learning_rate=learning_rate, beta1=0.9, beta2=0.95, eps=1e-8)
    size = -(-len(data) // max(1, min(num_substeps, len(data))))
    logprobs: list[list[float]] = []
    for start in range(0, len(data), size):
        batch = [_remove_mask(d) for d in data[start:start + size]]
        fwd_bwd = await training_client.forward_backward_async(batch, loss_fn=loss_fn, loss_fn_config=loss_fn_config)
        optim = await training_client.optim_step_async(adam)
        logprobs += [out["logprobs"].tolist() for out in (await fwd_bwd.result_async()).loss_fn_outputs]
        metrics.update((await optim.result_async()).metrics or {})
    return logprobs


async def do_sync_training(start_batch: int, end_batch: int, config: Config, training_client: tinker.TrainingClient,
                           dataset: RLDataset, ml_logger: ml_log.Logger,
                           checkpoint_mgr: checkpoint_utils.CheckpointManager,
                           evaluators: list[RLTestSetEvaluator] | None = None) -> None:
    sampling_client = await training_client.save_weights_and_get_sampling_client_async()
    for i_batch in range(start_batch, end_batch):
        started = time.time()
        metrics: dict[str, Any] = {
            "progress/batch": i_batch,
            "optim/lr": config.learning_rate,
            "progress/done_frac": (i_batch + 1) / end_batch,
        }
        timing: dict[str, float] = {}
        if config.eval_every > 0 and i_batch % config.eval_every == 0:
            for evaluator in evaluators or []:
                metrics.update(await evaluator(sampling_client))
        builders = dataset.get_batch(i_batch)
        policy = TinkerTokenCompleter(sampling_client, max_tokens=config.max_tokens, temperature=config.temperature)
        sampling_started = time.time()
        await _fake_control.before_step(i_batch)
        groups = list(await asyncio.gather(*(rollouts.do_group_rollout_and_filter_constant_reward(
            b, policy, termination=config.termination) for b in builders)))
        timing["time/sampling"] = time.time() - sampling_started

        metrics.update(trajectory_group_metrics(groups))
        data = assemble_training_data(groups)
        training_started = time.time()
        training_logprobs = await train_step(data, training_client, config.learning_rate, config.num_substeps,
                                             config.loss_fn, config.loss_fn_config, metrics)
        timing["time/train_step"] = time.time() - training_started
        metrics.update(compute_kl_sample_train(data, training_logprobs))

        saving_started = time.time()
        if checkpoint_mgr.should_save_periodic(i_batch + 1):
            paths = await checkpoint_mgr.save_periodic_async(i_batch + 1, {"batch": i_batch + 1})
            sampling_client = training_client.create_sampling_client(paths["sampler_path"])
        else:
            sampling_client = await training_client.save_weights_and_get_sampling_client_async()
        await checkpoint_mgr.maybe_save_rolling_async(i_batch + 1, {"batch": i_batch + 1})
        timing["time/save_checkpoint"] = time.time() - saving_started
        metrics.update(timing)
        metrics["time/total"] = time.time() - started
        ml_logger.log_metrics(metrics, step=i_batch)


async def main(config: Config) -> None:
    _fake_control.at_trainer_start()
    ml_logger = ml_log.setup_logging(log_dir=config.log_path, wandb_project=config.wandb_project, config=config,
                                     wandb_name=config.wandb_name)
    logging.getLogger("httpx").setLevel(logging.WARNING)

    resume_info = checkpoint_utils.get_last_checkpoint(config.log_path)
    start_batch = resume_info.batch if resume_info else 0

    service_client, training_client = await checkpoint_utils.create_training_client_async(
        config, resume_info, ml_logger.get_logger_url())

    dataset, maybe_test_dataset = await config.dataset_builder()
    evaluators = [RLTestSetEvaluator(maybe_test_dataset, max_tokens=config.max_tokens)] if maybe_test_dataset is not None else []
    end_batch = min(config.max_steps, len(dataset)) if config.max_steps is not None else len(dataset)
    logger.info(f"Will train on {end_batch} batches")
    if config.kl_penalty_coef > 0 and config.kl_reference_config is None:
        raise ConfigurationError("kl_reference_config must be specified when kl_penalty_coef > 0")

    checkpoint_mgr = checkpoint_utils.CheckpointManager(
        training_client=training_client, service_client=service_client, log_path=config.log_path,
        save_every=config.save_every, ttl_seconds=config.ttl_seconds, rolling_save_every=config.rolling_save_every,
        rolling_ttl_seconds=config.rolling_ttl_seconds)
    await do_sync_training(start_batch, end_batch, config, training_client, dataset, ml_logger, checkpoint_mgr, evaluators)

    if start_batch < end_batch:
        await checkpoint_mgr.save_final_async(loop_state={"batch": end_batch})
    else:
        logger.info("Training was already complete; nothing to do")
        await checkpoint_mgr.finalize_async()
    ml_logger.close()
    logger.info("Training completed successfully")
