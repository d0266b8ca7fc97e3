"""Group rollouts (tinker_cookbook/rl/rollouts.py). ``do_group_rollout`` is looked up in this module
at call time, so a recipe may replace it (the verifiers_rl recipe does). The training loop reaches it
through ``do_group_rollout_and_filter_constant_reward``, which passes ``strategy=`` and
``termination=`` by keyword (rollouts.py:549-553 at v0.5.5): a replacement that does not take
``termination`` (verifiers_rl's, v0.5.0 to v0.5.5) raises TypeError at the first batch."""
from __future__ import annotations

import asyncio
from typing import Any

import tinker

from tinker_cookbook.rl.types import EnvGroupBuilder, Trajectory, TrajectoryGroup, Transition


class TinkerTokenCompleter:
    """The policy: samples from a Tinker sampling client (tinker_cookbook/completers.py)."""

    def __init__(self, sampling_client: tinker.SamplingClient, max_tokens: int, temperature: float = 1.0) -> None:
        self.sampling_client = sampling_client
        self.max_tokens = max_tokens
        self.temperature = temperature

    async def __call__(self, model_input: tinker.ModelInput, stop: list[str]) -> tuple[list[int], list[float]]:
        response = await self.sampling_client.sample_async(
            prompt=model_input, num_samples=1,
            sampling_params=tinker.SamplingParams(max_tokens=self.max_tokens, temperature=self.temperature, stop=stop))
        sequence = response.sequences[0]
        return list(sequence.tokens), list(sequence.logprobs or [0.0] * len(sequence.tokens))


async def do_single_rollout(policy: TinkerTokenCompleter, env: Any) -> Trajectory:
    ob, stop = await env.initial_observation()
    tokens, logprobs = await policy(ob, stop)
    result = await env.step(tokens)
    return Trajectory([Transition(ob, tokens, logprobs, result.reward, result.episode_done, result.metrics)])


async def do_group_rollout(builder: EnvGroupBuilder, policy: TinkerTokenCompleter, strategy: Any = None,
                           termination: Any = None) -> TrajectoryGroup:
    envs = await builder.make_envs()
    trajectories = await asyncio.gather(*(do_single_rollout(policy, env) for env in envs))
    return TrajectoryGroup(list(trajectories), [0.0] * len(trajectories), [{} for _ in trajectories])


async def do_group_rollout_and_filter_constant_reward(builder: EnvGroupBuilder, policy: TinkerTokenCompleter,
                                                      strategy: Any = None, termination: Any = None) -> TrajectoryGroup:
    trajectory_group = await do_group_rollout(
        builder,
        policy,
        strategy=strategy,
        termination=termination,
    )
    return trajectory_group
