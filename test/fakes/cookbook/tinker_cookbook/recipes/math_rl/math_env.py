"""The math datasets of the math_rl recipe (tinker_cookbook/recipes/math_rl/math_env.py); the fake
keeps ``gsm8k``, the one with a test split: ``Gsm8kDatasetBuilder`` returns (train, test), the train
split shuffled with ``seed``, the test split in order with one env per group (upstream's
``group_size if split == "train" else 1``). Upstream loads openai/gsm8k from the Hugging Face hub;
the fake's hub stand-in is generated: 400 train and 60 test word problems, each a sum of two
numbers (the test problems draw other numbers than the train ones). The reply is correct when its
last integer is the sum (upstream grades a \\boxed{} answer)."""
from __future__ import annotations

import math
import random
from collections.abc import Sequence
from functools import partial
from typing import Literal

import chz

from tinker_cookbook import renderers
from tinker_cookbook import _fake_control
from tinker_cookbook.recipes.math_rl.arithmetic_env import ArithmeticEnv, controlled_group
from tinker_cookbook.rl.problem_env import ProblemGroupBuilder
from tinker_cookbook.rl.types import EnvGroupBuilder, RLDataset, RLDatasetBuilder
from tinker_cookbook.tokenizer_utils import get_tokenizer

SPLIT_SIZES = {"train": 400, "test": 60}


class MathEnv(ArithmeticEnv):
    def get_question(self) -> str:
        return (f"Natalia sold clips to {self.x} of her friends in April, and then she sold clips to {self.y} friends in May. "
                f"How many friends is that ({self.x} + {self.y})?{Gsm8kDataset.question_suffix()}")

    @staticmethod
    def standard_fewshot_prefix() -> list[dict]:
        return [{"role": "user", "content": "How many is 4 + 5?" + Gsm8kDataset.question_suffix()},
                {"role": "assistant", "content": "9"}]


def _problems(split: str) -> list[tuple[int, int]]:
    rng = random.Random(f"gsm8k-{split}")
    low, high = (0, 500) if split == "train" else (500, 999)
    return [(rng.randint(low, high), rng.randint(low, high)) for _ in range(SPLIT_SIZES[split])]


class Gsm8kDataset(RLDataset):
    def __init__(self, batch_size: int, group_size: int, renderer: renderers.Renderer,
                 convo_prefix: list[dict] | None = None, split: Literal["train", "test"] = "train", seed: int = 0) -> None:
        if split not in ("train", "test"):
            raise ValueError("split must be 'train' or 'test'")
        self.ds = _problems(split)
        if split == "train":
            random.Random(seed).shuffle(self.ds)
        self.split = split
        self.batch_size = batch_size
        self.group_size = group_size if split == "train" else 1
        self.renderer = renderer
        self.convo_prefix = convo_prefix

    @classmethod
    def question_suffix(cls) -> str:
        return " Provide a numerical answer without units, written inside \\boxed{}."

    def get_batch(self, index: int) -> Sequence[EnvGroupBuilder]:
        batch_start = index * self.batch_size
        batch_end = min((index + 1) * self.batch_size, len(self.ds))
        assert batch_start < batch_end, "Incorrect batch size"
        rows = self.ds[batch_start:batch_end]
        if self.split == "train":
            # The trainer's batches follow the control file, as math_rl's arithmetic ones do.
            target = _fake_control.reward_at(_fake_control.read_control(), index)
            return [controlled_group(x, y, self.renderer, self.convo_prefix, self.group_size, target) for x, y in rows]
        return [ProblemGroupBuilder(env_thunk=partial(MathEnv, x, y, self.renderer, convo_prefix=self.convo_prefix),
                                    num_envs=self.group_size) for x, y in rows]

    def __len__(self) -> int:
        return math.ceil(len(self.ds) / self.batch_size)


@chz.chz
class Gsm8kDatasetBuilder(RLDatasetBuilder):
    batch_size: int
    model_name_for_tokenizer: str
    renderer_name: str
    group_size: int
    convo_prefix: list | None = "standard"
    seed: int = 0

    async def __call__(self) -> tuple[Gsm8kDataset, Gsm8kDataset]:
        convo_prefix = MathEnv.standard_fewshot_prefix() if self.convo_prefix == "standard" else self.convo_prefix
        renderer = renderers.get_renderer(self.renderer_name, tokenizer=get_tokenizer(self.model_name_for_tokenizer))
        train, test = (Gsm8kDataset(batch_size=self.batch_size, group_size=self.group_size, renderer=renderer,
                                    convo_prefix=convo_prefix, split=split, seed=self.seed) for split in ("train", "test"))
        return train, test


DATASET_BUILDER_MAP = {"gsm8k": Gsm8kDatasetBuilder}


def get_math_dataset_builder(dataset_name: str, batch_size: int, model_name_for_tokenizer: str, renderer_name: str,
                             group_size: int, seed: int = 0) -> RLDatasetBuilder:
    if dataset_name not in DATASET_BUILDER_MAP:
        raise ValueError(f"Unknown math dataset: {dataset_name}. Available: {list(DATASET_BUILDER_MAP.keys())}")
    return DATASET_BUILDER_MAP[dataset_name](batch_size=batch_size, model_name_for_tokenizer=model_name_for_tokenizer,
                                             renderer_name=renderer_name, group_size=group_size, seed=seed)
