"""Environments (verifiers/envs/environment.py, multiturn_env.py, singleturn_env.py at v0.1.9.post3).

An environment holds a dataset (rows with ``question``/``answer``, turned into chat ``prompt``s with
the system prompt, an ``example_id`` and a ``task``, which is the env id at construction time or
"default"), a parser and a rubric. ``evaluate``/``evaluate_sync`` take ``num_examples`` rows of the
eval dataset (the train dataset when there is none), repeat the whole list ``rollouts_per_example``
times, run each example's rollouts as one group against an OpenAI-compatible client (chat
completions; ``max_tokens`` sent as ``max_completion_tokens``, None values dropped), score each
group with the rubric and return the v0.1.9 ``GenerateOutputs`` sorted by example_id. A failed
model call is recorded as ``state["error"]`` (a ``vf.ModelError`` caused by the client's error) and
stops the rollout (stop condition ``has_error``); the rubric still scores it."""
from __future__ import annotations

import asyncio
import copy
import logging
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any

from verifiers.dataset import Dataset
from verifiers.errors import EmptyModelResponseError, Error, ModelError
from verifiers.parsers.parser import Parser
from verifiers.rubrics.rubric import Rubric
from verifiers.types import GenerateMetadata, GenerateOutputs, State
from verifiers.utils.async_utils import maybe_semaphore


def _as_dataset(data: Any) -> Dataset | None:
    if data is None:
        return None
    if callable(data) and not isinstance(data, Dataset):
        data = data()
    return data if isinstance(data, Dataset) else Dataset(data)


