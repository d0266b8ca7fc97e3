"""ServerManager (atroposlib/envs/server_handling/server_manager.py): ``self.server`` of an env."""
import os
import warnings
from contextlib import asynccontextmanager
from typing import List, Optional, Union

from pydantic import BaseModel, Field

from .managed_server import DummyManagedServer, ManagedServer
from .openai_server import OpenAIServer
from .server_baseline import APIServerConfig, ServerBaseline

# Where the real manager points a bare ServerBaseline (it spreads over ports 9004-9007).
BASELINE_URL = "http://localhost:9004/v1"

DUMMY_MANAGED_SERVER_REFUSAL = (
    "OpenAI endpoints do not support token IDs or logprobs required for "
    "ManagedServer. If you don't need actual token-level training data and "
    "are okay with dummy placeholder values, set the environment variable:\n\n"
    "    export ATROPOS_ALLOW_DUMMY_MANAGED_SERVER=1\n\n"
    "WARNING: The DummyManagedServer will return placeholder token IDs and "
    "logprobs (all zeros) that are NOT suitable for training. Use only for "
    "evaluation or testing workflows."
)


class ServerManagerConfig(BaseModel):
    slurm: bool = Field(default=False, description="Whether the environment is running on slurm or not.")
    testing: bool = Field(default=False, description="If set to True, environment uses mock OpenAI data.")
    max_n_completions: int = Field(default=8, description="The maximum number of completions to request at once per server call.")
    proxy_url: Optional[str] = Field(default=None, description="URL of the atropos proxy (or ATROPOS_PROXY_URL).")


class ServerManager:
    def __init__(self, configs: Union[ServerBaseline, APIServerConfig, List[APIServerConfig]], slurm: bool = False, testing: bool = False, **_kwargs):
        if isinstance(configs, APIServerConfig):
            configs = [configs]
        elif isinstance(configs, ServerBaseline):
            configs = [APIServerConfig(**configs.model_dump(), base_url=BASELINE_URL)]
        self.servers = [OpenAIServer(config) for config in configs]

    async def chat_completion(self, **kwargs):
        # Real: the server with the most free request slots; one server is plenty for the fakes.
        return await self.servers[0].chat_completion(**kwargs)

    @asynccontextmanager
    async def managed_server(self, tokenizer=None, **_kwargs):
        server = self.servers[0]
        if server.config.server_type == "openai":
            allowed = os.environ.get("ATROPOS_ALLOW_DUMMY_MANAGED_SERVER", "").lower() in ("1", "true", "yes")
            if not allowed:
                raise NotImplementedError(DUMMY_MANAGED_SERVER_REFUSAL)
            warnings.warn(
                "Using DummyManagedServer with OpenAI endpoint. Token IDs and logprobs "
                "will be placeholder values and are NOT suitable for training."
            )
            managed = DummyManagedServer(server, tokenizer)
        else:
            managed = ManagedServer(server, tokenizer)
        try:
            yield managed
        finally:
            managed.reset()
