"""Test-set evaluation during training (tinker_cookbook/rl/metric_util.py): ``RLTestSetEvaluator``
rolls out every group of the test dataset with a ``TinkerTokenCompleter`` of the config's
``max_tokens`` and returns the ``env/all/...`` metrics prefixed with its name (``test/``)."""
from __future__ import annotations

import asyncio
import itertools
from typing import Any

import tinker

from tinker_cookbook.completers import TinkerTokenCompleter
from tinker_cookbook.rl import rollouts
from tinker_cookbook.rl.types import EnvGroupBuilder, RLDataset, trajectory_group_metrics


def dataset_to_env_group_builders(dataset: RLDataset) -> list[EnvGroupBuilder]:
    return list(itertools.chain(*[dataset.get_batch(i) for i in range(len(dataset))]))


class RLTestSetEvaluator:
    def __init__(self, dataset: RLDataset, max_tokens: int, name: str = "test", num_groups_to_log: int = 4,
                 strategy: Any = None) -> None:
        self.env_group_builders_P = dataset_to_env_group_builders(dataset)
        self.max_tokens = max_tokens
        self.name = name

    async def __call__(self, sampling_client: tinker.SamplingClient, **kwargs: Any) -> dict[str, float]:
        policy = TinkerTokenCompleter(sampling_client, max_tokens=self.max_tokens)
        groups = await asyncio.gather(*(rollouts.do_group_rollout(b, policy) for b in self.env_group_builders_P))
        return {f"{self.name}/{k}": v for k, v in trajectory_group_metrics(list(groups)).items()}
