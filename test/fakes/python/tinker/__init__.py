"""Test fake of Tinker's Python SDK (`tinker`): the real package's client classes, method names,
signatures, futures, result types and exceptions, backed by a fake service whose state is a
directory shared by every process of a test. This docstring is the fake's contract.

Behaviour kept from the SDK
- `ServiceClient(user_metadata=None, project_id=None, **kwargs)` does nothing until first used.
  The first `create_rest_client()`, `get_server_capabilities()` or `create_*_client(...)` resolves
  the key (`api_key=` else `TINKER_API_KEY`): none, or one not starting with `tml-` / `eyJ`, raises
  `TinkerError` at once ("The api_key must start with the 'tml-' prefix"); a well-formed key the
  service does not know raises `AuthenticationError` (401). Base URL: `base_url=` else
  `TINKER_BASE_URL` else the production URL (logged only). `TINKER_PROJECT_ID`, `TINKER_TAGS` are read.
- Training and sampling clients need a session (created on first use, id a UUID); training run ids
  are `<session id>:train:<n>`, sampler ids `<session id>:sample:<n>`; checkpoint paths are
  `tinker://<training run id>/weights/<name>` (save_state) and `.../sampler_weights/<name>`
  (save_weights_for_sampler). REST calls need no session.
- Errors: `APIStatusError` subclasses by status (BadRequestError 400, AuthenticationError 401,
  PermissionDeniedError 403, NotFoundError 404, ConflictError 409, ..., InternalServerError 5xx) with
  `.status_code`, `.body` = `{"detail": ...}` and `.message` = "Error code: N - {'detail': ...}";
  `APIConnectionError` when the service cannot be reached. 408/409/429/5xx and connection errors are
  retried with backoff min(2**n, 30) s for up to 300 s before they reach the caller, as the SDK does
  (409 included: publishing a public checkpoint hangs that long, then raises ConflictError). A 402
  pauses the call instead (retry every 5 s, warning "The job is paused due to billing status. Error:
  ..." on logger tinker.lib.internal_client_holder every 60 s) for up to an hour, then raises.
- Every REST method also exists as `<name>_async`; so do the training, sampling and creation calls.

State: the directory named by $FAKE_TINKER_STATE, else by a TINKER_BASE_URL of the form `file://<dir>`
(neither: every call fails to connect, retried as above)
- `keys.json` (test writes): `{"<key>": {"billing_view": bool, "user_id"?: str, "user_name"?: str}}`;
  a key absent from it gets 401. Removing a key makes the next call of a live client fail with 401.
- `models.json` (test writes): live base models, `["Qwen/Qwen3-8B", ...]` or
  `[{"model_name": ..., "max_context_length": ...}]`; a training or sampling client on another base
  model is refused with 400.
- `billing.jsonl` (test appends): one `BillingUsageEvent` per line in the wire shape:
  `{"bucket_start": "2026-07-13T05:00:00Z", "bucket_end": "...06:00:00Z", "base_model": ...,
  "user_id"?, "user_name"?, "session_id": ..., "project_id"?, "event_info": {"type": "training" |
  "sampling_prefill" (+ "cached": bool) | "sampling_sample", "token_count": N} | {"type": "checkpoint",
  "count": N} | {"type": "storage", "gigabyte_hours": x}}`. `get_billing_usage` needs a key with
  billing_view (else 403) and a window aligned to UTC hours, not starting in the future, at most 14
  days long (else 400); it returns the rows whose bucket starts in the window.
- `service.json` (test writes, optional): `retry_window_seconds` (default 300),
  `billing_pause_seconds` (default 3600), `sample_text` (what every sample returns), `bytes_per_rank`:
  `{"sampler": n, "state": n}` (checkpoint size_bytes = that x LoRA rank; defaults 4 MiB, 12 MiB).
- `faults.json` (test writes, optional): `{"<method>" | "*": {"status": 500, "detail"?: str,
  "times"?: n} | {"connection_error": true, "times"?: n}}`: the named SDK call (names as in
  calls.jsonl) fails so, `times` times (each retry counts) or always; hits go to `fault_hits.jsonl`.
- `sessions/`, `runs/`, `samplers/`, `checkpoints/<run id>/` (the service writes): one JSON file per
  session, training run, sampler and checkpoint (ids URL-quoted into file names). A checkpoint's
  `expires_at` is its creation time + ttl_seconds; once past, it is gone (404, not listed).
- `calls.jsonl` (the service appends): `{"time", "pid", "method", "args"}` per SDK call, the key never
  included. Holder set-up logs `client_config` (and `create_session` for training/sampling clients).
Records are replaced whole (temp file + rename) and lines appended in one write: safe across processes.
"""

from . import types
from ._clients import APIFuture, RestClient, SamplingClient, ServiceClient, TrainingClient
from ._exceptions import (
    APIConnectionError,
    APIError,
    APIResponseValidationError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    RequestFailedError,
    TinkerError,
    UnprocessableEntityError,
)
from .types import (
    AdamParams,
    Checkpoint,
    CheckpointType,
    Datum,
    EncodedTextChunk,
    ForwardBackwardOutput,
    LoraConfig,
    ModelID,
    ModelInput,
    ModelInputChunk,
    OptimStepResponse,
    ParsedCheckpointTinkerPath,
    SampledSequence,
    SampleResponse,
    SamplingParams,
    StopReason,
    TensorData,
    TensorDtype,
    TrainingRun,
)

__title__ = "tinker"
__version__ = "0.0.0+fake"
