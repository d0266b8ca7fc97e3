"""What the fake service does for each request, on the shared state (see the package docstring).

Error statuses follow the SDK's documented ones (rest_client.py docstrings): 400 for an invalid
request (TTL <= 0, a billing window over 14 days, not hour-aligned or starting in the future),
403 without billing-view access, 404 for an unknown or deleted checkpoint, run or session, 409 for
publishing a public checkpoint (or unpublishing a private one).
"""
from __future__ import annotations

import random
import re
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

from . import _service as s
from . import types
from ._exceptions import status_error

BILLING_WINDOW = timedelta(days=14)
ARCHIVE_URL_LIFETIME = timedelta(hours=1)
DEFAULT_SAMPLE_TEXT = "The answer is 42"


def _parse(moment: str | None) -> datetime | None:
    return None if moment is None else datetime.fromisoformat(moment.replace("Z", "+00:00"))


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


# ---- sessions, models, training runs ----


def create_session(user_metadata: dict | None, project_id: str | None, tags: list[str]) -> str:
    session_id = str(uuid.uuid4())
    s.write_json(
        {"session_id": session_id, "user_metadata": user_metadata or {}, "project_id": project_id,
         "tags": tags, "created_at": s.iso(s.now())},
        "sessions", s.file_name(session_id),
    )
    return session_id


def live_models() -> list[types.SupportedModel]:
    entries = s.read_json("models.json", default=[]) or []
    return [types.SupportedModel(model_name=e) if isinstance(e, str) else types.SupportedModel(**e) for e in entries]


def create_model(who: dict, session_id: str, seq: int, base_model: str, lora: types.LoraConfig,
                 user_metadata: dict | None) -> str:
    live = [m.model_name for m in live_models()]
    if base_model not in live:
        raise status_error(400, f"Base model {base_model} is not supported. Supported models: {', '.join(live)}",
                           "POST", "/api/v1/create_model")
    run_id = f"{session_id}:train:{seq}"
    s.write_json(
        {"training_run_id": run_id, "session_id": session_id, "base_model": base_model,
         "model_owner": who["user_id"], "is_lora": True, "corrupted": False, "lora_rank": lora.rank,
         "train_mlp": lora.train_mlp, "train_attn": lora.train_attn, "train_unembed": lora.train_unembed,
         "last_request_time": s.iso(s.now()), "user_metadata": user_metadata},
        "runs", s.file_name(run_id),
    )
    return run_id


def run_record(run_id: str) -> dict:
    record = s.read_json("runs", s.file_name(run_id))
    if record is None:
        raise status_error(404, f"Training run {run_id} not found", "GET", f"/api/v1/training_runs/{run_id}")
    return record


def touch_run(run_id: str) -> dict:
    record = run_record(run_id)
    record["last_request_time"] = s.iso(s.now())
    s.write_json(record, "runs", s.file_name(run_id))
    return record


def count_optim_step(run_id: str) -> None:
    record = touch_run(run_id)
    record["optim_steps"] = record.get("optim_steps", 0) + 1
    s.write_json(record, "runs", s.file_name(run_id))


def _training_run(record: dict) -> types.TrainingRun:
    checkpoints = _checkpoints(record["training_run_id"])
    newest = {kind: max((c for c in checkpoints if c.checkpoint_type == kind), key=lambda c: c.time, default=None)
              for kind in ("training", "sampler")}
    fields = {k: v for k, v in record.items() if k in types.TrainingRun.model_fields}
    return types.TrainingRun(**fields, last_checkpoint=newest["training"], last_sampler_checkpoint=newest["sampler"])


def get_training_run(run_id: str) -> types.TrainingRun:
    return _training_run(run_record(run_id))


def _page(items: list, limit: int, offset: int) -> tuple[list, types.Cursor]:
    return items[offset: offset + limit], types.Cursor(offset=offset, limit=limit, total_count=len(items))


