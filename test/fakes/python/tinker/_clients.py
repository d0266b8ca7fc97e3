"""ServiceClient, TrainingClient, SamplingClient and RestClient with the SDK's method names,
signatures and return kinds: ServiceClient's methods block and return the client or response;
TrainingClient's calls return an APIFuture (`.result()` or `await`), run in order; RestClient's
and SamplingClient.sample return a concurrent.futures.Future; a malformed tinker:// path or
request argument raises at once, before any future exists.
"""
from __future__ import annotations

import asyncio
import itertools
import os
import threading
from concurrent.futures import Future
from datetime import datetime
from typing import Any, Callable, Dict, Generic, List, Literal, TypeVar

from . import _server
from . import _service as s
from . import types

T = TypeVar("T")


class APIFuture(Generic[T]):
    """A request's result, both sync (`result(timeout)`) and awaitable."""

    def __init__(self, future: "Future[T]") -> None:
        self._future = future

    def result(self, timeout: float | None = None) -> T:
        return self._future.result(timeout)

    async def result_async(self, timeout: float | None = None) -> T:
        async with asyncio.timeout(timeout):
            return await asyncio.wrap_future(self._future)

    def future(self) -> "Future[T]":
        return self._future

    def __await__(self):
        return self.result_async().__await__()


def _in_background(fn: Callable[[], T], after: "Future | None" = None) -> "Future[T]":
    """`fn()` on a daemon thread (the SDK's event-loop thread never holds the interpreter open),
    started once `after` has finished."""
    future: Future = Future()

    def run() -> None:
        if after is not None:
            after.exception()
        try:
            future.set_result(fn())
        except BaseException as error:  # noqa: BLE001 - handed to the caller through the future
            future.set_exception(error)

    threading.Thread(target=run, daemon=True).start()
    return future


class _Connection:
    """The SDK's InternalClientHolder: resolves the key (refusing a malformed one), fetches the
    client config (where an unknown key is refused, 401), and creates a session unless REST-only."""

    def __init__(self, api_key: str | None, base_url: str, session: bool, user_metadata: dict | None, project_id: str | None):
        self.key = s.resolve_key(api_key)
        self.run("client_config", {"base_url": base_url}, lambda who: None)
        self.session_id: str | None = None
        if session:
            tags = sorted(set(os.environ["TINKER_TAGS"].split(","))) if "TINKER_TAGS" in os.environ else []
            self.session_id = self.run(
                "create_session", {"user_metadata": user_metadata or {}, "project_id": project_id, "tags": tags},
                lambda who: _server.create_session(user_metadata, project_id, tags),
            )
        self._counters = {"train": 0, "sample": 0}
        self._lock = threading.Lock()

    def next_seq(self, kind: Literal["train", "sample"]) -> int:
        with self._lock:
            self._counters[kind] += 1
            return self._counters[kind] - 1

    def run(self, method: str, args: dict, work: Callable[[dict], T]) -> T:
        return s.call(method, args, self.key, work)


class _CharTokenizer:
    """A stand-in for the model's Hugging Face tokenizer: one token per character (0 is EOS)."""

    eos_token_id = 0
    bos_token_id = None

    def __init__(self, name: str) -> None:
        self.name_or_path = name

    def encode(self, text: str, add_special_tokens: bool = True) -> List[int]:
        return [ord(c) for c in text]

    def decode(self, tokens: List[int], skip_special_tokens: bool = False) -> str:
        return "".join(chr(t) for t in tokens if not (skip_special_tokens and t == self.eos_token_id))


