"""The fake SDK's public types: the names and fields of the real `tinker.types` that callers read.

Wire models are pydantic models, as in the SDK (`model_dump(mode="json")` works); request models
forbid unknown fields. Sampling and forward/backward results are plain dataclasses there too.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, Dict, List, Literal, Optional, Sequence, Union

from pydantic import BaseModel, ConfigDict, Field, model_validator

ModelID = str
CheckpointType = Literal["training", "sampler"]
LossFnType = Literal["cross_entropy", "importance_sampling", "ppo", "cispo", "dro"]
StopReason = Literal["length", "stop"]
TensorDtype = Literal["int64", "float32"]


class StrictBase(BaseModel):
    """Request-side models: frozen, unknown fields refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")


# ---- model input and training data ----


class EncodedTextChunk(StrictBase):
    tokens: Sequence[int]
    type: Literal["encoded_text"] = "encoded_text"

    @property
    def length(self) -> int:
        return len(self.tokens)


ModelInputChunk = EncodedTextChunk


class ModelInput(StrictBase):
    chunks: List[EncodedTextChunk]

    @classmethod
    def from_ints(cls, tokens: List[int]) -> "ModelInput":
        return cls(chunks=[EncodedTextChunk(tokens=list(tokens))])

    @classmethod
    def empty(cls) -> "ModelInput":
        return cls(chunks=[])

    def to_ints(self) -> List[int]:
        return [token for chunk in self.chunks for token in chunk.tokens]

    @property
    def length(self) -> int:
        return sum(chunk.length for chunk in self.chunks)

    def append(self, chunk: EncodedTextChunk) -> "ModelInput":
        return ModelInput(chunks=[*self.chunks, chunk])

    def append_int(self, token: int) -> "ModelInput":
        return self.append(EncodedTextChunk(tokens=[token]))


class TensorData(StrictBase):
    data: Union[List[int], List[float]]
    dtype: TensorDtype
    shape: Optional[List[int]] = None

    def tolist(self) -> List[Any]:
        return list(self.data)


# Which dtype a plain list becomes, per loss input key (as the SDK converts them).
_KEY_DTYPES = {"target_tokens": "int64"}


class Datum(StrictBase):
    loss_fn_inputs: Dict[str, TensorData]
    model_input: ModelInput

    @model_validator(mode="before")
    @classmethod
    def _lists_to_tensors(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("loss_fn_inputs"), dict):
            converted = {}
            for key, value in data["loss_fn_inputs"].items():
                if hasattr(value, "tolist") and not isinstance(value, TensorData):
                    value = value.tolist()
                if isinstance(value, list):
                    value = TensorData(data=value, dtype=_KEY_DTYPES.get(key, "float32"), shape=[len(value)])
                converted[key] = value
            data = {**data, "loss_fn_inputs": converted}
        return data


class AdamParams(StrictBase):
    learning_rate: float = 0.0001
    beta1: float = 0.9
    beta2: float = 0.95
    eps: float = 1e-12
    weight_decay: float = 0.0
    grad_clip_norm: float = 0.0


class LoraConfig(StrictBase):
    rank: int
    seed: Optional[int] = None
    train_unembed: bool = True
    train_mlp: bool = True
    train_attn: bool = True


class SamplingParams(BaseModel):
    max_tokens: Optional[int] = None
    seed: Optional[int] = None
    stop: Union[str, Sequence[str], Sequence[int], None] = None
    temperature: float = 1
    top_k: int = -1
    top_p: float = 1


# ---- results of training and sampling calls ----


@dataclass(frozen=True)
class ForwardBackwardOutput:
    loss_fn_output_type: str
    loss_fn_outputs: List[Dict[str, TensorData]]
    metrics: Dict[str, float] = field(default_factory=dict)


class OptimStepResponse(BaseModel):
    metrics: Optional[Dict[str, float]] = None


class SaveWeightsResponse(BaseModel):
    path: str
    type: Optional[Literal["save_weights"]] = None


class SaveWeightsForSamplerResponse(BaseModel):
    path: str
    type: Optional[Literal["save_weights_for_sampler"]] = None


class LoadWeightsResponse(BaseModel):
    path: Optional[str] = None
    model_id: Optional[str] = None
    type: Optional[Literal["load_weights"]] = None


class ModelData(BaseModel):
    arch: Optional[str] = None
    model_name: Optional[str] = None
    tokenizer_id: Optional[str] = None


class GetInfoResponse(BaseModel):
    model_config = ConfigDict(protected_namespaces=())
    type: Optional[Literal["get_info"]] = None
    model_data: ModelData
    model_id: ModelID
    is_lora: Optional[bool] = None
    lora_rank: Optional[int] = None
    model_name: Optional[str] = None


