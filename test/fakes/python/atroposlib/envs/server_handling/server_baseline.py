"""Server config models as in atroposlib/envs/server_handling/server_baseline.py."""
from typing import Literal, Optional

from pydantic import BaseModel, Field


class ServerBaseline(BaseModel):
    timeout: int = Field(default=1200, description="Timeout for the request in seconds")
    num_max_requests_at_once: int = Field(default=512, description="Maximum concurrent requests")
    num_requests_for_eval: int = Field(default=64, description="Maximum concurrent requests for evaluation")
    model_name: str = Field(default="default", description="The model name to use")
    rolling_buffer_length: int = Field(default=1000, description="Length of the rolling buffer for metrics")
    server_type: Literal["openai", "trl", "sglang", "vllm"] = Field(default="openai", description="Server type")
    tokenizer_name: str = Field(default="none", description="Tokenizer; 'none' means use model_name")


class APIServerConfig(ServerBaseline):
    api_key: Optional[str] = Field(default="", description="API key for the server")
    base_url: Optional[str] = Field(default="", description="Base URL of the server")
    n_kwarg_is_ignored: bool = Field(default=False, description="Whether the n kwarg is ignored")
    health_check: bool = Field(default=True, description="Whether to health check the server")