class ServiceClient:
    def __init__(self, user_metadata: dict[str, str] | None = None, project_id: str | None = None, **kwargs: Any):
        self._user_metadata = user_metadata
        self._project_id = project_id or os.environ.get("TINKER_PROJECT_ID") or None
        self._api_key = kwargs.get("api_key")
        self._base_url = kwargs.get("base_url") or os.environ.get("TINKER_BASE_URL") or s.DEFAULT_BASE_URL
        self._session: _Connection | None = None
        self._rest: _Connection | None = None
        self._lock = threading.Lock()

    # Both connections are made on first use, as the SDK does since 0.23.2.
    @property
    def holder(self) -> _Connection:
        with self._lock:
            if self._session is None:
                self._session = _Connection(self._api_key, self._base_url, True, self._user_metadata, self._project_id)
            return self._session

    def _rest_connection(self) -> _Connection:
        with self._lock:
            if self._rest is None:
                self._rest = _Connection(self._api_key, self._base_url, False, None, None)
            return self._rest

    def get_server_capabilities(self) -> types.GetServerCapabilitiesResponse:
        return self._rest_connection().run(
            "get_server_capabilities", {}, lambda who: types.GetServerCapabilitiesResponse(supported_models=_server.live_models())
        )

    async def get_server_capabilities_async(self) -> types.GetServerCapabilitiesResponse:
        return await asyncio.to_thread(self.get_server_capabilities)

    def create_lora_training_client(self, base_model: str, rank: int = 32, seed: int | None = None, train_mlp: bool = True,
                                    train_attn: bool = True, train_unembed: bool = True,
                                    user_metadata: dict[str, str] | None = None) -> "TrainingClient":
        assert any([train_mlp, train_attn, train_unembed]), "At least one of train_mlp, train_attn, or train_unembed must be True"
        connection = self.holder
        seq = connection.next_seq("train")
        lora = types.LoraConfig(rank=rank, seed=seed, train_mlp=train_mlp, train_attn=train_attn, train_unembed=train_unembed)
        run_id = connection.run(
            "create_lora_training_client", {"base_model": base_model, "rank": rank, "user_metadata": user_metadata},
            lambda who: _server.create_model(who, connection.session_id, seq, base_model, lora, user_metadata),
        )
        return TrainingClient(connection, seq, run_id)

    async def create_lora_training_client_async(self, base_model: str, **kwargs: Any) -> "TrainingClient":
        return await asyncio.to_thread(self.create_lora_training_client, base_model, **kwargs)

    def _from_state(self, path: str, optimizer: bool, base_model: str | None, user_metadata: dict | None) -> "TrainingClient":
        info = self.create_rest_client().get_weights_info_by_tinker_path(path).result()
        client = self.create_lora_training_client(
            base_model=base_model or info.base_model, rank=info.lora_rank,
            train_unembed=info.train_unembed is not False, train_mlp=info.train_mlp is not False,
            train_attn=info.train_attn is not False, user_metadata=user_metadata,
        )
        (client.load_state_with_optimizer if optimizer else client.load_state)(path).result()
        return client

    def create_training_client_from_state(self, path: str, base_model: str | None = None,
                                          user_metadata: dict[str, str] | None = None,
                                          weights_access_token: str | None = None) -> "TrainingClient":
        return self._from_state(path, False, base_model, user_metadata)

    def create_training_client_from_state_with_optimizer(self, path: str, base_model: str | None = None,
                                                         user_metadata: dict[str, str] | None = None,
                                                         weights_access_token: str | None = None) -> "TrainingClient":
        return self._from_state(path, True, base_model, user_metadata)

    async def create_training_client_from_state_async(self, path: str, **kwargs: Any) -> "TrainingClient":
        return await asyncio.to_thread(self.create_training_client_from_state, path, **kwargs)

    async def create_training_client_from_state_with_optimizer_async(self, path: str, **kwargs: Any) -> "TrainingClient":
        return await asyncio.to_thread(self.create_training_client_from_state_with_optimizer, path, **kwargs)

    def create_sampling_client(self, model_path: str | None = None, base_model: str | None = None,
                               retry_config: Any = None) -> "SamplingClient":
        if model_path is None and base_model is None:
            raise ValueError("Either model_path or base_model must be provided")
        return SamplingClient._create(self.holder, model_path, base_model)

    async def create_sampling_client_async(self, model_path: str | None = None, base_model: str | None = None,
                                           retry_config: Any = None) -> "SamplingClient":
        return await asyncio.to_thread(self.create_sampling_client, model_path, base_model)

    def create_rest_client(self) -> "RestClient":
        return RestClient(self._rest_connection())