def list_training_runs(limit: int, offset: int, project_id: str | None) -> types.TrainingRunsResponse:
    runs = list(s.records("runs"))
    if project_id is not None:
        projects = {r["session_id"]: (s.read_json("sessions", s.file_name(r["session_id"])) or {}).get("project_id") for r in runs}
        runs = [r for r in runs if projects[r["session_id"]] == project_id]
    runs.sort(key=lambda r: r["last_request_time"], reverse=True)
    page, cursor = _page(runs, limit, offset)
    return types.TrainingRunsResponse(training_runs=[_training_run(r) for r in page], cursor=cursor)


def get_session(session_id: str) -> types.GetSessionResponse:
    if s.read_json("sessions", s.file_name(session_id)) is None:
        raise status_error(404, f"Session {session_id} not found", "GET", f"/api/v1/sessions/{session_id}")
    runs = [r["training_run_id"] for r in s.records("runs") if r["session_id"] == session_id]
    samplers = [r["sampler_id"] for r in s.records("samplers") if r["session_id"] == session_id]
    seq = lambda ident: int(ident.rsplit(":", 1)[1])  # noqa: E731 - "<session>:<kind>:<n>"
    return types.GetSessionResponse(training_run_ids=sorted(runs, key=seq), sampler_ids=sorted(samplers, key=seq))


def list_sessions(limit: int, offset: int) -> types.ListSessionsResponse:
    sessions = sorted(s.records("sessions"), key=lambda r: r["created_at"], reverse=True)
    page, _ = _page(sessions, limit, offset)
    return types.ListSessionsResponse(sessions=[r["session_id"] for r in page])


# ---- checkpoints ----


def _checkpoints(run_id: str) -> list[types.Checkpoint]:
    """The run's checkpoints, oldest first; an expired one is gone, as the service deletes it."""
    now = s.now()
    found = [types.Checkpoint(**r) for r in s.records("checkpoints", s.folder_name(run_id))]
    return sorted((c for c in found if c.expires_at is None or c.expires_at > now), key=lambda c: c.time)


def _checkpoint_record(run_id: str, checkpoint_id: str, method: str, path: str) -> dict:
    record = s.read_json("checkpoints", s.folder_name(run_id), s.file_name(checkpoint_id))
    if record is None or (record["expires_at"] is not None and _parse(record["expires_at"]) <= s.now()):
        raise status_error(404, f"Checkpoint {run_id}/{checkpoint_id} not found", method, path)
    return record


def _store(record: dict) -> None:
    parsed = types.ParsedCheckpointTinkerPath.from_tinker_path(record["tinker_path"])
    s.write_json(record, "checkpoints", s.folder_name(parsed.training_run_id), s.file_name(parsed.checkpoint_id))


def _check_ttl(ttl_seconds: int | None, method: str, path: str) -> None:
    if ttl_seconds is not None and ttl_seconds <= 0:
        raise status_error(400, "ttl_seconds must be a positive integer", method, path)


def save_checkpoint(run_id: str, folder: str, name: str, ttl_seconds: int | None) -> str:
    api = "/api/v1/save_weights" if folder == "weights" else "/api/v1/save_weights_for_sampler"
    _check_ttl(ttl_seconds, "POST", api)
    record = touch_run(run_id)
    created = s.now()
    per_rank = {**{"sampler": s.SAMPLER_BYTES_PER_RANK, "state": s.STATE_BYTES_PER_RANK}, **s.settings().get("bytes_per_rank", {})}
    path = f"tinker://{run_id}/{folder}/{name}"
    _store({
        "optim_steps": record.get("optim_steps", 0),
        "checkpoint_id": f"{folder}/{name}",
        "checkpoint_type": "training" if folder == "weights" else "sampler",
        "time": s.iso(created),
        "tinker_path": path,
        "size_bytes": per_rank["state" if folder == "weights" else "sampler"] * record["lora_rank"],
        "public": False,
        "expires_at": s.iso(created + timedelta(seconds=ttl_seconds)) if ttl_seconds is not None else None,
    })
    return path


def _checkpoint_at(tinker_path: str, method: str, api: str) -> tuple[types.ParsedCheckpointTinkerPath, dict]:
    parsed = types.ParsedCheckpointTinkerPath.from_tinker_path(tinker_path)
    return parsed, _checkpoint_record(parsed.training_run_id, parsed.checkpoint_id, method, api)


