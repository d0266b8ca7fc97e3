"""Test fake of tinker-atropos' ``tinker_atropos/config.py``: the run YAML's models with the same
fields and defaults, and the read-only convenience properties the trainer and TA environments use
(``gsm8k_tinker.py:17`` imports this module, so only an installed checkout can run such an env)."""
import random
import string
from pathlib import Path
from typing import List, Optional

import yaml
from pydantic import BaseModel, Field


def generate_run_suffix() -> str:
    return "".join(random.choices(string.ascii_lowercase + string.digits, k=4))


class EnvConfig(BaseModel):
    group_size: int = 16
    batch_size: int = 128
    max_batches_offpolicy: int = 3
    tokenizer_name: str = "meta-llama/Llama-3.1-8B-Instruct"
    use_wandb: bool = True
    rollout_server_url: str = "http://localhost:8000"
    wandb_name: str = "atropos-tinker-env"
    ensure_scores_are_not_same: bool = False
    max_token_length: int = 256
    max_num_workers: int = 24
    total_steps: int = 50
    steps_per_eval: int = 100


class OpenAIServerConfig(BaseModel):
    model_name: str
    base_url: str
    api_key: str = "x"
    weight: float = 1.0
    num_requests_for_eval: int = 256


class TinkerConfig(BaseModel):
    lora_rank: int = 32
    learning_rate: float = 4e-5
    max_token_trainer_length: int = 2048
    checkpoint_dir: str = "./temp/"
    save_checkpoint_interval: int = 0
    wandb_project: str = "atropos-tinker"
    wandb_group: Optional[str] = None
    wandb_run_name: str = "atropos-tinker-run"
    wandb_run_suffix: str = Field(default_factory=generate_run_suffix)


class TinkerAtroposConfig(BaseModel):
    env: EnvConfig = Field(default_factory=EnvConfig)
    openai: List[OpenAIServerConfig] = Field(default_factory=lambda: [
        OpenAIServerConfig(model_name="meta-llama/Llama-3.1-8B-Instruct", base_url="http://localhost:8001/v1")
    ])
    tinker: TinkerConfig = Field(default_factory=TinkerConfig)
    slurm: bool = False
    testing: bool = False

    @classmethod
    def from_yaml(cls, path: str) -> "TinkerAtroposConfig":
        if not Path(path).exists():
            raise FileNotFoundError(f"Config file not found: {path}")
        with open(path) as f:
            return cls(**(yaml.safe_load(f) or {}))

    # Properties without setters, as upstream: assigning one raises AttributeError (which the
    # trainer does when wandb.init fails, TA trainer.py:102).
    @property
    def base_model(self) -> str:
        return self.env.tokenizer_name

    @property
    def use_wandb(self) -> bool:
        return self.env.use_wandb

    @property
    def batch_size(self) -> int:
        return self.env.batch_size

    @property
    def num_steps(self) -> int:
        return self.env.total_steps

    @property
    def inference_api_url(self) -> str:
        url = self.openai[0].base_url
        if url.endswith("/v1"):
            url = url[: -len("/v1")]
        return url.rstrip("/")
