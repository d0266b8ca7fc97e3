"""The inference client of ``vf-eval`` (verifiers/utils/client_utils.py ``setup_client``): upstream
builds an ``openai.AsyncOpenAI``; the openai package is not installed in the tests' interpreter, so
this is a small stand-in that speaks the same HTTP: ``POST {base_url}chat/completions`` with
``Authorization: Bearer <key>``, the key read from the environment variable the config names
("EMPTY" when it is unset, as upstream). Like the openai SDK it retries 408, 409, 429, 5xx answers
and refused connections (``max_retries`` times, without the SDK's back-off delays) and raises its
error classes (``AuthenticationError`` for 401, ``NotFoundError`` for 404, ...) with its message
"Error code: <status> - <body>", here those of the tests' atroposlib fake."""
from __future__ import annotations

import asyncio
import os
import socket
import time
import urllib.error
from typing import Any

# The openai package's error classes as the tests' atroposlib fake already carries them.
from atroposlib.envs.server_handling.openai_server import APIConnectionError, APITimeoutError, status_error
from atroposlib.utils.json_http import HttpStatusError, request_json

RETRY_PAUSE_SECONDS = 0.05


class Record:
    """A JSON object answered by the endpoint, its keys readable as attributes (``choice.message``)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getattr__(self, name: str) -> Any:
        value = self._data.get(name)
        if isinstance(value, dict):
            return Record(value)
        if isinstance(value, list):
            return [Record(v) if isinstance(v, dict) else v for v in value]
        return value

    def model_dump(self) -> dict[str, Any]:
        return self._data


class _Completions:
    def __init__(self, client: "AsyncOpenAICompatibleClient", route: str) -> None:
        self._client = client
        self._route = route

    async def create(self, **body: Any) -> Record:
        extra = body.pop("extra_body", None) or {}
        return Record(await asyncio.to_thread(self._client.post, self._route, {**body, **extra}))


class _Chat:
    def __init__(self, client: "AsyncOpenAICompatibleClient") -> None:
        self.completions = _Completions(client, "chat/completions")


class AsyncOpenAICompatibleClient:
    def __init__(self, base_url: str, api_key: str, max_retries: int = 10, timeout: float = 3600.0,
                 headers: dict[str, str] | None = None) -> None:
        # The openai SDK keeps its base URL with a trailing slash (and reports it so).
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.api_key = api_key
        self.max_retries = max_retries
        self.timeout = timeout
        self.headers = dict(headers or {})
        self.chat = _Chat(self)
        self.completions = _Completions(self, "completions")

    def post(self, route: str, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.api_key}", **self.headers}
        for attempt in range(self.max_retries + 1):
            try:
                return request_json("POST", self.base_url + route, body, timeout=self.timeout, headers=headers)
            except HttpStatusError as error:
                failure: Exception = status_error(error.status, error.body)
                retry = error.status in (408, 409, 429) or error.status >= 500
            except (socket.timeout, TimeoutError):
                failure, retry = APITimeoutError("Request timed out."), True
            except (urllib.error.URLError, OSError):
                failure, retry = APIConnectionError("Connection error."), True
            if not retry or attempt == self.max_retries:
                raise failure
            time.sleep(RETRY_PAUSE_SECONDS)
        raise AssertionError("unreachable")


def setup_client(config: Any) -> AsyncOpenAICompatibleClient:
    api_key = os.getenv(config.api_key_var)
    return AsyncOpenAICompatibleClient(
        base_url=config.api_base_url,
        api_key=api_key or "EMPTY",
        max_retries=config.max_retries,
        timeout=config.timeout,
        headers=config.extra_headers,
    )