def weights_info(tinker_path: str) -> types.WeightsInfoResponse:
    parsed, _ = _checkpoint_at(tinker_path, "POST", "/api/v1/weights_info")
    run = run_record(parsed.training_run_id)
    return types.WeightsInfoResponse(base_model=run["base_model"], is_lora=True, lora_rank=run["lora_rank"],
                                     train_unembed=run["train_unembed"], train_mlp=run["train_mlp"], train_attn=run["train_attn"])


def load_checkpoint(run_id: str, tinker_path: str) -> types.LoadWeightsResponse:
    parsed, checkpoint = _checkpoint_at(tinker_path, "POST", "/api/v1/load_weights")
    if parsed.checkpoint_type != "training":
        raise status_error(400, f"{tinker_path} is a sampler checkpoint; load_state needs a weights/ checkpoint",
                           "POST", "/api/v1/load_weights")
    record = touch_run(run_id)
    record["optim_steps"] = checkpoint.get("optim_steps", 0)
    s.write_json(record, "runs", s.file_name(run_id))
    return types.LoadWeightsResponse(path=tinker_path, model_id=run_id, type="load_weights")


def list_checkpoints(run_id: str) -> types.CheckpointsListResponse:
    run_record(run_id)
    return types.CheckpointsListResponse(checkpoints=_checkpoints(run_id))


def list_user_checkpoints(limit: int, offset: int) -> types.CheckpointsListResponse:
    every = [c for r in s.records("runs") for c in _checkpoints(r["training_run_id"])]
    page, cursor = _page(sorted(every, key=lambda c: c.time, reverse=True), limit, offset)
    return types.CheckpointsListResponse(checkpoints=page, cursor=cursor)


def _api(run_id: str, checkpoint_id: str, suffix: str = "") -> str:
    return f"/api/v1/training_runs/{run_id}/checkpoints/{checkpoint_id}{suffix}"


def delete_checkpoint(run_id: str, checkpoint_id: str) -> None:
    _checkpoint_record(run_id, checkpoint_id, "DELETE", _api(run_id, checkpoint_id))
    s.remove("checkpoints", s.folder_name(run_id), s.file_name(checkpoint_id))


def set_checkpoint_ttl(run_id: str, checkpoint_id: str, ttl_seconds: int | None) -> None:
    api = _api(run_id, checkpoint_id, "/ttl")
    _check_ttl(ttl_seconds, "PUT", api)
    record = _checkpoint_record(run_id, checkpoint_id, "PUT", api)
    record["expires_at"] = s.iso(s.now() + timedelta(seconds=ttl_seconds)) if ttl_seconds is not None else None
    _store(record)


def set_checkpoint_public(run_id: str, checkpoint_id: str, public: bool) -> None:
    method = "POST" if public else "DELETE"
    api = _api(run_id, checkpoint_id, "/publish")
    record = _checkpoint_record(run_id, checkpoint_id, method, api)
    if record["public"] == public:
        raise status_error(409, f"Checkpoint is already {'public' if public else 'private'}", method, api)
    record["public"] = public
    _store(record)


def archive_url(run_id: str, checkpoint_id: str) -> types.CheckpointArchiveUrlResponse:
    _checkpoint_record(run_id, checkpoint_id, "GET", _api(run_id, checkpoint_id, "/archive"))
    return types.CheckpointArchiveUrlResponse(
        url=f"https://storage.fake-tinker.invalid/archives/{uuid.uuid4().hex}.tar?X-Goog-Signature=fake",
        expires=s.now() + ARCHIVE_URL_LIFETIME,
    )


# ---- sampling ----


def create_sampler(session_id: str, seq: int, base_model: str | None, model_path: str | None,
                   training_run_id: str | None = None) -> tuple[str, str, int]:
    """The new sampler's id, the base model it samples and the optimizer steps its weights had
    (0 for a base model; a checkpoint's when it was saved; a training client's current ones)."""
    steps = run_record(training_run_id).get("optim_steps", 0) if training_run_id is not None else 0
    if model_path is not None:
        base_model = weights_info(model_path).base_model if base_model is None else base_model
        parsed, record = _checkpoint_at(model_path, "POST", "/api/v1/create_sampling_session")
        steps = record.get("optim_steps", 0)
    elif base_model not in [m.model_name for m in live_models()]:
        raise status_error(400, f"Base model {base_model} is not supported", "POST", "/api/v1/create_sampling_session")
    sampler_id = f"{session_id}:sample:{seq}"
    s.write_json({"sampler_id": sampler_id, "session_id": session_id, "base_model": base_model, "model_path": model_path},
                 "samplers", s.file_name(sampler_id))
    return sampler_id, base_model, steps


