"""Checkpoints and ``checkpoints.jsonl`` (tinker_cookbook/checkpoint_utils.py).

A save calls the SDK (``save_state_async(name, ttl_seconds=)`` for a resumable state with optimizer,
``save_weights_for_sampler_async(name, ttl_seconds=)`` for sampling weights), waits for both and
appends one record to ``<log_path>/checkpoints.jsonl``, keys in this order: ``name``, ``batch``,
``epoch``, ``final``, ``state_path``, ``sampler_path`` (each only when set), then the loop state's
other keys (``elapsed_tokens`` in supervised runs, ``rolling: true`` for rolling saves). Names are the
step as six digits ("000020") or "final"; paths are ``tinker://<run id>/weights/<name>`` and
``tinker://<run id>/sampler_weights/<name>``.

``CheckpointManager``: periodic saves (state and sampler) at steps that are multiples of
``save_every`` with ``ttl_seconds`` (the RL and SL default: 604800 s, 7 days); rolling saves (state
only, ``rolling_ttl_seconds``, the previous rolling one deleted through the REST client) every
``rolling_save_every`` steps; the final save (state and sampler, no TTL) named "final".

``get_last_checkpoint(log_dir)``: the last record that has a ``state_path``; a trainer resumes from
its ``batch`` (and ``epoch``) with ``create_training_client_from_state_with_optimizer_async``.
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import tinker

from tinker_cookbook import model_info

CHECKPOINTS_BASE_NAME = "checkpoints.jsonl"
RENDERER_NAME_METADATA_KEY = "renderer_name"

logger = logging.getLogger(__name__)


@dataclass
class CheckpointRecord:
    name: str
    batch: int | None = None
    epoch: int | None = None
    final: bool | None = None
    state_path: str | None = None
    sampler_path: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        record: dict[str, Any] = {"name": self.name}
        for key in ("batch", "epoch", "final", "state_path", "sampler_path"):
            if getattr(self, key) is not None:
                record[key] = getattr(self, key)
        record.update(self.extra)
        return record

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> "CheckpointRecord":
        known = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        return cls(**{k: record.get(k) for k in known},
                   extra={k: v for k, v in record.items() if k not in known})

    def has(self, key: str) -> bool:
        return getattr(self, key, None) is not None if key != "extra" and hasattr(self, key) else key in self.extra

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key) if hasattr(self, key) and key != "extra" else self.extra.get(key, default)


def add_renderer_name_to_user_metadata(user_metadata: dict[str, str], renderer_name: str | None) -> None:
    if renderer_name:
        user_metadata[RENDERER_NAME_METADATA_KEY] = renderer_name


async def get_renderer_name_from_checkpoint_async(service_client: tinker.ServiceClient, checkpoint_path: str) -> str | None:
    try:
        run = await service_client.create_rest_client().get_training_run_by_tinker_path_async(checkpoint_path)
        return (run.user_metadata or {}).get(RENDERER_NAME_METADATA_KEY)
    except (tinker.TinkerError, ValueError) as error:
        logger.warning("Could not fetch renderer metadata for checkpoint %s: %s", checkpoint_path, error)
        return None


async def check_renderer_name_for_checkpoint_async(service_client: tinker.ServiceClient, checkpoint_path: str,
                                                   expected_renderer_name: str | None) -> None:
    if expected_renderer_name is None:
        return
    found = await get_renderer_name_from_checkpoint_async(service_client, checkpoint_path)
    if found is None:
        logger.info("Checkpoint %s has no renderer metadata.", checkpoint_path)
    elif found != expected_renderer_name:
        logger.warning("Renderer mismatch for checkpoint %s: checkpoint=%s current=%s", checkpoint_path, found,
                       expected_renderer_name)
    else:
        logger.info("Renderer metadata matches for checkpoint %s: %s", checkpoint_path, found)


async def resolve_renderer_name_from_checkpoint_or_default_async(*, model_name: str, explicit_renderer_name: str | None,
                                                                 load_checkpoint_path: str | None,
                                                                 base_url: str | None = None) -> str:
    if explicit_renderer_name is not None:
        return explicit_renderer_name
    if load_checkpoint_path is not None:
        found = await get_renderer_name_from_checkpoint_async(tinker.ServiceClient(base_url=base_url), load_checkpoint_path)
        if found is not None:
            logger.info("Using renderer from checkpoint metadata for %s: %s", load_checkpoint_path, found)
            return found
    return model_info.get_recommended_renderer_name(model_name)


async def create_training_client_async(config: Any, resume_info: CheckpointRecord | None,
                                      wandb_link: str | None) -> tuple[tinker.ServiceClient, tinker.TrainingClient]:
    """The service and training clients both trainers start with (rl/train.py:1935-1968,
    supervised/train.py:321-356): resume from the last state with its optimizer, else start from
    ``load_checkpoint_path``'s weights, else a new LoRA on ``model_name``."""
    from tinker_cookbook.utils.git_rev import recipe_user_metadata

    service_client = tinker.ServiceClient(base_url=config.base_url, user_metadata=recipe_user_metadata(config.recipe_name))
    user_metadata: dict[str, str] = {"wandb_link": wandb_link} if wandb_link else {}
    add_renderer_name_to_user_metadata(user_metadata, config.renderer_name)
    model_info.warn_if_renderer_not_recommended(config.model_name, config.renderer_name)
    if resume_info:
        await check_renderer_name_for_checkpoint_async(service_client, resume_info.state_path, config.renderer_name)
        training_client = await service_client.create_training_client_from_state_with_optimizer_async(
            resume_info.state_path, user_metadata=user_metadata)
        logger.info(f"Resumed training from {resume_info.state_path}")
    elif config.load_checkpoint_path:
        await check_renderer_name_for_checkpoint_async(service_client, config.load_checkpoint_path, config.renderer_name)
        training_client = await service_client.create_training_client_from_state_async(
            config.load_checkpoint_path, user_metadata=user_metadata)
        logger.info(f"Loaded weights from {config.load_checkpoint_path}")
    else:
        training_client = await service_client.create_lora_training_client_async(
            base_model=config.model_name, rank=config.lora_rank, user_metadata=user_metadata)
    return service_client, training_client


