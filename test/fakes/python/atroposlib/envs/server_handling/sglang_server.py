"""The ``sglang`` server type (atroposlib/envs/server_handling/sglang_server.py): chat completions
through the openai client like the openai type, and the token path ``managed_server`` uses:
``POST {base_url without /v1}/generate`` with ``input_ids`` and ``sampling_params``, answered with
``meta_info.output_token_logprobs`` as ``(logprob, token_id, text)`` triples (the shape TA
trainer.py:687-775 serves). Failures are raised as aiohttp raises them upstream.
"""
import asyncio
import urllib.error
from http import HTTPStatus
from typing import Any, Dict, List, Tuple
from urllib.parse import urlsplit

from ...utils.json_http import HttpStatusError, request_json
from .openai_server import ChatViaOpenAIClient


class ClientResponseError(Exception):
    def __init__(self, status: int, url: str):
        super().__init__(f"{status}, message={HTTPStatus(status).phrase!r}, url={url!r}")
        self.status = status


class ClientConnectorError(Exception):
    def __init__(self, url: str, reason: str):
        parts = urlsplit(url)
        super().__init__(f"Cannot connect to host {parts.hostname}:{parts.port or 80} ssl:default [{reason}]")


for _error in (ClientResponseError, ClientConnectorError):
    _error.__module__ = "aiohttp.client_exceptions"


class SGLangServer(ChatViaOpenAIClient):
    def _generate_blocking(self, request: Dict[str, Any]) -> Any:
        url = f"{(self.config.base_url or '').replace('/v1', '')}/generate"
        headers = {"Authorization": f"Bearer {self.config.api_key}"} if self.config.api_key else {}
        try:
            return request_json("POST", url, request, timeout=self.config.timeout, headers=headers)
        except HttpStatusError as error:
            raise ClientResponseError(error.status, url) from None
        except urllib.error.URLError as error:
            reason = error.reason.strerror if isinstance(error.reason, OSError) and error.reason.strerror else str(error.reason)
            raise ClientConnectorError(url, reason) from None

    async def _tokens_and_logprobs_completion_wrapper(self, **kwargs) -> Tuple[List[int], List[List[int]], List[List[float]], List[Any]]:
        prompt_tokens = kwargs.pop("input_ids")
        kwargs.pop("prompt", None)
        kwargs.pop("model", None)
        if "max_tokens" in kwargs:
            kwargs["max_new_tokens"] = kwargs.pop("max_tokens")
        results = await asyncio.to_thread(self._generate_blocking, {
            "input_ids": prompt_tokens,
            "sampling_params": kwargs,
            "return_logprob": True,
            "return_text_in_logprobs": False,
        })
        if not isinstance(results, list):
            results = [results]
        outputs, logprobs, finish_reasons = [], [], []
        for result in results:
            meta = result.get("meta_info", {})
            triples = meta.get("output_token_logprobs", [])
            outputs.append([triple[1] for triple in triples])
            logprobs.append([triple[0] for triple in triples])
            finish_reasons.append(meta.get("finish_reason"))
        return prompt_tokens, outputs, logprobs, finish_reasons
