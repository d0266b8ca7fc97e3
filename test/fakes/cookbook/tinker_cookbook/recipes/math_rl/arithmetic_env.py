"""The arithmetic environment of the math_rl recipe (tinker_cookbook/recipes/math_rl/arithmetic_env.py,
rl/problem_env.py): batch i has ``batch_size`` groups of ``group_size`` envs, each asking "What is
x + y?" for numbers drawn with seed i (x, y in 0..100). A reply earns ``format_coef * (format - 1) +
correct``: correct when its last integer is x + y, format when it stopped at the stop sequence.

The trainer's batches (index < n_batches) are scored around the reward the test control file asks of
batch i (tinker_cookbook/_fake_control.py), spread over the group so that the group-relative
advantages are not zero, with that score as the env's ``correct`` metric and ``format`` 1: what a
learning model would earn, which the fake sampler is not. A batch past them (seeds the trainer never
draws: what an evaluation draws afresh) is graded as upstream grades every batch, from the reply."""
from __future__ import annotations

import random
import re
from collections.abc import Sequence
from functools import partial

import chz
import tinker

from tinker_cookbook import _fake_control, renderers
from tinker_cookbook.rl.problem_env import ProblemEnv, ProblemGroupBuilder
from tinker_cookbook.rl.types import Env, EnvGroupBuilder, RLDataset, RLDatasetBuilder, StepResult
from tinker_cookbook.tokenizer_utils import get_tokenizer

_INTEGER_PATTERN = re.compile(r"-?\d+")


def extract_final_int(text: str) -> int | None:
    matches = _INTEGER_PATTERN.findall(text.replace(",", ""))
    return int(matches[-1]) if matches else None


class ArithmeticEnv(ProblemEnv):
    def __init__(self, x: int, y: int, renderer: renderers.Renderer, convo_prefix: list[dict] | None = None,
                 format_coef: float = 0.1, require_stop_sequence_for_format: bool = True) -> None:
        super().__init__(renderer, convo_prefix, format_coef=format_coef,
                         require_stop_sequence_for_format=require_stop_sequence_for_format)
        self.x, self.y = x, y

    def get_question(self) -> str:
        return f"What is {self.x} + {self.y}?"

    def check_answer(self, sample_str: str) -> bool:
        return extract_final_int(sample_str) == self.x + self.y

    def check_format(self, sample_str: str) -> bool:
        return True

    def get_reference_answer(self) -> str:
        return str(self.x + self.y)

    @staticmethod
    def standard_fewshot_prefix() -> list[dict]:
        return [{"role": "user", "content": "What is 4 + 5?"}, {"role": "assistant", "content": "9"}]


class ControlledEnv(ArithmeticEnv):
    """A training batch's env: the control file's reward, whatever the reply."""

    def __init__(self, x: int, y: int, renderer: renderers.Renderer, convo_prefix: list[dict] | None, reward: float) -> None:
        super().__init__(x, y, renderer, convo_prefix)
        self.reward = reward

    async def step(self, action: list[int]) -> StepResult:
        return StepResult(reward=self.reward, episode_done=True, next_observation=tinker.ModelInput.empty(),
                          metrics={"format": 1.0, "correct": self.reward})


class ControlledGroupBuilder(EnvGroupBuilder):
    def __init__(self, envs: list[Env], dataset_name: str = "arithmetic") -> None:
        self.envs = envs
        self.dataset_name = dataset_name

    async def make_envs(self) -> Sequence[Env]:
        return self.envs

    def logging_tags(self) -> list[str]:
        return [self.dataset_name]


def controlled_group(x: int, y: int, renderer: renderers.Renderer, prefix: list[dict] | None, group_size: int,
                     target: float) -> ControlledGroupBuilder:
    spread = [0.05 * (j - (group_size - 1) / 2) for j in range(group_size)]
    return ControlledGroupBuilder([ControlledEnv(x, y, renderer, prefix, target + s) for s in spread])


class ArithmeticDataset(RLDataset):
    def __init__(self, batch_size: int, renderer: renderers.Renderer, group_size: int, n_batches: int = 100,
                 include_fewshot: bool = True) -> None:
        self.batch_size = batch_size
        self.renderer = renderer
        self.group_size = group_size
        self.n_batches = n_batches
        self.include_fewshot = include_fewshot

    def get_batch(self, index: int) -> Sequence[EnvGroupBuilder]:
        rng = random.Random(index)
        pairs = [(rng.randint(0, 100), rng.randint(0, 100)) for _ in range(self.batch_size)]
        prefix = ArithmeticEnv.standard_fewshot_prefix() if self.include_fewshot else None
        if index < self.n_batches:
            target = _fake_control.reward_at(_fake_control.read_control(), index)
            return [controlled_group(x, y, self.renderer, prefix, self.group_size, target) for x, y in pairs]
        return [ProblemGroupBuilder(env_thunk=partial(ArithmeticEnv, x, y, convo_prefix=prefix, renderer=self.renderer),
                                    num_envs=self.group_size) for x, y in pairs]

    def __len__(self) -> int:
        return self.n_batches


@chz.chz
class ArithmeticDatasetBuilder(RLDatasetBuilder):
    batch_size: int
    model_name_for_tokenizer: str
    renderer_name: str
    n_batches: int
    group_size: int
    include_fewshot: bool = True

    async def __call__(self) -> tuple[ArithmeticDataset, None]:
        renderer = renderers.get_renderer(self.renderer_name, tokenizer=get_tokenizer(self.model_name_for_tokenizer))
        return ArithmeticDataset(batch_size=self.batch_size, renderer=renderer, n_batches=self.n_batches,
                                 include_fewshot=self.include_fewshot, group_size=self.group_size), None