class TrainingClient:
    def __init__(self, holder: _Connection, model_seq_id: int, model_id: str):
        self.holder = holder
        self.model_id = model_id
        self._last: Future | None = None
        self._order = threading.Lock()

    def _submit(self, method: str, args: dict, work: Callable[[dict], T]) -> APIFuture[T]:
        """Queued behind this client's earlier requests, as the SDK orders them by request id."""
        with self._order:
            self._last = _in_background(lambda: self.holder.run(method, {"model_id": self.model_id, **args}, work), self._last)
            return APIFuture(self._last)

    def _fwd(self, method: str, data: List[types.Datum], loss_fn: str) -> APIFuture[types.ForwardBackwardOutput]:
        lengths = [datum.model_input.length for datum in data]

        def work(who: dict) -> types.ForwardBackwardOutput:
            _server.touch_run(self.model_id)
            outputs = [{"logprobs": types.TensorData(data=[-0.5] * n, dtype="float32", shape=[n])} for n in lengths]
            return types.ForwardBackwardOutput("ArrayRecord", outputs, {"loss:sum": 0.5 * sum(lengths)})

        return self._submit(method, {"loss_fn": loss_fn, "data": len(data), "tokens": sum(lengths)}, work)

    def forward(self, data: List[types.Datum], loss_fn: str, loss_fn_config: Dict[str, float] | None = None) -> APIFuture[types.ForwardBackwardOutput]:
        return self._fwd("forward", data, loss_fn)

    def forward_backward(self, data: List[types.Datum], loss_fn: str, loss_fn_config: Dict[str, float] | None = None) -> APIFuture[types.ForwardBackwardOutput]:
        return self._fwd("forward_backward", data, loss_fn)

    async def forward_async(self, *args: Any, **kwargs: Any) -> APIFuture[types.ForwardBackwardOutput]:
        return self.forward(*args, **kwargs)

    async def forward_backward_async(self, *args: Any, **kwargs: Any) -> APIFuture[types.ForwardBackwardOutput]:
        return self.forward_backward(*args, **kwargs)

    def optim_step(self, adam_params: types.AdamParams) -> APIFuture[types.OptimStepResponse]:
        def work(who: dict) -> types.OptimStepResponse:
            _server.count_optim_step(self.model_id)
            return types.OptimStepResponse(metrics={})

        return self._submit("optim_step", {"learning_rate": adam_params.learning_rate}, work)

    async def optim_step_async(self, adam_params: types.AdamParams) -> APIFuture[types.OptimStepResponse]:
        return self.optim_step(adam_params)

    def save_state(self, name: str, ttl_seconds: int | None = None, overwrite: bool = False) -> APIFuture[types.SaveWeightsResponse]:
        return self._submit("save_state", {"name": name, "ttl_seconds": ttl_seconds}, lambda who: types.SaveWeightsResponse(
            path=_server.save_checkpoint(self.model_id, "weights", name, ttl_seconds), type="save_weights"))

    async def save_state_async(self, name: str, ttl_seconds: int | None = None, overwrite: bool = False) -> APIFuture[types.SaveWeightsResponse]:
        return self.save_state(name, ttl_seconds, overwrite)

    def save_weights_for_sampler(self, name: str, ttl_seconds: int | None = None) -> APIFuture[types.SaveWeightsForSamplerResponse]:
        return self._submit("save_weights_for_sampler", {"name": name, "ttl_seconds": ttl_seconds}, lambda who: types.SaveWeightsForSamplerResponse(
            path=_server.save_checkpoint(self.model_id, "sampler_weights", name, ttl_seconds), type="save_weights_for_sampler"))

    async def save_weights_for_sampler_async(self, name: str, ttl_seconds: int | None = None) -> APIFuture[types.SaveWeightsForSamplerResponse]:
        return self.save_weights_for_sampler(name, ttl_seconds)

    def _load(self, method: str, path: str) -> APIFuture[types.LoadWeightsResponse]:
        types.ParsedCheckpointTinkerPath.from_tinker_path(path)
        return self._submit(method, {"path": path}, lambda who: _server.load_checkpoint(self.model_id, path))

    def load_state(self, path: str, weights_access_token: str | None = None) -> APIFuture[types.LoadWeightsResponse]:
        return self._load("load_state", path)

    def load_state_with_optimizer(self, path: str, weights_access_token: str | None = None) -> APIFuture[types.LoadWeightsResponse]:
        return self._load("load_state_with_optimizer", path)

    async def load_state_async(self, path: str, weights_access_token: str | None = None) -> APIFuture[types.LoadWeightsResponse]:
        return self.load_state(path)

    async def load_state_with_optimizer_async(self, path: str, weights_access_token: str | None = None) -> APIFuture[types.LoadWeightsResponse]:
        return self.load_state_with_optimizer(path)

    def get_info(self) -> types.GetInfoResponse:
        def work(who: dict) -> types.GetInfoResponse:
            run = _server.run_record(self.model_id)
            return types.GetInfoResponse(type="get_info", model_data=types.ModelData(model_name=run["base_model"]),
                                         model_id=self.model_id, is_lora=True, lora_rank=run["lora_rank"], model_name=run["base_model"])

        return self.holder.run("get_info", {"model_id": self.model_id}, work)

    async def get_info_async(self) -> types.GetInfoResponse:
        return await asyncio.to_thread(self.get_info)

    def get_tokenizer(self) -> _CharTokenizer:
        return _CharTokenizer(self.get_info().model_data.model_name or "")

    def create_sampling_client(self, model_path: str, retry_config: Any = None) -> "SamplingClient":
        return SamplingClient._create(self.holder, model_path, None)

    def save_weights_and_get_sampling_client(self, name: str | None = None, retry_config: Any = None) -> "SamplingClient":
        # The SDK saves ephemeral weights (no checkpoint to list) and samples them.
        base_model = self.get_info().model_data.model_name
        return SamplingClient._create(self.holder, None, base_model, training_run_id=self.model_id)

    async def save_weights_and_get_sampling_client_async(self, name: str | None = None, retry_config: Any = None) -> "SamplingClient":
        return await asyncio.to_thread(self.save_weights_and_get_sampling_client)


