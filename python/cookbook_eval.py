"""One model of rl_evaluate on a tinker-cookbook recipe run, scored by the recipe's own environments.

    python cookbook_eval.py --recipe math_rl --model <base model | tinker://.../sampler_weights/...>
        --num-items N --groups OUT.jsonl --wire WIRE.jsonl --summary SUMMARY.json
        -- key=value ...   (the run's recipe arguments, chz's argv)

The recipe's Config is built as its own ``cli_main`` builds it from those arguments, with the
trainer's ``main`` replaced by a catcher (nothing trains) and ``cli_utils.check_log_dir`` by a
no-op (the run's log directory is never asked about, moved or deleted). From the Config: its
dataset builder, ``model_name``, ``max_tokens`` and ``base_url``, as ``rl/train.py``'s ``main``
uses them.

Items, the same for every model (the dataset is rebuilt the same way in each process):
- the recipe's test set when its builder returns one: its first N groups, in order, as
  ``rl/metric_util.py``'s ``RLTestSetEvaluator`` flattens it (``dataset_to_env_group_builders``);
- else fresh draws of its training generator: ``get_batch(i)`` for i from ``len(dataset)`` up (batch
  indices the trainer never reaches: it trains batches 0..min(max_steps, len)-1, and a generated
  dataset such as math_rl's arithmetic seeds batch i with i), skipping any item whose prompt tokens
  equal those of an item of any training batch (all of them, rebuilt here and compared: the ones the
  run trained and any it may still train), and repeats.

Each model is sampled as the recipe's evaluator samples it: a ``TinkerTokenCompleter`` with the
run's ``max_tokens`` over a sampling client of the base model (``base_model=``) or of the
checkpoint's sampler path (``model_path=``), through the cookbook's ``do_group_rollout``; each
trajectory's score is its total reward (the envs' ``step`` rewards plus the group's).

Writes: OUT (one line per item: ``scores`` and ``messages`` [[prompt, reply]] as decoded by the
recipe's tokenizer), WIRE (one line per sampling request: the tokens sent and sampled, as a model
endpoint's ``usage`` reports them), SUMMARY (the items' source and the token totals).
Exit 2 with a message on stderr when the recipe cannot be evaluated so.
"""
from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import sys
import time
from datetime import datetime, timezone
from typing import Any

# Fresh batches tried past the training ones before giving up on finding N unseen items.
MAX_FRESH_BATCHES = 1000


class CannotEvaluate(Exception):
    pass


async def recipe_config(recipe: str, argv: list[str]) -> Any:
    """The trainer Config the recipe's cli_main builds from argv."""
    module = importlib.import_module(f"tinker_cookbook.recipes.{recipe}.train")
    cli_main = getattr(module, "cli_main", None)
    if cli_main is None or not hasattr(module, "CLIConfig"):
        raise CannotEvaluate(f"the recipe {recipe} has no cli_main(CLIConfig): its trainer Config cannot be built outside a run")
    import chz
    import tinker_cookbook.rl.train as rl_train
    from tinker_cookbook import cli_utils

    caught: list[Any] = []

    async def catch(config: Any, *args: Any, **kwargs: Any) -> None:
        caught.append(config)

    cli_utils.check_log_dir = lambda *args, **kwargs: None
    rl_train.main = catch
    if hasattr(module, "main"):
        module.main = catch
    await cli_main(chz.entrypoint(module.CLIConfig, argv=argv))
    if not caught:
        raise CannotEvaluate(f"the recipe {recipe}'s cli_main did not hand a Config to tinker_cookbook.rl.train.main")
    return caught[0]


async def prompt_of(builder: Any) -> tuple[int, ...]:
    envs = await builder.make_envs()
    observation, _stop = await envs[0].initial_observation()
    return tuple(observation.to_ints())


async def choose_items(config: Any, num_items: int) -> tuple[list[Any], dict[str, Any]]:
    train, test = await config.dataset_builder()
    if test is not None:
        from tinker_cookbook.rl.metric_util import dataset_to_env_group_builders

        builders = dataset_to_env_group_builders(test)
        return builders[:num_items], {"source": "test set", "test_items": len(builders)}
    trained = len(train)

    def batch_past(index: int) -> Any:
        try:
            return train.get_batch(index)
        # IndexError/KeyError/ValueError from a list-backed dataset; AssertionError from upstream's
        # finite datasets (math_rl's MathDataset.get_batch asserts its batch is not empty).
        except (AssertionError, IndexError, KeyError, ValueError) as err:
            raise CannotEvaluate(f"the recipe has no test set and its training dataset holds no batch past its {trained} ({type(err).__name__}: {err}): it is not a generator that can draw fresh items") from err

    # Asked before the training prompts are gathered: a finite dataset is refused before that whole pass.
    first = batch_past(trained)
    seen = set()
    for i in range(trained):
        for builder in train.get_batch(i):
            seen.add(await prompt_of(builder))
    fresh: list[Any] = []
    index = trained
    while len(fresh) < num_items and index < trained + MAX_FRESH_BATCHES:
        batch = first if index == trained else batch_past(index)
        if not batch:
            break
        for builder in batch:
            prompt = await prompt_of(builder)
            if prompt not in seen and len(fresh) < num_items:
                seen.add(prompt)
                fresh.append(builder)
        index += 1
    if len(fresh) < num_items:
        raise CannotEvaluate(f"the recipe has no test set, and {index - len(train)} batches past its training ones gave {len(fresh)} items not trained on ({num_items} asked)")
    return fresh, {"source": "fresh draws", "trained_batches": trained, "trained_prompts": len(seen) - len(fresh),
                   "batches_drawn": [len(train), index - 1]}


