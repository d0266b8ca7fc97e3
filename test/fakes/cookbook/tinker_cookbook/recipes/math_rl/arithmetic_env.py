"""The arithmetic environment of the math_rl recipe (tinker_cookbook/recipes/math_rl/arithmetic_env.py,
rl/problem_env.py): batch i has ``batch_size`` groups of ``group_size`` envs, each asking "What is
x + y?" for numbers drawn with seed i. A reply earns ``format_coef * (format - 1) + correct``.

The fake sampler answers every prompt with the same text, so nothing would be learnt: this fake
scores each group around the reward the test control file asks of batch i (tinker_cookbook/
_fake_control.py), spread over the group so that the group-relative advantages are not zero,
and reports that score as the env's ``correct`` metric with ``format`` 1."""
from __future__ import annotations

import random
from collections.abc import Sequence

import chz
import tinker

from tinker_cookbook import _fake_control, renderers
from tinker_cookbook.rl.types import Env, EnvGroupBuilder, RLDataset, RLDatasetBuilder, StepResult
from tinker_cookbook.tokenizer_utils import get_tokenizer

FEWSHOT = [{"role": "user", "content": "What is 4 + 5?"}, {"role": "assistant", "content": "9"}]


class ArithmeticEnv(Env):
    def __init__(self, x: int, y: int, renderer: renderers.Renderer, convo_prefix: list[dict] | None, reward: float) -> None:
        self.x, self.y = x, y
        self.renderer = renderer
        self.convo_prefix = convo_prefix or []
        self.reward = reward

    async def initial_observation(self) -> tuple[tinker.ModelInput, list[str]]:
        question = {"role": "user", "content": f"What is {self.x} + {self.y}?"}
        return self.renderer.build_generation_prompt(self.convo_prefix + [question]), self.renderer.get_stop_sequences()

    async def step(self, action: list[int]) -> StepResult:
        return StepResult(reward=self.reward, episode_done=True, next_observation=tinker.ModelInput.empty(),
                          metrics={"format": 1.0, "correct": self.reward})


class ProblemGroupBuilder(EnvGroupBuilder):
    def __init__(self, envs: list[ArithmeticEnv], dataset_name: str = "arithmetic") -> None:
        self.envs = envs
        self.dataset_name = dataset_name

    async def make_envs(self) -> Sequence[Env]:
        return self.envs

    def logging_tags(self) -> list[str]:
        return [self.dataset_name]


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
        target = _fake_control.reward_at(_fake_control.read_control(), index)
        spread = [0.05 * (j - (self.group_size - 1) / 2) for j in range(self.group_size)]
        return [
            ProblemGroupBuilder([ArithmeticEnv(x, y, self.renderer, FEWSHOT if self.include_fewshot else None, target + s)
                                 for s in spread])
            for x, y in ((rng.randint(0, 100), rng.randint(0, 100)) for _ in range(self.batch_size))
        ]

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
