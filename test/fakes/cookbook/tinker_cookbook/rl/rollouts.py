"""Group rollouts (tinker_cookbook/rl/rollouts.py). ``do_group_rollout`` is looked up in this module
at call time, so a recipe may replace it (the verifiers_rl recipe does). The training loop reaches it
through ``do_group_rollout_and_filter_constant_reward``, which passes ``strategy=`` and
``termination=`` by keyword (rollouts.py:549-553 at v0.5.5): a replacement that does not take
``termination`` (verifiers_rl's, v0.5.0 to v0.5.5) raises TypeError at the first batch."""
from __future__ import annotations

import asyncio
from typing import Any

import tinker

from tinker_cookbook.completers import TinkerTokenCompleter, TokenCompleter
from tinker_cookbook.rl.types import EnvGroupBuilder, Trajectory, TrajectoryGroup, Transition


async def do_single_rollout(policy: TokenCompleter, env: Any) -> Trajectory:
    """One episode: the policy answers each observation until the env says it is done."""
    transitions = []
    ob, stop = await env.initial_observation()
    while True:
        ac = await policy(ob, stop)
        result = await env.step(ac.tokens)
        transitions.append(Transition(ob, ac, result.reward, result.episode_done, result.metrics))
        if result.episode_done:
            return Trajectory(transitions)
        ob, stop = result.next_observation, result.next_stop_condition


async def do_group_rollout(builder: EnvGroupBuilder, policy: TokenCompleter, strategy: Any = None,
                           termination: Any = None) -> TrajectoryGroup:
    envs = await builder.make_envs()
    trajectories = list(await asyncio.gather(*(do_single_rollout(policy, env) for env in envs)))
    group_rewards = await builder.compute_group_rewards(trajectories, envs)
    return TrajectoryGroup(trajectories, [r for r, _ in group_rewards], [m for _, m in group_rewards])


async def do_group_rollout_and_filter_constant_reward(builder: EnvGroupBuilder, policy: TokenCompleter,
                                                      strategy: Any = None, termination: Any = None) -> TrajectoryGroup:
    trajectory_group = await do_group_rollout(
        builder,
        policy,
        strategy=strategy,
        termination=termination,
    )
    return trajectory_group
