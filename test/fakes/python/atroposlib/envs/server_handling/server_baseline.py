"""Server config models and the APIServer base class, as in atroposlib/envs/server_handling/server_baseline.py.

APIServer holds what every upstream server type shares:
- the health check, on by default (``health_check=True``): the first request starts a task that
  sends a 1-token request every second for as long as the process lives; while it fails, every
  request waits (AT server_baseline.py chat_completion/_chat_comp, sglang_server.py:42-65);
- tenacity's retries: ``chat_completion`` is 3 attempts of 3 attempts each (two nested ``@retry``),
  ``tokens_and_logprobs_completion`` 3 attempts; what escapes is ``tenacity.RetryError`` raised from
  the last attempt's error, so a traceback shows the real cause first.
"""
import asyncio
from concurrent.futures import Future
from typing import Any, Awaitable, Callable, Literal, Optional

from pydantic import BaseModel, Field

HEALTH_CHECK_SECONDS = 1.0
# Real: wait_random_exponential(multiplier=1, max=10) between attempts. Kept short so a failing
# endpoint fails a test in about a second.
RETRY_DELAYS = (0.05, 0.1)


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


class RetryError(Exception):
    """What tenacity raises once every attempt failed: ``RetryError[<Future ... raised X>]``."""

    def __init__(self, last_attempt: Future):
        super().__init__(last_attempt)
        self.last_attempt = last_attempt

    def __str__(self) -> str:
        return f"{type(self).__name__}[{self.last_attempt}]"


# Tracebacks name the class by its module: upstream it comes from the tenacity package.
RetryError.__module__ = "tenacity"


async def with_retries(attempt: Callable[[], Awaitable[Any]]) -> Any:
    """``@retry(stop=stop_after_attempt(3))``: every Exception is retried, the last one is the cause."""
    for delay in (*RETRY_DELAYS, None):
        try:
            return await attempt()
        except Exception as error:
            if delay is None:
                failed: Future = Future()
                failed.set_exception(error)
                raise RetryError(failed) from error
            await asyncio.sleep(delay)


class APIServer:
    def __init__(self, config: APIServerConfig):
        self.config = config
        self.server_healthy = True
        self.initialized = False
        self.check_task: Optional[asyncio.Task] = None

    async def _health_probe(self, chat_completion: bool) -> None:
        raise NotImplementedError

    async def _chat_completion_wrapper(self, **kwargs):
        raise NotImplementedError

    async def _tokens_and_logprobs_completion_wrapper(self, **kwargs):
        raise NotImplementedError

    async def _check_server_status(self, chat_completion: bool) -> None:
        while True:
            try:
                await self._health_probe(chat_completion)
                self.server_healthy = True
            except Exception:
                self.server_healthy = False
            await asyncio.sleep(HEALTH_CHECK_SECONDS)

    def _initialize(self, chat_completion: bool) -> None:
        if self.initialized:
            return
        # An empty base_url is not None: it is health-checked too, and never healthy (as upstream).
        if self.config.health_check and self.config.base_url is not None:
            self.check_task = asyncio.create_task(self._check_server_status(chat_completion))
        self.initialized = True

    async def _when_healthy(self, call: Callable[[], Awaitable[Any]]) -> Any:
        while not self.server_healthy:
            await asyncio.sleep(HEALTH_CHECK_SECONDS)
        return await call()

    async def chat_completion(self, **kwargs):
        self._initialize(chat_completion=True)
        kwargs["model"] = self.config.model_name
        kwargs.pop("split", None)
        one_try = lambda: self._when_healthy(lambda: self._chat_completion_wrapper(**kwargs))  # noqa: E731
        return await with_retries(lambda: with_retries(one_try))

    async def tokens_and_logprobs_completion(self, **kwargs):
        """(prompt_tokens, output_tokens per completion, output_logprobs per completion, finish_reasons)."""
        self._initialize(chat_completion=False)
        kwargs["model"] = self.config.model_name
        kwargs.pop("split", None)
        return await with_retries(lambda: self._when_healthy(lambda: self._tokens_and_logprobs_completion_wrapper(**kwargs)))