class SamplingClient:
    def __init__(self, holder: _Connection, sampler_id: str, base_model: str, steps: int = 0):
        self.holder = holder
        self._sampler_id = sampler_id
        self._base_model = base_model
        self._steps = steps
        self._draws = itertools.count()

    @classmethod
    def _create(cls, holder: _Connection, model_path: str | None, base_model: str | None,
                training_run_id: str | None = None) -> "SamplingClient":
        seq = holder.next_seq("sample")
        sampler_id, base, steps = holder.run(
            "create_sampling_client", {"model_path": model_path, "base_model": base_model},
            lambda who: _server.create_sampler(holder.session_id, seq, base_model, model_path, training_run_id),
        )
        return cls(holder, sampler_id, base, steps)

    def sample(self, prompt: types.ModelInput, num_samples: int, sampling_params: types.SamplingParams,
               include_prompt_logprobs: bool = False, topk_prompt_logprobs: int = 0) -> "Future[types.SampleResponse]":
        args = {"sampler_id": self._sampler_id, "num_samples": num_samples, "prompt_tokens": prompt.length}
        tokens, draw = prompt.to_ints(), next(self._draws)
        return _in_background(lambda: self.holder.run("sample", args, lambda who: _server.sample(
            num_samples, sampling_params, tokens, self._steps, draw)))

    async def sample_async(self, prompt: types.ModelInput, num_samples: int, sampling_params: types.SamplingParams,
                           include_prompt_logprobs: bool = False, topk_prompt_logprobs: int = 0) -> types.SampleResponse:
        return await asyncio.wrap_future(self.sample(prompt, num_samples, sampling_params))

    def compute_logprobs(self, prompt: types.ModelInput) -> "Future[list[float | None]]":
        n = prompt.length
        return _in_background(lambda: self.holder.run(
            "compute_logprobs", {"sampler_id": self._sampler_id, "prompt_tokens": n}, lambda who: [None] + [-0.5] * (n - 1) if n else []))

    async def compute_logprobs_async(self, prompt: types.ModelInput) -> list[float | None]:
        return await asyncio.wrap_future(self.compute_logprobs(prompt))

    def get_tokenizer(self) -> _CharTokenizer:
        return _CharTokenizer(self._base_model)

    def get_base_model(self) -> str:
        return self._base_model