class Environment:
    def __init__(self, dataset: Any = None, eval_dataset: Any = None, system_prompt: str | None = None,
                 few_shot: list[dict[str, Any]] | None = None, parser: Parser | None = None,
                 rubric: Rubric | None = None, sampling_args: dict[str, Any] | None = None,
                 message_type: str = "chat", env_id: str | None = None, env_args: dict | None = None,
                 max_workers: int = 512, **kwargs: Any) -> None:
        self.logger = logging.getLogger(f"verifiers.envs.{type(self).__name__}")
        self.message_type = message_type
        self.system_prompt = system_prompt
        self.few_shot = few_shot
        self.parser = parser or Parser()
        self.rubric = rubric or Rubric()
        self.env_id = env_id or ""
        self.env_args = env_args or {}
        self.max_workers = max_workers
        self.dataset = self._format_dataset(_as_dataset(dataset))
        self.eval_dataset = self._format_dataset(_as_dataset(eval_dataset))
        if self.dataset is None and self.eval_dataset is None:
            raise ValueError("Either dataset or eval_dataset must be provided")
        self.sampling_args: dict[str, Any] = {"n": 1, "extra_body": {}}
        for key, value in (sampling_args or {}).items():
            if key == "extra_body":
                self.sampling_args["extra_body"].update(value)
            else:
                self.sampling_args[key] = value
        for key, value in kwargs.items():
            setattr(self, key, value)

    def _format_dataset(self, dataset: Dataset | None) -> Dataset | None:
        if dataset is None:
            return None
        if "example_id" not in dataset.column_names:
            dataset = dataset.add_column("example_id", range(len(dataset)))
        if "prompt" not in dataset.column_names:
            def prompt(row: dict[str, Any]) -> dict[str, Any]:
                messages = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
                return {"prompt": messages + list(self.few_shot or []) + [{"role": "user", "content": row["question"]}]}
            dataset = dataset.map(prompt)
        if "task" not in dataset.column_names:
            task = self.env_id or "default"
            dataset = dataset.map(lambda row: {"task": task})
        return dataset

    def get_dataset(self, n: int = -1, seed: int | None = None) -> Dataset:
        if self.dataset is None:
            raise ValueError("dataset is not set")
        if seed is not None:
            self.dataset = self.dataset.shuffle(seed=seed)
        if n > 0:
            return self.dataset.select(range(min(n, len(self.dataset))))
        return self.dataset

    def get_eval_dataset(self, n: int = -1, seed: int | None = None) -> Dataset:
        if self.eval_dataset is None:
            self.logger.warning("eval_dataset is not set, falling back to train dataset")
            return self.get_dataset(n, seed)
        if seed is not None:
            self.eval_dataset = self.eval_dataset.shuffle(seed=seed)
        if n > 0:
            return self.eval_dataset.select(range(min(n, len(self.eval_dataset))))
        return self.eval_dataset

    def set_kwargs(self, **kwargs: Any) -> None:
        for key, value in kwargs.items():
            setattr(self, key, value)

    def add_rubric(self, rubric: Rubric) -> None:
        self.rubric.add_rubric(rubric)

    # --- rollouts -------------------------------------------------------------------------------

    async def init_state(self, input: dict[str, Any], client: Any, model: str,
                         sampling_args: dict[str, Any] | None = None) -> State:
        state = State(copy.deepcopy(dict(input)))
        state.setdefault("task", self.env_id or "default")
        state.update(client=client, model=model, sampling_args=sampling_args, is_completed=False,
                     is_truncated=False, trajectory=[], trajectory_id=uuid.uuid4().hex, reward=None,
                     metrics=None, error=None, stop_condition=None,
                     timing={"generation_ms": 0.0, "scoring_ms": 0.0, "total_ms": 0.0, "start_time": time.time()})
        return state

    async def get_model_response(self, state: State, prompt: list[dict[str, Any]]) -> Any:
        args = dict(state["sampling_args"] or {})
        if args.get("max_tokens") is None:
            args.pop("max_tokens", None)
        elif self.message_type == "chat":
            args["max_completion_tokens"] = args.pop("max_tokens")
        args = {k: v for k, v in args.items() if v is not None}
        try:
            response = await state["client"].chat.completions.create(model=state["model"], messages=prompt, **args)
        except Exception as error:
            raise ModelError() from error
        if response is None or response.choices is None:
            raise EmptyModelResponseError() from ValueError("Model returned no response choices")
        return response

    async def rollout(self, input: dict[str, Any], client: Any, model: str,
                      sampling_args: dict[str, Any] | None = None) -> State:
        raise NotImplementedError

    async def run_group(self, group_inputs: list[dict[str, Any]], client: Any, model: str,
                        gen_sampling_args: dict[str, Any], gen_sem: Any, score_sem: Any,
                        score: bool = True, **kwargs: Any) -> list[State]:
        async def one(input: dict[str, Any]) -> State:
            async with gen_sem:
                return await self.rollout(input, client, model, gen_sampling_args)

        states = list(await asyncio.gather(*(one(i) for i in group_inputs)))
        if score:
            await self.rubric.score_group(states, score_sem=score_sem)
        return states

    def _prepare_rollout_results(self, states: list[State], model: str, client: Any,
                                 state_columns: list[str] | None, results_path: Path | None,
                                 sampling_args: dict[str, Any], start_time: float) -> GenerateOutputs:
        from verifiers.utils.path_utils import get_results_path

        rewards = [s.get("reward", 0.0) for s in states]
        metrics: dict[str, list[float]] = {}
        for state in states:
            for name, value in (state.get("metrics") or {}).items():
                metrics.setdefault(name, []).append(value)
        example_ids = [s.get("example_id", 0) for s in states]
        unique = len(set(example_ids))
        metadata = GenerateMetadata(
            env_id=self.env_id, env_args=self.env_args, model=model,
            base_url=str(getattr(client, "base_url", "")), num_examples=unique,
            rollouts_per_example=len(states) // unique if unique else 1, sampling_args=sampling_args,
            date=datetime.now().isoformat(), time_ms=(time.time() - start_time) * 1000.0,
            avg_reward=sum(rewards) / len(rewards) if rewards else 0.0,
            avg_metrics={name: sum(v) / len(v) if v else 0.0 for name, v in metrics.items()},
            state_columns=state_columns or [],
            path_to_save=results_path if results_path is not None else get_results_path(self.env_id, model),
        )
        return GenerateOutputs(
            prompt=[s["prompt"] for s in states], completion=[s.get("completion") for s in states],
            answer=[s.get("answer", "") for s in states], state=states,
            task=[s.get("task", "default") for s in states], info=[s.get("info", {}) for s in states],
            example_id=example_ids, reward=rewards, metrics=metrics,
            stop_conditions=[s.get("stop_condition") for s in states],
            is_truncated=[s.get("is_truncated", False) for s in states], metadata=metadata,
        )

    async def generate(self, inputs: Any, client: Any, model: str, sampling_args: dict[str, Any] | None = None,
                       max_concurrent: int = -1, max_concurrent_generation: int | None = None,
                       max_concurrent_scoring: int | None = None, results_path: Path | None = None,
                       state_columns: list[str] | None = None, save_results: bool = False,
                       save_every: int = -1, independent_scoring: bool = False, **kwargs: Any) -> GenerateOutputs:
        rows = inputs.to_list() if isinstance(inputs, Dataset) else list(inputs)
        gen_sem = await maybe_semaphore(max_concurrent if max_concurrent_generation is None else max_concurrent_generation)
        score_sem = await maybe_semaphore(max_concurrent if max_concurrent_scoring is None else max_concurrent_scoring)
        gen_args = copy.deepcopy(self.sampling_args)
        gen_args.update(sampling_args or {})
        start_time = time.time()
        groups: dict[Any, list[dict[str, Any]]] = {}
        for row in rows:
            groups.setdefault(row["example_id"], []).append(row)
        if independent_scoring:
            batches = [[row] for row in rows]
        else:
            batches = list(groups.values())
        states: list[State] = []
        for done in asyncio.as_completed([self.run_group(b, client, model, gen_args, gen_sem, score_sem) for b in batches]):
            states += await done
        states.sort(key=lambda s: s.get("example_id", 0))
        results = self._prepare_rollout_results(states, model, client, state_columns, results_path, gen_args, start_time)
        if save_results:
            from verifiers.utils.eval_utils import save_rollout_results

            save_rollout_results(results)
        return results

    def generate_sync(self, inputs: Any, client: Any, **kwargs: Any) -> GenerateOutputs:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.generate(inputs, client=client, **kwargs))
        # Called from a running loop (the cookbook's evaluate does): upstream nests the loop with
        # nest_asyncio; a loop of its own in another thread gives the same result.
        with ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(asyncio.run, self.generate(inputs, client=client, **kwargs)).result()

    def _get_eval_inputs(self, num_examples: int = -1, rollouts_per_example: int = 1) -> list[dict[str, Any]]:
        if self.eval_dataset is None:
            self.logger.info("eval_dataset is not set, falling back to train dataset")
            inputs = self.get_dataset(n=num_examples)
        else:
            inputs = self.get_eval_dataset(n=num_examples)
        if rollouts_per_example > 1:
            inputs = inputs.repeat(rollouts_per_example)
        return inputs.to_list()

    async def evaluate(self, client: Any, model: str, sampling_args: dict[str, Any] | None = None,
                       num_examples: int = -1, rollouts_per_example: int = 1, **kwargs: Any) -> GenerateOutputs:
        inputs = self._get_eval_inputs(num_examples, rollouts_per_example)
        return await self.generate(inputs, client=client, model=model, sampling_args=sampling_args, **kwargs)

    def evaluate_sync(self, client: Any, model: str, sampling_args: dict[str, Any] | None = None,
                      num_examples: int = -1, rollouts_per_example: int = 1, **kwargs: Any) -> GenerateOutputs:
        inputs = self._get_eval_inputs(num_examples, rollouts_per_example)
        return self.generate_sync(inputs, client=client, model=model, sampling_args=sampling_args, **kwargs)


