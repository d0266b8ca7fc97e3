"""BaseEnvConfig (all 29 real fields and defaults) and BaseEnv, as in atroposlib/envs/base.py."""
from enum import Enum
from typing import Any, List, Optional, Tuple, Union

from pydantic import BaseModel, Field

from .server_handling.server_baseline import APIServerConfig, ServerBaseline

__all__ = ["APIServerConfig", "BaseEnv", "BaseEnvConfig", "EvalHandlingEnum", "ScoredDataGroup", "ServerBaseline"]


class EvalHandlingEnum(Enum):
    STOP_TRAIN = "STOP_TRAIN"
    LIMIT_TRAIN = "LIMIT_TRAIN"
    NONE = "NONE"


class BaseEnvConfig(BaseModel):
    group_size: int = Field(default=4, description="How many responses are grouped together for scoring")
    max_num_workers: int = Field(default=-1, description="Maximum number of workers to use, -1 calculates from max_num_workers_per_node")
    max_eval_workers: int = Field(default=16, description="Maximum number of workers to use for evaluation")
    max_num_workers_per_node: int = Field(default=8, description="Maximum number of workers to use per node")
    steps_per_eval: int = Field(default=100, description="Number of steps to take before evaluating")
    max_token_length: int = Field(default=2048, description="Maximum token length used in generations")
    eval_handling: EvalHandlingEnum = Field(default=EvalHandlingEnum.STOP_TRAIN, description="How to handle evaluations")
    eval_limit_ratio: float = Field(default=0.5, description="Ratio of training workers to limit during evals")
    inference_weight: float = Field(default=1.0, description="Inference weight, set to -1 to ignore it")
    batch_size: int = Field(default=-1, description="Batch size for training, will be set by the trainer and passed in via the fastapi interface")
    max_batches_offpolicy: int = Field(default=3, description="Maximum number of batches to have in queue")
    tokenizer_name: str = Field(default="NousResearch/DeepHermes-3-Llama-3-3B-Preview", description="Hugging Face tokenizer to use")
    use_wandb: bool = Field(default=True, description="Whether to use wandb")
    rollout_server_url: str = Field(default="http://localhost:8000", description="URL of the rollout server")
    total_steps: int = Field(default=1000, description="Total number of steps to run")
    wandb_name: Optional[str] = Field(default=None, description="Name to be grouped by in wandb")
    num_rollouts_to_keep: int = Field(default=32, description="Number of rollouts to display on wandb")
    num_rollouts_per_group_for_logging: int = Field(default=1, description="Number of rollouts per group to keep for logging, -1 keeps all")
    ensure_scores_are_not_same: bool = Field(default=True, description="Ensure that the scores are not the same")
    data_path_to_save_groups: Optional[str] = Field(default=None, description="Path to save the groups, if set, will write groups to this jsonl")
    data_dir_to_save_evals: Optional[str] = Field(default=None, description="Path to save evaluation results")
    min_items_sent_before_logging: int = Field(default=2, description="Minimum number of items sent to the API before logging metrics, <=0 logs always")
    include_messages: bool = Field(default=False, description="Whether to include messages in the output transmitted to the trainer")
    min_batch_allocation: Optional[float] = Field(default=None, description="Minimum proportion of a batch this environment should be allocated (0.0-1.0)")
    worker_timeout: float = Field(default=600, description="Timeout for a task in seconds, -1 for no timeout")
    thinking_mode: bool = Field(default=False, description="Whether to enable thinking mode")
    reasoning_effort: Optional[str] = Field(default=None, description="Reasoning effort: none, minimal, low, medium, high or xhigh")
    max_reasoning_tokens: Optional[int] = Field(default=None, ge=1024, le=32000, description="Maximum reasoning tokens")
    custom_thinking_prompt: Optional[str] = Field(default=None, description="Custom system prompt prepended in thinking mode")


class ScoredDataGroup(dict):
    """A group of scored rollouts: tokens, masks, scores (plus optional messages, logprobs...)."""


class BaseEnv:
    name: Optional[str] = None
    env_config_cls = BaseEnvConfig
    server_cls = APIServerConfig

    def __init__(self, config: BaseEnvConfig, server_configs: Union[ServerBaseline, List[APIServerConfig]], slurm: bool = False, testing: bool = False):
        self.config = config
        self.server_configs = server_configs
        self.slurm = slurm
        self.testing = testing

    @classmethod
    def config_init(cls) -> Tuple[BaseEnvConfig, Union[ServerBaseline, List[APIServerConfig]]]:
        return cls.env_config_cls(), ServerBaseline()

    async def setup(self) -> None:
        raise NotImplementedError

    async def get_next_item(self) -> Any:
        raise NotImplementedError

    async def collect_trajectories(self, item: Any):
        raise NotImplementedError

    async def evaluate(self, *args, **kwargs):
        return None