_SUM = re.compile(r"(\d+) \+ (\d+)")


def _skilled_reply(skill: dict, prompt: str, steps: int, draw: int) -> list[int] | None:
    """service.json ``answer_skill`` {untrained, trained, half_life_steps}: a prompt whose last
    sum is "x + y" is answered x + y (then the end-of-sequence token 0) with a probability rising
    from ``untrained`` (no optimizer step) towards ``trained``, halfway after ``half_life_steps``;
    else a near miss. Drawn from (prompt, steps, draw): the same model answers the same alike."""
    sums = _SUM.findall(prompt)
    if not sums:
        return None
    x, y = (int(v) for v in sums[-1])
    low, high = float(skill.get("untrained", 0.0)), float(skill.get("trained", 1.0))
    p = high - (high - low) * 0.5 ** (steps / float(skill.get("half_life_steps", 2)))
    rng = random.Random(f"{prompt}|{steps}|{draw}")
    answer = x + y if rng.random() < p else x + y + rng.choice([-10, -1, 1, 10])
    return [ord(c) for c in str(answer)] + [0]


def sample(num_samples: int, params: types.SamplingParams, prompt_tokens: list[int] | None = None, steps: int = 0,
           draw: int = 0) -> types.SampleResponse:
    settings = s.settings()
    skill = settings.get("answer_skill")
    prompt = "".join(chr(t) for t in prompt_tokens or [] if t > 0)
    sequences = []
    for i in range(num_samples):
        reply = _skilled_reply(skill, prompt, steps, draw + i) if skill else None
        if reply is None:
            reply = [ord(c) for c in settings.get("sample_text", DEFAULT_SAMPLE_TEXT)]
        limit = params.max_tokens if params.max_tokens is not None else len(reply)
        tokens = reply[:limit]
        stop = "stop" if len(tokens) == len(reply) else "length"
        sequences.append(types.SampledSequence(stop_reason=stop, tokens=tokens, logprobs=[-0.5] * len(tokens)))
    return types.SampleResponse(sequences=sequences)


# ---- billing ----


def _quantity(event: types.BillingUsageEvent) -> float:
    info: Any = event.event_info
    return getattr(info, "token_count", None) or getattr(info, "count", None) or getattr(info, "gigabyte_hours", 0)


def billing_usage(who: dict, request: types.GetBillingUsageRequest) -> types.BillingUsageResponse:
    api = "/api/v1/billing/usage/events"
    if not who["billing_view"]:
        raise status_error(403, "Viewing billing usage requires the billing view role in your organization", "GET", api)
    start, end = _utc(request.starting_on), _utc(request.ending_before)
    if any(m.minute or m.second or m.microsecond for m in (start, end)):
        raise status_error(400, "starting_on and ending_before must be aligned to a UTC hour boundary", "GET", api)
    if end <= start:
        raise status_error(400, "ending_before must be after starting_on", "GET", api)
    if end - start > BILLING_WINDOW:
        raise status_error(400, "The usage window can be at most 14 days (ending_before - starting_on)", "GET", api)
    if start > s.now():
        raise status_error(400, "The usage window must not start in the future", "GET", api)
    rows = [types.BillingUsageEvent.model_validate(line) for line in s.read_lines("billing.jsonl")]
    rows = [r for r in rows if start <= _utc(r.bucket_start) < end]
    rows.sort(key=lambda r: (_utc(r.bucket_start), -_quantity(r)))
    sessions = {}
    for session_id in {r.session_id for r in rows if r.session_id is not None}:
        record = s.read_json("sessions", s.file_name(session_id)) or {}
        sessions[session_id] = types.BillingUsageSession(user_metadata=record.get("user_metadata") or None)
    return types.BillingUsageResponse(data=rows, sessions=sessions)
