"""Rubrics (verifiers/rubrics/rubric.py, math_rubric.py): reward functions called with the arguments
they name (prompt, completion, answer, state, task, info, parser), a rollout's reward the weighted sum,
each function's value a metric under its name (weight-0 functions are metrics only). A function
that raises scores 0.0 and logs "Error calling reward function <name>: <error>"."""
from __future__ import annotations

import inspect
import logging
import time
from typing import Any, Callable

from verifiers.parsers.parser import MaybeThinkParser, Parser
from verifiers.utils.data_utils import extract_boxed_answer


class Rubric:
    def __init__(self, funcs: list[Callable] | None = None, weights: list[float] | None = None,
                 parser: Parser | None = None) -> None:
        self.logger = logging.getLogger(f"verifiers.rubrics.{type(self).__name__}")
        self.funcs = list(funcs or [])
        self.weights = list(weights or [1.0] * len(self.funcs))
        self.parser = parser or Parser()
        self.class_objects: dict[str, Any] = {"parser": self.parser}

    def add_reward_func(self, func: Callable, weight: float = 1.0) -> None:
        self.funcs.append(func)
        self.weights.append(weight)

    def add_metric(self, func: Callable, weight: float = 0.0) -> None:
        self.add_reward_func(func, weight)

    def add_rubric(self, other: "Rubric") -> None:
        """Upstream wraps both in a RubricGroup; the scores come out the same."""
        self.funcs += other.funcs
        self.weights += other.weights

    async def _call(self, func: Callable, state: dict[str, Any]) -> float:
        arguments = {"prompt": state["prompt"], "completion": state["completion"], "answer": state.get("answer", ""),
                     "state": state, "task": state["task"], "info": state.get("info", {}), **self.class_objects}
        parameters = inspect.signature(func).parameters
        if not any(p.kind == p.VAR_KEYWORD for p in parameters.values()):
            arguments = {k: v for k, v in arguments.items() if k in parameters}
        try:
            value = func(**arguments)
            return float(await value if inspect.isawaitable(value) else value)
        except Exception as error:
            self.logger.error(f"Error calling reward function {func.__name__}: {error}")
            return 0.0

    async def score_group(self, states: list[dict[str, Any]], score_sem: Any = None) -> None:
        started = time.time()
        scores = {func.__name__: [await self._call(func, s) for s in states] for func in self.funcs}
        totals = [sum(w * scores[f.__name__][i] for f, w in zip(self.funcs, self.weights)) for i in range(len(states))]
        scoring_ms = (time.time() - started) * 1000
        mean = sum(totals) / len(totals) if totals else 0.0
        for i, state in enumerate(states):
            state["reward"] = totals[i]
            state["advantage"] = totals[i] - mean
            state["metrics"] = {name: values[i] for name, values in scores.items()}
            state["timing"]["scoring_ms"] = scoring_ms
            state["timing"]["total_ms"] += scoring_ms


class MathRubric(Rubric):
    """Reward ``correct_answer``: 1.0 when the boxed answer equals the gold one (upstream verifies
    with math-verify; here numbers compare by value, other answers as trimmed text)."""

    def __init__(self, funcs: list[Callable] | None = None, weights: list[float] | None = None,
                 parser: Parser | None = None) -> None:
        super().__init__(funcs, weights, parser or MaybeThinkParser(extract_fn=extract_boxed_answer))
        self.add_reward_func(self.correct_answer)

    async def correct_answer(self, parser: Parser, completion: Any, answer: str, **kwargs: Any) -> float:
        response = (parser.parse_answer(completion) or "").strip()
        if response == "":
            self.logger.warning("Parsed response is empty")
            return 0.0
        try:
            return 1.0 if float(response.replace(",", "")) == float(str(answer).replace(",", "")) else 0.0
        except ValueError:
            return 1.0 if response == str(answer).strip() else 0.0