class MultiTurnEnv(Environment):
    """Turns until a stop condition holds: ``has_error`` first, then ``max_turns_reached``. Adds the
    ``num_turns`` metric (weight 0)."""

    def __init__(self, max_turns: int = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.max_turns = max_turns
        monitor = Rubric()

        async def num_turns(state: State) -> int:
            return len(state["trajectory"])

        monitor.add_metric(num_turns)
        self.add_rubric(monitor)

    async def env_response(self, messages: list[dict[str, Any]], state: State, **kwargs: Any) -> list[dict[str, Any]]:
        raise NotImplementedError

    def _stop_condition(self, state: State) -> str | None:
        if state.get("error") is not None:
            return "has_error"
        if self.max_turns > 0 and len(state["trajectory"]) >= self.max_turns:
            return "max_turns_reached"
        return None

    async def rollout(self, input: dict[str, Any], client: Any, model: str,
                      sampling_args: dict[str, Any] | None = None) -> State:
        state = await self.init_state(input, client, model, sampling_args)
        messages = list(state["prompt"])
        while (condition := self._stop_condition(state)) is None:
            try:
                if state["trajectory"]:
                    messages += await self.env_response(messages, state)
                response = await self.get_model_response(state, messages)
                choice = response.choices[0]
                reply = [{"role": "assistant", "content": choice.message.content or ""}]
                truncated = choice.finish_reason == "length"
                state["trajectory"].append({"prompt": list(messages), "completion": reply, "response": response,
                                            "tokens": response_tokens(response), "reward": None, "advantage": None,
                                            "is_truncated": truncated, "trajectory_id": state["trajectory_id"], "extras": {}})
                messages += reply
            except Error as error:
                state["error"] = error
        state["is_completed"] = True
        state["stop_condition"] = condition
        state["is_truncated"] = any(step["is_truncated"] for step in state["trajectory"])
        if condition == "has_error":
            self.logger.error(f"Aborted rollout due to {error_chain(state['error'])!r}")
        elapsed = (time.time() - state["timing"]["start_time"]) * 1000
        state["timing"]["generation_ms"] = state["timing"]["total_ms"] = elapsed
        state["completion"] = messages[len(state["prompt"]):]
        return state


def response_tokens(response: Any) -> dict[str, Any] | None:
    """Token ids and logprobs of a reply, when the client gave them (verifiers/utils/
    response_utils.py): a client backed by a trainer's sampler does, a plain endpoint does not."""
    choice = response.choices[0]
    if response.prompt_token_ids is None or choice.token_ids is None or choice.logprobs is None:
        return None
    prompt_ids, completion_ids = response.prompt_token_ids, choice.token_ids
    return {"prompt_ids": prompt_ids, "prompt_mask": [0] * len(prompt_ids), "completion_ids": completion_ids,
            "completion_mask": [1] * len(completion_ids),
            "completion_logprobs": [token.logprob for token in choice.logprobs.content or []]}


class SingleTurnEnv(MultiTurnEnv):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(max_turns=1, **kwargs)


class ErrorChain:
    """An error and its causes; repr "ModelError -> AuthenticationError" (verifiers/utils/error_utils.py)."""

    def __init__(self, error: BaseException) -> None:
        self.chain: list[BaseException] = []
        current: BaseException | None = error
        while current is not None:
            self.chain.append(current)
            current = current.__cause__

    def __repr__(self) -> str:
        return " -> ".join(type(e).__name__ for e in self.chain)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ErrorChain) and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))


def error_chain(error: BaseException) -> ErrorChain:
    return ErrorChain(error)