@dataclass(frozen=True)
class SampledSequence:
    stop_reason: StopReason
    tokens: List[int]
    logprobs: Optional[List[float]] = None


@dataclass(frozen=True)
class SampleResponse:
    sequences: Sequence[SampledSequence]
    prompt_logprobs: Optional[List[Optional[float]]] = None
    prompt_cache_hit_tokens: int = 0


# ---- REST: checkpoints, training runs, sessions, models ----


class Checkpoint(BaseModel):
    checkpoint_id: str
    checkpoint_type: CheckpointType
    time: datetime
    tinker_path: str
    size_bytes: Optional[int] = None
    public: bool = False
    expires_at: Optional[datetime] = None


class ParsedCheckpointTinkerPath(BaseModel):
    tinker_path: str
    training_run_id: str
    checkpoint_type: CheckpointType
    checkpoint_id: str

    @classmethod
    def from_tinker_path(cls, tinker_path: str) -> "ParsedCheckpointTinkerPath":
        """`tinker://<run id>/<weights|sampler_weights>/<name>`; anything else is a ValueError."""
        parts = tinker_path[len("tinker://"):].split("/") if tinker_path.startswith("tinker://") else []
        if len(parts) != 3 or parts[1] not in ("weights", "sampler_weights"):
            raise ValueError(f"Invalid tinker path: {tinker_path}")
        return cls(
            tinker_path=tinker_path,
            training_run_id=parts[0],
            checkpoint_type="training" if parts[1] == "weights" else "sampler",
            checkpoint_id="/".join(parts[1:]),
        )


class Cursor(BaseModel):
    offset: int
    limit: int
    total_count: int


class CheckpointsListResponse(BaseModel):
    checkpoints: List[Checkpoint]
    cursor: Optional[Cursor] = None


class CheckpointArchiveUrlResponse(BaseModel):
    url: str
    expires: datetime


class TrainingRun(BaseModel):
    training_run_id: str
    base_model: str
    model_owner: str
    is_lora: bool
    corrupted: bool = False
    lora_rank: Optional[int] = None
    last_request_time: datetime
    last_checkpoint: Optional[Checkpoint] = None
    last_sampler_checkpoint: Optional[Checkpoint] = None
    user_metadata: Optional[Dict[str, str]] = None


class TrainingRunsResponse(BaseModel):
    training_runs: List[TrainingRun]
    cursor: Cursor


class WeightsInfoResponse(BaseModel):
    base_model: str
    is_lora: bool
    lora_rank: Optional[int] = None
    train_unembed: Optional[bool] = None
    train_mlp: Optional[bool] = None
    train_attn: Optional[bool] = None


class GetSessionResponse(BaseModel):
    training_run_ids: List[ModelID]
    sampler_ids: List[str]


class ListSessionsResponse(BaseModel):
    sessions: List[str]


class SupportedModel(BaseModel):
    model_config = ConfigDict(protected_namespaces=())
    model_name: Optional[str] = None
    max_context_length: Optional[int] = None


class GetServerCapabilitiesResponse(BaseModel):
    supported_models: List[SupportedModel]


# ---- billing ----


class GetBillingUsageRequest(StrictBase):
    starting_on: datetime
    ending_before: datetime


class TrainingBillingEvent(StrictBase):
    type: Literal["training"] = "training"
    token_count: int


class SamplingPrefillBillingEvent(StrictBase):
    type: Literal["sampling_prefill"] = "sampling_prefill"
    cached: bool
    token_count: int


class SamplingSampleBillingEvent(StrictBase):
    type: Literal["sampling_sample"] = "sampling_sample"
    token_count: int


class CheckpointBillingEvent(StrictBase):
    type: Literal["checkpoint"] = "checkpoint"
    count: int


class StorageBillingEvent(StrictBase):
    type: Literal["storage"] = "storage"
    gigabyte_hours: float


BillingEventInfo = Annotated[
    Union[
        TrainingBillingEvent,
        SamplingPrefillBillingEvent,
        SamplingSampleBillingEvent,
        CheckpointBillingEvent,
        StorageBillingEvent,
    ],
    Field(discriminator="type"),
]


class BillingUsageEvent(BaseModel):
    bucket_start: datetime
    bucket_end: datetime
    base_model: Optional[str] = None
    user_id: Optional[str] = None
    user_name: Optional[str] = None
    session_id: Optional[str] = None
    project_id: Optional[str] = None
    event_info: BillingEventInfo


class BillingUsageSession(BaseModel):
    user_metadata: Optional[Dict[str, str]] = None


class BillingUsageResponse(BaseModel):
    data: List[BillingUsageEvent]
    sessions: Dict[str, BillingUsageSession] = {}
