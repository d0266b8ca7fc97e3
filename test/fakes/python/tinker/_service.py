"""The fake Tinker service: its state is files under $FAKE_TINKER_STATE (see the package docstring),
shared by every process of a test. Records are written whole (temp file + rename) and logs are
appended one line per write, so concurrent processes never see half a record.
"""
from __future__ import annotations

import json
import logging
import os
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar
from urllib.parse import quote

from ._exceptions import APIConnectionError, TinkerError, connection_error, status_error

STATE_ENV = "FAKE_TINKER_STATE"
DEFAULT_BASE_URL = "https://tinker.thinkingmachines.dev/services/tinker-prod"
# The SDK retries these for up to five minutes with backoff min(2**n, 30) s (execute_with_retries).
RETRY_WINDOW_SECONDS = 300
RETRYABLE_STATUSES = (408, 409, 429)
BILLING_PAUSE_SECONDS = 60 * 60
BILLING_WARNING_INTERVAL = 60
BILLING_LOGGER = logging.getLogger("tinker.lib.internal_client_holder")
# Checkpoint sizes: a sampler checkpoint holds the LoRA weights, a state checkpoint also the Adam moments.
SAMPLER_BYTES_PER_RANK = 4 * 1024 * 1024
STATE_BYTES_PER_RANK = 3 * SAMPLER_BYTES_PER_RANK

T = TypeVar("T")


def now() -> datetime:
    return datetime.now(timezone.utc)


def iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def root() -> Path | None:
    """$FAKE_TINKER_STATE, else a `file://<dir>` TINKER_BASE_URL: a process that gets only the SDK's
    own variables (a trainer under an allow-listed environment) reaches the same fake service."""
    value = os.environ.get(STATE_ENV)
    if value:
        return Path(value)
    base_url = os.environ.get("TINKER_BASE_URL", "")
    return Path(base_url[len("file://"):]) if base_url.startswith("file://") else None


def _path(*parts: str) -> Path:
    base = root()
    assert base is not None
    return base.joinpath(*parts)


def read_json(*parts: str, default: Any = None) -> Any:
    try:
        return json.loads(_path(*parts).read_text())
    except FileNotFoundError:
        return default


def write_json(value: Any, *parts: str) -> None:
    target = _path(*parts)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
    with os.fdopen(fd, "w") as out:
        json.dump(value, out)
    os.replace(tmp, target)


def remove(*parts: str) -> bool:
    try:
        _path(*parts).unlink()
        return True
    except FileNotFoundError:
        return False


def records(*parts: str) -> Iterator[dict]:
    folder = _path(*parts)
    if folder.is_dir():
        for entry in sorted(folder.iterdir()):
            if entry.suffix == ".json" and not entry.name.startswith("."):
                try:
                    yield json.loads(entry.read_text())
                except FileNotFoundError:
                    continue


def append_line(value: Any, *parts: str) -> None:
    target = _path(*parts)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, (json.dumps(value, default=str) + "\n").encode())
    finally:
        os.close(fd)


def read_lines(*parts: str) -> list[dict]:
    try:
        text = _path(*parts).read_text()
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def folder_name(identifier: str) -> str:
    """A run or checkpoint id as one path component (ids hold ':' and '/')."""
    return quote(identifier, safe="")


def file_name(identifier: str) -> str:
    return folder_name(identifier) + ".json"


# ---- credentials (the SDK's ApiKeyAuthProvider, then the server's check) ----


def resolve_key(api_key: str | None) -> str:
    """The key as the SDK resolves it: argument, else TINKER_API_KEY; refused without its prefixes."""
    resolved = api_key or os.environ.get("TINKER_API_KEY")
    if not resolved:
        raise TinkerError(
            "The api_key client option must be set either by passing api_key to the client"
            " or by setting the TINKER_API_KEY environment variable"
        )
    if not resolved.startswith("tml-") and not resolved.startswith("eyJ"):
        raise TinkerError("The api_key must start with the 'tml-' prefix")
    return resolved


def principal(key: str) -> dict:
    """The accepted key's record in keys.json (`billing_view`, `user_id`, `user_name`), else a 401."""
    entry = (read_json("keys.json", default={}) or {}).get(key)
    if entry is None:
        raise status_error(401, "Invalid API key", "POST", "/api/v1/client/config")
    return {"billing_view": False, "user_id": "tml:organization_user:fake", "user_name": "Fake User", **entry}


# ---- calls: logged, failed on demand, retried as the SDK retries ----


def _fault_for(method: str) -> dict | None:
    faults = read_json("faults.json", default={}) or {}
    fault = faults.get(method) or faults.get("*")
    if fault is None:
        return None
    times = fault.get("times")
    if times is not None:
        used = sum(1 for hit in read_lines("fault_hits.jsonl") if hit.get("method") == method)
        if used >= times:
            return None
        append_line({"method": method}, "fault_hits.jsonl")
    return fault


def _raise_fault(fault: dict, method: str) -> None:
    if fault.get("connection_error"):
        raise connection_error(path=method)
    raise status_error(int(fault.get("status", 500)), fault.get("detail", "Internal Server Error"), path=method)


def settings() -> dict:
    """service.json: `retry_window_seconds` (default the SDK's 300), `sample_text`, `answer_skill`, `bytes_per_rank`."""
    return (read_json("service.json", default={}) or {}) if root() is not None else {}


def _retryable(error: Exception) -> bool:
    if isinstance(error, APIConnectionError):
        return True
    status = getattr(error, "status_code", None)
    return status is not None and (status in RETRYABLE_STATUSES or 500 <= status < 600)


def _attempt(method: str, key: str, work: Callable[[dict], T]) -> T:
    if root() is None:
        # No service to talk to: every attempt fails to connect, as against an unreachable host.
        raise connection_error(path=method)
    fault = _fault_for(method)
    if fault is not None:
        _raise_fault(fault, method)
    return work(principal(key))


def call(method: str, args: dict, key: str, work: Callable[[dict], T]) -> T:
    """Logs the call (never the key), then runs `work(principal)` once the key is accepted and no
    injected fault is due, retrying what the SDK retries for as long as it does."""
    if root() is not None:
        append_line({"time": iso(now()), "pid": os.getpid(), "method": method, "args": args}, "calls.jsonl")
    window = settings().get("retry_window_seconds", RETRY_WINDOW_SECONDS)
    started, attempt, paused_since, warned_at = time.monotonic(), 0, None, None
    while True:
        try:
            return _attempt(method, key, work)
        except Exception as error:  # noqa: BLE001 - re-raised unless the SDK would retry it
            clock = time.monotonic()
            if getattr(error, "status_code", None) == 402:
                # Payment required: the SDK pauses (5 s between tries, a warning every 60 s) for up
                # to an hour (its client config), then raises.
                paused_since = paused_since or clock
                if clock - paused_since <= settings().get("billing_pause_seconds", BILLING_PAUSE_SECONDS):
                    if warned_at is None or clock - warned_at > BILLING_WARNING_INTERVAL:
                        warned_at = clock
                        BILLING_LOGGER.warning(f"The job is paused due to billing status. Error: {error.message}")
                    time.sleep(5)
                    continue
            if not _retryable(error) or clock - started >= window:
                raise
            time.sleep(min(2**attempt, 30, window - (clock - started)))
            attempt += 1