class RestClient:
    def __init__(self, holder: _Connection):
        self.holder = holder

    def _submit(self, method: str, args: dict, work: Callable[[dict], T]) -> "Future[T]":
        return _in_background(lambda: self.holder.run(method, args, work))

    def _at_path(self, method: str, tinker_path: str, work: Callable[[str, str], T], **args: Any) -> "Future[T]":
        parsed = types.ParsedCheckpointTinkerPath.from_tinker_path(tinker_path)
        return self._submit(method, {"tinker_path": tinker_path, **args},
                            lambda who: work(parsed.training_run_id, parsed.checkpoint_id))

    def get_training_run(self, training_run_id: str, access_scope: str = "owned") -> "Future[types.TrainingRun]":
        return self._submit("get_training_run", {"training_run_id": training_run_id},
                            lambda who: _server.get_training_run(training_run_id))

    def get_training_run_by_tinker_path(self, tinker_path: str, access_scope: str = "owned") -> "Future[types.TrainingRun]":
        return self.get_training_run(types.ParsedCheckpointTinkerPath.from_tinker_path(tinker_path).training_run_id)

    def get_weights_info_by_tinker_path(self, tinker_path: str) -> APIFuture[types.WeightsInfoResponse]:
        return APIFuture(self._submit("get_weights_info_by_tinker_path", {"tinker_path": tinker_path},
                                      lambda who: _server.weights_info(tinker_path)))

    def list_training_runs(self, limit: int = 20, offset: int = 0, access_scope: str = "owned",
                           project_id: str | None = None) -> "Future[types.TrainingRunsResponse]":
        return self._submit("list_training_runs", {"limit": limit, "offset": offset, "project_id": project_id},
                            lambda who: _server.list_training_runs(limit, offset, project_id))

    def list_checkpoints(self, training_run_id: str) -> "Future[types.CheckpointsListResponse]":
        return self._submit("list_checkpoints", {"training_run_id": training_run_id},
                            lambda who: _server.list_checkpoints(training_run_id))

    def list_user_checkpoints(self, limit: int = 100, offset: int = 0) -> "Future[types.CheckpointsListResponse]":
        return self._submit("list_user_checkpoints", {"limit": limit, "offset": offset},
                            lambda who: _server.list_user_checkpoints(limit, offset))

    def get_checkpoint_archive_url(self, training_run_id: str, checkpoint_id: str) -> "Future[types.CheckpointArchiveUrlResponse]":
        return self._submit("get_checkpoint_archive_url", {"training_run_id": training_run_id, "checkpoint_id": checkpoint_id},
                            lambda who: _server.archive_url(training_run_id, checkpoint_id))

    def get_checkpoint_archive_url_from_tinker_path(self, tinker_path: str) -> "Future[types.CheckpointArchiveUrlResponse]":
        return self._at_path("get_checkpoint_archive_url_from_tinker_path", tinker_path, _server.archive_url)

    def delete_checkpoint(self, training_run_id: str, checkpoint_id: str) -> "Future[None]":
        return self._submit("delete_checkpoint", {"training_run_id": training_run_id, "checkpoint_id": checkpoint_id},
                            lambda who: _server.delete_checkpoint(training_run_id, checkpoint_id))

    def delete_checkpoint_from_tinker_path(self, tinker_path: str) -> "Future[None]":
        return self._at_path("delete_checkpoint_from_tinker_path", tinker_path, _server.delete_checkpoint)

    def set_checkpoint_ttl_from_tinker_path(self, tinker_path: str, ttl_seconds: int | None) -> "Future[None]":
        return self._at_path("set_checkpoint_ttl_from_tinker_path", tinker_path,
                             lambda run, ckpt: _server.set_checkpoint_ttl(run, ckpt, ttl_seconds), ttl_seconds=ttl_seconds)

    def publish_checkpoint_from_tinker_path(self, tinker_path: str) -> "Future[None]":
        return self._at_path("publish_checkpoint_from_tinker_path", tinker_path,
                             lambda run, ckpt: _server.set_checkpoint_public(run, ckpt, True))

    def unpublish_checkpoint_from_tinker_path(self, tinker_path: str) -> "Future[None]":
        return self._at_path("unpublish_checkpoint_from_tinker_path", tinker_path,
                             lambda run, ckpt: _server.set_checkpoint_public(run, ckpt, False))

    def get_session(self, session_id: str, access_scope: str = "owned") -> "Future[types.GetSessionResponse]":
        return self._submit("get_session", {"session_id": session_id}, lambda who: _server.get_session(session_id))

    def list_sessions(self, limit: int = 20, offset: int = 0, access_scope: str = "owned") -> "Future[types.ListSessionsResponse]":
        return self._submit("list_sessions", {"limit": limit, "offset": offset}, lambda who: _server.list_sessions(limit, offset))

    def get_billing_usage(self, starting_on: datetime | str, ending_before: datetime | str) -> "Future[types.BillingUsageResponse]":
        request = types.GetBillingUsageRequest.model_validate({"starting_on": starting_on, "ending_before": ending_before})
        return self._submit("get_billing_usage", request.model_dump(mode="json"), lambda who: _server.billing_usage(who, request))


def _awaitable(name: str) -> Callable[..., Any]:
    sync = getattr(RestClient, name)

    async def method(self: RestClient, *args: Any, **kwargs: Any) -> Any:
        future = sync(self, *args, **kwargs)
        return await asyncio.wrap_future(future.future() if isinstance(future, APIFuture) else future)

    method.__name__ = method.__qualname__ = f"{name}_async"
    return method


# Every REST call also has its `<name>_async` form, awaiting the same request.
for _name in [n for n, v in vars(RestClient).items() if callable(v) and not n.startswith("_")]:
    setattr(RestClient, f"{_name}_async", _awaitable(_name))
