"""The verifiers environment as an RL dataset (tinker_cookbook/recipes/verifiers_rl/verifiers_env.py):
``vf.load_environment(vf_env_id, **vf_env_args)``, its train dataset (``get_dataset(n=dataset_n,
seed=dataset_seed)``) cut into batches of ``groups_per_batch`` rows (the last one may be short;
ceil(rows / groups_per_batch) batches), each row one group of ``group_size`` rollouts. No test set."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import chz
import tinker
import verifiers as vf

from tinker_cookbook.rl.types import EnvGroupBuilder, RLDataset, RLDatasetBuilder, Trajectory, TrajectoryGroup, Transition
from tinker_cookbook.completers import TokensWithLogprobs


def convert_states_to_trajectory_group(states: list[dict[str, Any]]) -> TrajectoryGroup:
    trajectories, rewards, metrics = [], [], []
    for state in states:
        steps = state.get("trajectory", [])
        transitions = []
        for i, step in enumerate(steps):
            tokens = step.get("tokens")
            transitions.append(Transition(
                ob=tinker.ModelInput.from_ints(tokens.get("prompt_ids", [])) if tokens else tinker.ModelInput.empty(),
                ac=TokensWithLogprobs(tokens.get("completion_ids", []) if tokens else [],
                                      tokens.get("completion_logprobs", []) if tokens else []),
                reward=0.0, episode_done=i == len(steps) - 1, metrics={}))
        trajectories.append(Trajectory(transitions))
        rewards.append(state.get("reward") or 0.0)
        metrics.append(state.get("metrics") or {})
    return TrajectoryGroup(trajectories, rewards, metrics)


class VerifiersEnvGroupBuilder(EnvGroupBuilder):
    def __init__(self, vf_env: Any, prompt: Any, example_id: int, task: str, answer: str = "", info: dict | None = None):
        self.vf_env = vf_env
        self.prompt = prompt
        self.example_id = example_id
        self.task = task
        self.answer = answer
        self.info = info or {}

    def get_rollout_inputs(self, group_size: int) -> list[vf.RolloutInput]:
        return [vf.RolloutInput(prompt=self.prompt, answer=self.answer, task=self.task, info=self.info,
                                example_id=self.example_id) for _ in range(group_size)]

    async def make_envs(self) -> list:
        return []

    def logging_tags(self) -> list[str]:
        return [self.task] if self.task else []


class VerifiersRLDataset(RLDataset):
    def __init__(self, rows: list[dict], vf_env: Any, groups_per_batch: int) -> None:
        self.rows = rows
        self.vf_env = vf_env
        self.groups_per_batch = groups_per_batch

    def __len__(self) -> int:
        return (len(self.rows) + self.groups_per_batch - 1) // self.groups_per_batch

    def get_batch(self, index: int) -> Sequence[EnvGroupBuilder]:
        start = index * self.groups_per_batch
        return [VerifiersEnvGroupBuilder(self.vf_env, row["prompt"], row["example_id"], row["task"],
                                         row.get("answer", ""), row.get("info", {}))
                for row in self.rows[start:start + self.groups_per_batch]]


@chz.chz
class VerifiersRLDatasetBuilder(RLDatasetBuilder):
    vf_env_id: str
    vf_env_args: dict = chz.field(default_factory=dict)
    groups_per_batch: int = 32
    dataset_n: int = -1
    dataset_seed: int | None = None

    async def __call__(self) -> tuple[RLDataset, RLDataset | None]:
        vf_env = vf.load_environment(self.vf_env_id, **self.vf_env_args)
        ds = vf_env.get_dataset(n=self.dataset_n, seed=self.dataset_seed)
        rows = [{"prompt": ds["prompt"][i], "example_id": ds["example_id"][i], "task": ds["task"][i],
                 **({"answer": ds["answer"][i]} if "answer" in ds.column_names else {}),
                 **({"info": ds["info"][i]} if "info" in ds.column_names else {})}
                for i in range(len(ds))]
        return VerifiersRLDataset(rows, vf_env, self.groups_per_batch), None
