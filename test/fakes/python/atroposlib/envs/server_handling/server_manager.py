"""ServerManager (atroposlib/envs/server_handling/server_manager.py): ``self.server`` of an env.

Anything but a list is a template (AT :105-147): a bare ServerBaseline or a single APIServerConfig is
spread over ``http://localhost:9004..9007/v1`` with ``api_key="x"``, keeping only its timeout,
request limits, model and tokenizer names; the base_url and key it carried are dropped. The server
type of the template (or of the list's first entry) picks the server class for all of them.

Simplification: ``testing`` and SLURM discovery are not faked.
"""
import os
import warnings
from contextlib import asynccontextmanager
from typing import List, Optional, Union

from pydantic import BaseModel, Field

from .managed_server import DummyManagedServer, ManagedServer
from .openai_server import OpenAIServer
from .server_baseline import APIServer, APIServerConfig, ServerBaseline
from .sglang_server import SGLangServer

SPREAD_PORTS = range(9004, 9008)
SERVER_CLASSES = {"openai": OpenAIServer, "sglang": SGLangServer}

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


def _spread(template: ServerBaseline) -> List[APIServerConfig]:
    return [
        APIServerConfig(
            base_url=f"http://localhost:{port}/v1",
            api_key="x",
            timeout=template.timeout,
            num_max_requests_at_once=template.num_max_requests_at_once,
            num_requests_for_eval=template.num_requests_for_eval,
            model_name=template.model_name,
            rolling_buffer_length=template.rolling_buffer_length,
            tokenizer_name=template.tokenizer_name,
        )
        for port in SPREAD_PORTS
    ]


class ServerManager:
    def __init__(self, configs: Union[ServerBaseline, List[APIServerConfig]], slurm: bool = False, testing: bool = False, **_kwargs):
        template = configs[0] if isinstance(configs, list) else configs
        server_class = SERVER_CLASSES.get(template.server_type)
        if server_class is None:
            raise NotImplementedError(f"server_type {template.server_type!r}: the test fakes serve 'openai' and 'sglang' only")
        self.servers: List[APIServer] = [server_class(config) for config in (configs if isinstance(configs, list) else _spread(configs))]

    def _most_available(self) -> APIServer:
        # Real: the healthy server with the most free request slots; all start with the same number,
        # so that is the first healthy one.
        return next((server for server in self.servers if server.server_healthy), self.servers[0])

    async def chat_completion(self, **kwargs):
        return await self._most_available().chat_completion(**kwargs)

    @asynccontextmanager
    async def managed_server(self, tokenizer=None, **_kwargs):
        server = self._most_available()
        if isinstance(server, OpenAIServer):
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
