"""Shared base for single-turn question/answer environments.

A subclass supplies the items (``setup``/``get_next_item``) and two hooks: ``format_prompt`` builds
the chat messages for an item and ``score_answer`` turns one completion into a reward. This base
does the rest: one Tinker-compatible ``managed_server`` call per group, scored groups with the
trainer's token ids, masks and logprobs, and ``train/percent_correct`` for W&B. It has no ``name``:
it is not an environment on its own.
"""
from typing import Any, Dict, List, Optional, Tuple

from atroposlib.envs.base import APIServerConfig, BaseEnv, BaseEnvConfig, ScoredDataGroup
from atroposlib.type_definitions import Item

try:  # an installed checkout (pip install -e .)
    from tinker_atropos.environments._rollouts import sample_scored_group, with_percent_correct
except ModuleNotFoundError:  # run as a script from an uninstalled checkout: its folder is on sys.path
    from _rollouts import sample_scored_group, with_percent_correct


class SingleTurnQAEnv(BaseEnv):
    # A completion scoring at least this counts as correct in train/percent_correct.
    correct_threshold: float = 1.0

    def __init__(
        self,
        config: BaseEnvConfig,
        server_configs: List[APIServerConfig],
        slurm=False,
        testing=False,
    ):
        super().__init__(config, server_configs, slurm, testing)
        self.percent_correct_buffer: List[float] = []

    def format_prompt(self, item: Any) -> List[Dict[str, str]]:
        raise NotImplementedError("format_prompt must be implemented by the environment")

    def score_answer(self, item: Any, completion: str) -> float:
        raise NotImplementedError("score_answer must be implemented by the environment")

    async def collect_trajectories(self, item: Any) -> Tuple[Optional[ScoredDataGroup], List[Item]]:
        messages = self.format_prompt(item)
        group = await sample_scored_group(self, messages, lambda content: self.score_answer(item, content))
        if group is None:
            return None, []
        self.percent_correct_buffer.extend(
            1.0 if score >= self.correct_threshold else 0.0 for score in group["scores"]
        )
        return group, []

    async def evaluate(self, *args, **kwargs):
        return None

    async def wandb_log(self, wandb_metrics: Optional[Dict] = None):
        wandb_metrics = with_percent_correct(self.percent_correct_buffer, wandb_metrics)
        await super().wandb_log(wandb_metrics)
