"""The inference client (atroposlib/envs/server_handling/openai_server.py) without the openai
package: ``POST {base_url}/chat/completions`` with ``Authorization: Bearer <api_key>``.

Simplifications, each said where it happens: every ``server_type`` talks to ``/chat/completions``
(the real sglang/vllm/trl classes call ``/generate`` and friends); the health check gates only the
first request instead of pinging every second for the whole run; retries are 3 quick attempts.
"""
import asyncio
import json
import socket
import urllib.error
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from ...utils.json_http import HttpStatusError, request_json
from .server_baseline import APIServerConfig, ServerBaseline

# Real: two nested tenacity layers of 3 attempts with random exponential waits up to 10 s. Kept short
# so a failing endpoint fails a test in well under a second.
RETRY_DELAYS = (0.1, 0.2)
HEALTH_CHECK_INTERVAL = 1.0


class APIError(Exception):
    pass


class APIConnectionError(APIError):
    pass


class APITimeoutError(APIConnectionError):
    pass


class APIStatusError(APIError):
    def __init__(self, status: int, body: str):
        try:
            shown: Any = json.loads(body)
        except ValueError:
            shown = body
        super().__init__(f"Error code: {status} - {shown}")
        self.status_code = status


class RetryError(Exception):
    """What tenacity raises once every attempt failed; the last error is chained as the cause."""


@dataclass
class ChatCompletionMessage:
    content: Optional[str]
    role: str = "assistant"


@dataclass
class Choice:
    index: int
    message: ChatCompletionMessage
    finish_reason: Optional[str]


@dataclass
class ChatCompletion:
    id: str
    model: str
    choices: List[Choice]
    usage: Dict[str, Any] = field(default_factory=dict)


def _parse_completion(payload: Dict[str, Any]) -> ChatCompletion:
    choices = []
    for index, raw in enumerate(payload.get("choices") or []):
        message = raw.get("message") or {}
        choices.append(Choice(
            index=raw.get("index", index),
            message=ChatCompletionMessage(content=message.get("content"), role=message.get("role", "assistant")),
            finish_reason=raw.get("finish_reason"),
        ))
    return ChatCompletion(id=payload.get("id", ""), model=payload.get("model", ""), choices=choices, usage=payload.get("usage") or {})


class OpenAIServer:
    def __init__(self, config: APIServerConfig):
        self.config = config
        self.server_healthy = not config.health_check

    @property
    def chat_url(self) -> str:
        return f"{(self.config.base_url or '').rstrip('/')}/chat/completions"

    def _post_blocking(self, body: Dict[str, Any]) -> Dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.config.api_key or ''}"}
        try:
            return request_json("POST", self.chat_url, body, timeout=self.config.timeout, headers=headers)
        except HttpStatusError as error:
            raise APIStatusError(error.status, error.body) from None
        except (socket.timeout, TimeoutError):
            raise APITimeoutError("Request timed out.") from None
        except (urllib.error.URLError, OSError, ValueError):
            raise APIConnectionError("Connection error.") from None

    async def _wait_until_healthy(self) -> None:
        probe = {"model": self.config.model_name, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}
        while not self.server_healthy:
            try:
                await asyncio.to_thread(self._post_blocking, probe)
                self.server_healthy = True
            except APIError:
                await asyncio.sleep(HEALTH_CHECK_INTERVAL)

    async def _request(self, body: Dict[str, Any]) -> ChatCompletion:
        last: Optional[BaseException] = None
        for delay in (*RETRY_DELAYS, None):
            try:
                return _parse_completion(await asyncio.to_thread(self._post_blocking, body))
            except APIError as error:
                last = error
                if delay is not None:
                    await asyncio.sleep(delay)
        raise RetryError(f"RetryError[<Future at 0x{id(last):x} state=finished raised {type(last).__name__}>]") from last

    async def chat_completion(self, **kwargs) -> ChatCompletion:
        kwargs.pop("split", None)
        kwargs["model"] = self.config.model_name
        if not self.server_healthy:
            await self._wait_until_healthy()
        n = int(kwargs.get("n", 1) or 1)
        if not self.config.n_kwarg_is_ignored or n == 1:
            return await self._request(kwargs)
        # The endpoint ignores `n`: ask n times for one completion each and join the answers.
        singles = await asyncio.gather(*(self._request({**kwargs, "n": 1}) for _ in range(n)))
        choices = [Choice(index=i, message=c.choices[0].message, finish_reason=c.choices[0].finish_reason) for i, c in enumerate(singles) if c.choices]
        return ChatCompletion(id=singles[0].id, model=singles[0].model, choices=choices)


class CliUsageError(Exception):
    """pydantic-cli's FailedExecutionException: the CLI turns it into exit code 2."""


def resolve_openai_configs(default_server_configs, openai_config_dict, yaml_config, cli_passed_flags):
    """The final server configs from config_init's structure and the merged single-server dict."""
    openai_yaml = yaml_config.get("openai")
    openai_cli = {key: value for key, value in cli_passed_flags.items() if key.startswith("openai.")}
    multi_yaml = isinstance(openai_yaml, list) and len(openai_yaml) >= 2
    multi_default = not multi_yaml and isinstance(default_server_configs, list) and len(default_server_configs) >= 2
    if (multi_yaml or multi_default) and openai_cli:
        raise CliUsageError(
            "CLI overrides for OpenAI settings (--openai.*) are not supported when multiple servers are "
            "defined (either via YAML list under 'openai' or a default list with length >= 2)."
        )
    if multi_yaml:
        return [APIServerConfig(**entry) for entry in openai_yaml]
    if isinstance(default_server_configs, APIServerConfig):
        return APIServerConfig(**openai_config_dict)
    if isinstance(default_server_configs, ServerBaseline):
        return default_server_configs
    if multi_default:
        return default_server_configs
    return [APIServerConfig(**openai_config_dict)]
