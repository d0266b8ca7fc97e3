"""RL types (tinker_cookbook/rl/types.py): an ``Env`` answers one sampled action with a reward, an
``EnvGroupBuilder`` makes the group of envs that share one problem, an ``RLDataset`` hands out
the builders of batch i, an ``RLDatasetBuilder`` (a chz class, dumped into config.json) makes the
train and optional test datasets."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import tinker

from tinker_cookbook.completers import TokensWithLogprobs

Metrics = dict[str, float]


@dataclass
class StepResult:
    reward: float
    episode_done: bool
    next_observation: tinker.ModelInput
    next_stop_condition: Any = None
    metrics: Metrics = field(default_factory=dict)


class Env:
    async def initial_observation(self) -> tuple[tinker.ModelInput, list[str]]:
        raise NotImplementedError

    async def step(self, action: list[int]) -> StepResult:
        raise NotImplementedError


@dataclass
class Transition:
    ob: tinker.ModelInput
    ac: TokensWithLogprobs
    reward: float
    episode_done: bool
    metrics: Metrics = field(default_factory=dict)


@dataclass
class Trajectory:
    transitions: list[Transition]


@dataclass
class TrajectoryGroup:
    trajectories_G: list[Trajectory]
    final_rewards_G: list[float]
    metrics_G: list[Metrics]

    def get_total_rewards(self) -> list[float]:
        return [sum(t.reward for t in traj.transitions) + final
                for traj, final in zip(self.trajectories_G, self.final_rewards_G)]


class EnvGroupBuilder:
    async def make_envs(self) -> Sequence[Env]:
        raise NotImplementedError

    async def compute_group_rewards(self, trajectory_group: list[Trajectory], env_group: Sequence[Env]) -> list[tuple[float, Metrics]]:
        """Rewards given to the group as a whole, added to each trajectory's (none by default)."""
        return [(0.0, {}) for _ in trajectory_group]

    def logging_tags(self) -> list[str]:
        return []


class RLDataset:
    def get_batch(self, index: int) -> Sequence[EnvGroupBuilder]:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError


class RLDatasetBuilder:
    async def __call__(self) -> tuple[RLDataset, RLDataset | None]:
        raise NotImplementedError


def trajectory_group_metrics(groups: list[TrajectoryGroup]) -> dict[str, Any]:
    """The ``env/all/...`` keys of a metrics row (tinker_cookbook/rl/metric_util.py
    compute_trajectory_metrics): token and turn counts, ``reward/total``, the means of the envs' own
    metrics, and the share of groups whose rewards are mixed, all good (>= 0.5) or all bad."""
    trajectories = [t for g in groups for t in g.trajectories_G]
    transitions = [tr for t in trajectories for tr in t.transitions]
    ac_tokens = sum(len(tr.ac.tokens) for tr in transitions)
    ob_tokens = sum(tr.ob.length for tr in transitions)
    turns = len(transitions)
    rewards = [r for g in groups for r in g.get_total_rewards()]
    metrics: dict[str, Any] = {
        "ac_tokens_per_turn": ac_tokens / turns if turns else 0.0,
        "ob_tokens_per_turn": ob_tokens / turns if turns else 0.0,
        "turns_per_episode": turns / len(trajectories) if trajectories else 0.0,
        "total_episodes": len(trajectories),
        "total_turns": turns,
        "total_ac_tokens": ac_tokens,
        "total_ob_tokens": ob_tokens,
        "reward/total": sum(rewards) / len(rewards) if rewards else 0.0,
    }
    env_metrics = [tr.metrics for tr in transitions] + [m for g in groups for m in g.metrics_G]
    for key in dict.fromkeys(k for m in env_metrics for k in m):
        values = [m[key] for m in env_metrics if key in m]
        metrics[key] = sum(values) / len(values)
    mixed = good = bad = 0
    for group in groups:
        totals = group.get_total_rewards()
        if len(set(totals)) > 1:
            mixed += 1
        elif totals[0] >= 0.5:
            good += 1
        else:
            bad += 1
    n = len(groups) or 1
    metrics.update({"by_group/frac_mixed": mixed / n if groups else 0.0, "by_group/frac_all_good": good / n if groups else 0.0,
                    "by_group/frac_all_bad": bad / n if groups else 0.0})
    return {f"env/all/{k}": v for k, v in metrics.items()}