def resolve_renderer_name_from_checkpoint_or_default(**kwargs: Any) -> str:
    return asyncio.run(resolve_renderer_name_from_checkpoint_or_default_async(**kwargs))


def load_checkpoints_file(log_dir: str) -> list[CheckpointRecord]:
    path = Path(log_dir) / CHECKPOINTS_BASE_NAME
    if not path.exists():
        logger.info(f"No checkpoints found at {path}")
        return []
    logger.info(f"Reading checkpoints from {path}")
    return [CheckpointRecord.from_dict(json.loads(line)) for line in path.read_text().splitlines() if line.strip()]


def get_last_checkpoint(log_dir: str, required_key: str = "state_path") -> CheckpointRecord | None:
    usable = [c for c in load_checkpoints_file(log_dir) if c.has(required_key)]
    if not usable:
        logger.info(f"No checkpoints found with key {required_key} in {log_dir}")
        return None
    logger.info(f"Found {len(usable)} valid checkpoints with key '{required_key}' in {log_dir}")
    logger.info(f"Using last checkpoint: {usable[-1]}")
    return usable[-1]


async def save_checkpoint_async(training_client: tinker.TrainingClient, name: str, log_path: str,
                                loop_state: dict[str, Any], kind: Literal["state", "sampler", "both"] = "state",
                                ttl_seconds: int | None = None) -> dict[str, str]:
    futures = {}
    if kind in ("state", "both"):
        futures["state"] = await training_client.save_state_async(name, ttl_seconds=ttl_seconds)
    if kind in ("sampler", "both"):
        futures["sampler"] = await training_client.save_weights_for_sampler_async(name, ttl_seconds=ttl_seconds)
    paths = {f"{k}_path": (await f.result_async()).path for k, f in futures.items()}
    logger.info(f"Saved checkpoints: {paths}")
    record = CheckpointRecord.from_dict({"name": name, **loop_state, **paths})
    with open(Path(log_path) / CHECKPOINTS_BASE_NAME, "a") as f:
        f.write(json.dumps(record.to_dict()) + "\n")
    return paths


class CheckpointManager:
    def __init__(self, training_client: tinker.TrainingClient, service_client: tinker.ServiceClient, log_path: str,
                 save_every: int = 0, ttl_seconds: int | None = 604800, rolling_save_every: int = 0,
                 rolling_ttl_seconds: int = 7200) -> None:
        self._training_client = training_client
        self._service_client = service_client
        self._log_path = log_path
        self._save_every = save_every
        self._ttl_seconds = ttl_seconds
        self._rolling_save_every = rolling_save_every
        self._rolling_ttl_seconds = rolling_ttl_seconds
        self._prev_rolling_state_path: str | None = None

    def should_save_periodic(self, step: int) -> bool:
        return step > 0 and self._save_every > 0 and step % self._save_every == 0

    async def save_periodic_async(self, step: int, loop_state: dict[str, Any]) -> dict[str, str]:
        return await save_checkpoint_async(self._training_client, f"{step:06d}", self._log_path, loop_state,
                                           kind="both", ttl_seconds=self._ttl_seconds)

    async def maybe_save_async(self, step: int, loop_state: dict[str, Any]) -> dict[str, str] | None:
        result = await self.save_periodic_async(step, loop_state) if self.should_save_periodic(step) else None
        await self.maybe_save_rolling_async(step, loop_state)
        return result

    async def maybe_save_rolling_async(self, step: int, loop_state: dict[str, Any]) -> None:
        if self._rolling_save_every <= 0 or step <= 0 or step % self._rolling_save_every != 0 \
                or self.should_save_periodic(step):
            return
        paths = await save_checkpoint_async(self._training_client, f"{step:06d}", self._log_path,
                                            {**loop_state, "rolling": True}, kind="state",
                                            ttl_seconds=self._rolling_ttl_seconds)
        await self._delete_prev_rolling_async()
        self._prev_rolling_state_path = paths["state_path"]

    async def save_final_async(self, loop_state: dict[str, Any]) -> dict[str, str]:
        paths = await save_checkpoint_async(self._training_client, "final", self._log_path, loop_state,
                                            kind="both", ttl_seconds=None)
        await self.finalize_async()
        return paths

    async def finalize_async(self) -> None:
        await self._delete_prev_rolling_async()

    async def _delete_prev_rolling_async(self) -> None:
        if self._prev_rolling_state_path is None:
            return
        try:
            rest = self._service_client.create_rest_client()
            await rest.delete_checkpoint_from_tinker_path_async(self._prev_rolling_state_path)
            logger.info("Deleted rolling checkpoint %s", self._prev_rolling_state_path)
        except Exception:
            logger.warning("Failed to delete rolling checkpoint %s (TTL will clean up)", self._prev_rolling_state_path,
                           exc_info=True)
        self._prev_rolling_state_path = None
