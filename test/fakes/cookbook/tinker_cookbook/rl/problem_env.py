"""Single-turn question environments (tinker_cookbook/rl/problem_env.py): the reply is parsed with
the renderer and scored ``format_coef * (format - 1) + correct``, where format is "stopped at the
stop sequence" (``require_stop_sequence_for_format``) and the subclass's check_format, and correct
its check_answer."""
from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import tinker

from tinker_cookbook import renderers
from tinker_cookbook.rl.types import Env, EnvGroupBuilder, StepResult


class ProblemEnv(Env):
    def __init__(self, renderer: renderers.Renderer, convo_prefix: list[renderers.Message] | None = None,
                 format_coef: float = 0.1, require_stop_sequence_for_format: bool = True) -> None:
        self.renderer = renderer
        self.convo_prefix = convo_prefix or []
        self.format_coef = format_coef
        self.require_stop_sequence_for_format = require_stop_sequence_for_format

    @property
    def stop_condition(self) -> list[str]:
        return self.renderer.get_stop_sequences()

    @abstractmethod
    def get_question(self) -> str: ...

    @abstractmethod
    def check_answer(self, sample_str: str) -> bool: ...

    @abstractmethod
    def check_format(self, sample_str: str) -> bool: ...

    @abstractmethod
    def get_reference_answer(self) -> str: ...

    async def initial_observation(self) -> tuple[tinker.ModelInput, list[str]]:
        convo = self.convo_prefix + [{"role": "user", "content": self.get_question()}]
        return self.renderer.build_generation_prompt(convo), self.stop_condition

    async def step(self, action: list[int]) -> StepResult:
        message, termination = self.renderer.parse_response(action)
        content = renderers.get_text_content(message)
        well_formed = termination.is_stop_sequence if self.require_stop_sequence_for_format else termination.is_clean
        correct_format = float(well_formed) and float(self.check_format(content))
        correct_answer = float(self.check_answer(content))
        return StepResult(reward=self.format_coef * (correct_format - 1) + correct_answer, episode_done=True,
                          next_observation=tinker.ModelInput.empty(), next_stop_condition=self.stop_condition,
                          metrics={"format": correct_format, "correct": correct_answer})


@dataclass(frozen=True)
class ProblemGroupBuilder(EnvGroupBuilder):
    env_thunk: Callable[[], Env]
    num_envs: int
    dataset_name: str = "problems"

    async def make_envs(self) -> Sequence[Env]:
        return [self.env_thunk() for _ in range(self.num_envs)]

    def logging_tags(self) -> list[str]:
        return [self.dataset_name]
