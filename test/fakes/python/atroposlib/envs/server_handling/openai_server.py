"""The ``openai`` server type (atroposlib/envs/server_handling/openai_server.py) and the part of the
openai package it uses, without that package: ``POST {base_url}/chat/completions`` (and
``/completions`` for a health probe) with ``Authorization: Bearer <api_key>``, failures raised as
the openai exception classes, under the names tracebacks print for them upstream.

Simplification: the real openai client retries some failures twice more on its own; not here.
"""
import asyncio
import json
import socket
import urllib.error
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from ...utils.json_http import HttpStatusError, request_json
from .server_baseline import APIServer, APIServerConfig, ServerBaseline


class OpenAIError(Exception):
    pass


class APIConnectionError(OpenAIError):
    pass


class APITimeoutError(APIConnectionError):
    pass


class APIStatusError(OpenAIError):
    def __init__(self, status: int, body: str):
        try:
            shown: Any = json.loads(body)
        except ValueError:
            shown = body
        super().__init__(f"Error code: {status} - {shown}")
        self.status_code = status


class BadRequestError(APIStatusError):
    pass


class AuthenticationError(APIStatusError):
    pass


class PermissionDeniedError(APIStatusError):
    pass


class NotFoundError(APIStatusError):
    pass


class RateLimitError(APIStatusError):
    pass


class InternalServerError(APIStatusError):
    pass


_STATUS_ERRORS = {400: BadRequestError, 401: AuthenticationError, 403: PermissionDeniedError, 404: NotFoundError, 429: RateLimitError}

for _error in (OpenAIError, APIConnectionError, APITimeoutError, APIStatusError, *_STATUS_ERRORS.values(), InternalServerError):
    # The openai package re-exports these at top level and names them so: `openai.NotFoundError`.
    _error.__module__ = "openai"


def status_error(status: int, body: str) -> APIStatusError:
    if status >= 500:
        return InternalServerError(status, body)
    return _STATUS_ERRORS.get(status, APIStatusError)(status, body)


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


class AsyncClient:
    """``openai.AsyncClient(api_key, base_url, timeout)``: the two calls atroposlib makes."""

    def __init__(self, config: APIServerConfig):
        self.config = config

    def _post_blocking(self, path: str, body: Dict[str, Any]) -> Dict[str, Any]:
        url = f"{(self.config.base_url or '').rstrip('/')}{path}"
        headers = {"Authorization": f"Bearer {self.config.api_key or ''}"}
        try:
            return request_json("POST", url, body, timeout=self.config.timeout, headers=headers)
        except HttpStatusError as error:
            raise status_error(error.status, error.body) from None
        except (socket.timeout, TimeoutError):
            raise APITimeoutError("Request timed out.") from None
        except (urllib.error.URLError, OSError, ValueError):
            raise APIConnectionError("Connection error.") from None

    async def create_chat_completion(self, **kwargs) -> ChatCompletion:
        return _parse_completion(await asyncio.to_thread(self._post_blocking, "/chat/completions", kwargs))

    async def create_completion(self, **kwargs) -> Dict[str, Any]:
        return await asyncio.to_thread(self._post_blocking, "/completions", kwargs)


class ChatViaOpenAIClient(APIServer):
    """Chat completions and the health probe through the openai client, as both the openai and the
    sglang server types do upstream."""

    def __init__(self, config: APIServerConfig):
        super().__init__(config)
        self.openai = AsyncClient(config)

    async def _health_probe(self, chat_completion: bool) -> None:
        if chat_completion:
            await self.openai.create_chat_completion(model=self.config.model_name, messages=[{"role": "user", "content": "hi"}], max_tokens=1)
        else:
            await self.openai.create_completion(model=self.config.model_name, prompt="hi", max_tokens=1)

    async def _chat_completion_wrapper(self, **kwargs) -> ChatCompletion:
        n = int(kwargs.get("n", 1) or 1)
        if not self.config.n_kwarg_is_ignored or n == 1:
            return await self.openai.create_chat_completion(**kwargs)
        # The endpoint ignores `n`: ask n times for one completion each and join the answers.
        singles = await asyncio.gather(*(self.openai.create_chat_completion(**{**kwargs, "n": 1}) for _ in range(n)))
        choices = [Choice(index=i, message=c.choices[0].message, finish_reason=c.choices[0].finish_reason) for i, c in enumerate(singles) if c.choices]
        return ChatCompletion(id=singles[0].id, model=singles[0].model, choices=choices)


class OpenAIServer(ChatViaOpenAIClient):
    async def _tokens_and_logprobs_completion_wrapper(self, **kwargs):
        raise NotImplementedError("Tokens and logprobs not supported by base OpenAI API, use specific API servers.")


class CliUsageError(Exception):
    """pydantic-cli's FailedExecutionException: the CLI turns it into exit code 2."""


def resolve_openai_configs(default_server_configs, openai_config_dict, yaml_config, cli_passed_flags):
    """The final server configs from config_init's structure and the merged single-server dict.
    A single APIServerConfig stays single (ServerManager then spreads it over ports 9004-9007) and a
    bare ServerBaseline comes back as it is: the --openai.* flags and YAML are ignored (AT :201-217)."""
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