class RecordingPolicy:
    """The recipe's TinkerTokenCompleter, each call's tokens written as one wire line."""

    def __init__(self, inner: Any, model: str, tokenizer: Any, wire: Any) -> None:
        self.inner, self.model, self.tokenizer, self.wire = inner, model, tokenizer, wire
        self.seq = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0

    async def __call__(self, model_input: Any, stop: Any, *args: Any, **kwargs: Any) -> Any:
        at = datetime.now(timezone.utc).isoformat()
        out = await self.inner(model_input, stop, *args, **kwargs)
        prompt, completion = model_input.length, len(out.tokens)
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        line = {"seq": self.seq, "at": at, "path": "/api/v1/asample", "status": 200, "stream": False, "model": self.model, "n": 1,
                "prompt": self.tokenizer.decode(model_input.to_ints()), "choices": [self.tokenizer.decode(out.tokens)],
                "usage": {"prompt_tokens": prompt, "completion_tokens": completion}}
        self.seq += 1
        self.wire.write(json.dumps(line) + "\n")
        return out


def group_line(group: Any, tokenizer: Any) -> dict[str, Any]:
    messages = []
    for trajectory in group.trajectories_G:
        first = trajectory.transitions[0]
        reply = "".join(tokenizer.decode(t.ac.tokens) for t in trajectory.transitions)
        messages.append([{"role": "user", "content": tokenizer.decode(first.ob.to_ints())}, {"role": "assistant", "content": reply}])
    return {"scores": [float(r) for r in group.get_total_rewards()], "messages": messages,
            "metrics": [dict(t.metrics) for trajectory in group.trajectories_G for t in trajectory.transitions]}


def env_metrics(lines: list[dict[str, Any]]) -> dict[str, float]:
    """The means of the envs' own step metrics (``format``, ``correct``...) and of the total reward."""
    sums: dict[str, list[float]] = {}
    for line in lines:
        for m in line.pop("metrics"):
            for k, v in m.items():
                if isinstance(v, (int, float)):
                    sums.setdefault(k, []).append(float(v))
    scores = [s for line in lines for s in line["scores"]]
    out = {"reward/total": sum(scores) / len(scores)} if scores else {}
    return {**out, **{k: sum(v) / len(v) for k, v in sums.items()}}


async def evaluate(args: argparse.Namespace) -> None:
    import tinker
    from tinker_cookbook.completers import TinkerTokenCompleter
    from tinker_cookbook.rl.rollouts import do_group_rollout
    from tinker_cookbook.tokenizer_utils import get_tokenizer

    config = await recipe_config(args.recipe, args.argv)
    builders, items = await choose_items(config, args.num_items)
    print(f"items: {len(builders)} from the recipe's {items['source']} ({json.dumps(items)})", flush=True)
    service = tinker.ServiceClient(base_url=config.base_url)
    is_path = args.model.startswith("tinker://")
    client = service.create_sampling_client(model_path=args.model) if is_path else service.create_sampling_client(base_model=args.model)
    tokenizer = get_tokenizer(config.model_name)
    started = time.time()
    with open(args.wire, "w") as wire:
        policy = RecordingPolicy(TinkerTokenCompleter(client, max_tokens=config.max_tokens), args.model, tokenizer, wire)
        groups = await asyncio.gather(*(do_group_rollout(b, policy) for b in builders))
    lines = [group_line(g, tokenizer) for g in groups]
    metrics = env_metrics(lines)
    with open(args.groups, "w") as out:
        out.writelines(json.dumps(line) + "\n" for line in lines)
    usage = {"prompt_tokens": policy.prompt_tokens, "completion_tokens": policy.completion_tokens, "requests": policy.seq}
    summary = {"items": items, "max_tokens": config.max_tokens, "usage": usage, "env_metrics": metrics}
    with open(args.summary, "w") as f:
        json.dump(summary, f)
    print(f"sampled {policy.seq} completions of {args.model} in {time.time() - started:.1f} s: {json.dumps(usage)}; {json.dumps(metrics)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    for name in ("--recipe", "--model", "--groups", "--wire", "--summary"):
        parser.add_argument(name, required=True)
    parser.add_argument("--num-items", type=int, required=True)
    parser.add_argument("argv", nargs="*")
    args = parser.parse_args()
    try:
        asyncio.run(evaluate(args))
    except CannotEvaluate as err:
        print(f"cannot evaluate: {err}", file=sys.stderr, flush=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
