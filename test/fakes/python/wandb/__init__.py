"""Test fake of the ``wandb`` client, just what atroposlib and the tinker-atropos trainer call.

``init`` fails without credentials exactly where the real client does when there is no TTY to
prompt on (no WANDB_API_KEY, WANDB_MODE not offline/disabled). With WANDB_BASE_URL set (the tests'
fake W&B server, test/fakes/wandbServer.ts) it asks that backend first, as the real client does on
init: a key it refuses fails with the real client's error, and a backend that cannot be reached
fails once ``init_timeout`` (WANDB_INIT_TIMEOUT, default 90 s) is over. Without WANDB_BASE_URL
there is no backend to ask and any key is taken. Nothing is uploaded: metrics stay in
``run.history`` of this process.
"""
import base64
import os
import random
import string
import sys
import time
import urllib.error
from http import HTTPStatus
from typing import Any, Dict, List, Optional

from atroposlib.utils.json_http import HttpStatusError, request_json

from . import errors

OFFLINE_MODES = ("offline", "disabled", "dryrun")
RETRY_SECONDS = 1.0

run: Optional["Run"] = None


class Run:
    def __init__(self, name: str, project: Optional[str], group: Optional[str], config: Optional[dict], tags: Optional[list]):
        self.id = "".join(random.choices(string.ascii_lowercase + string.digits, k=8))
        self.name = name
        self.project = project
        self.group = group
        self.config = dict(config or {})
        self.tags = list(tags or [])
        self.history: List[Dict[str, Any]] = []

    def log(self, data: Dict[str, Any], step: Optional[int] = None) -> None:
        self.history.append({**data, "_step": step if step is not None else len(self.history)})

    def finish(self) -> None:
        global run
        if run is self:
            run = None


def _fail(message: str) -> None:
    sys.stderr.write(f"wandb: ERROR {message}\n")
    raise errors.CommError(message)


def _ask_backend(base_url: str, api_key: str) -> None:
    """The viewer query: the fake W&B server answers it the way the real backend answers the run
    creation (upsertBucket), 401 for a key it refuses."""
    credentials = base64.b64encode(f"api:{api_key}".encode()).decode()
    timeout = float(os.environ.get("WANDB_INIT_TIMEOUT", "90"))
    deadline = time.monotonic() + timeout
    announced = False
    while True:
        try:
            request_json("POST", f"{base_url.rstrip('/')}/graphql", {"query": "query Viewer { viewer { id entity } }"},
                         timeout=timeout, headers={"Authorization": f"Basic {credentials}"})
            return
        except HttpStatusError as error:
            _fail(f"failed to upsert bucket: returned error {error.status} {HTTPStatus(error.status).phrase}: {error.body}")
        except (urllib.error.URLError, OSError):
            if not announced:
                sys.stderr.write("wandb: Network error (ConnectionError), entering retry loop.\n")
                announced = True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            _fail(
                f"Run initialization has timed out after {timeout:.1f} sec. Please try increasing the timeout "
                "with the `init_timeout` setting: `wandb.init(settings=wandb.Settings(init_timeout=120))`."
            )
        time.sleep(min(RETRY_SECONDS, remaining))


def init(project=None, name=None, group=None, config=None, tags=None, **_kwargs) -> Run:
    global run
    mode = os.environ.get("WANDB_MODE", "").lower()
    api_key = os.environ.get("WANDB_API_KEY")
    if mode not in OFFLINE_MODES:
        if not api_key:
            raise errors.UsageError("api_key not configured (no-tty). call wandb.login(key=[your_api_key])")
        if os.environ.get("WANDB_BASE_URL"):
            _ask_backend(os.environ["WANDB_BASE_URL"], api_key)
    run = Run(name or "".join(random.choices(string.ascii_lowercase, k=8)), project, group, config, tags)
    if mode != "disabled":
        sys.stderr.write(f"wandb: Tracking run with wandb version 0.0.0 (fake)\nwandb: Syncing run {run.name}\n")
    return run


def log(data: Dict[str, Any], step: Optional[int] = None, commit: Optional[bool] = None) -> None:
    if run is None:
        raise errors.Error("You must call wandb.init() before wandb.log()")
    run.log(data, step)


def finish() -> None:
    if run is not None:
        run.finish()
