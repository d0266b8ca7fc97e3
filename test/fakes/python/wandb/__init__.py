"""Test fake of the ``wandb`` client, just what atroposlib and the tinker-atropos trainer call.

``init`` fails without credentials exactly where the real client does when there is no TTY to
prompt on (no WANDB_API_KEY, WANDB_MODE not offline/disabled). Nothing is uploaded: metrics stay in
``run.history`` of this process.
"""
import os
import random
import string
import sys
from typing import Any, Dict, List, Optional

from . import errors

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


def init(project=None, name=None, group=None, config=None, tags=None, **_kwargs) -> Run:
    global run
    mode = os.environ.get("WANDB_MODE", "").lower()
    if not os.environ.get("WANDB_API_KEY") and mode not in ("offline", "disabled", "dryrun"):
        raise errors.UsageError("api_key not configured (no-tty). call wandb.login(key=[your_api_key])")
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
