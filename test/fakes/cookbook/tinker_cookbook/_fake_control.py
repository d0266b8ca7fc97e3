"""Test-only switches of the fake cookbook (not part of the real package): the JSON file named by
$FAKE_COOKBOOK_CONTROL, else ``fake_cookbook.json`` in the working directory. It is read again at
every training step, so a test can change a running run (lift a hang). The keys
are listed in tinker_cookbook/__init__.py."""
import asyncio
import json
import os
import signal
import subprocess
import sys
from typing import Any

CONTROL_ENV = "FAKE_COOKBOOK_CONTROL"
CONTROL_FILE = "fake_cookbook.json"
POLL_SECONDS = 0.2


def read_control() -> dict[str, Any]:
    try:
        with open(os.environ.get(CONTROL_ENV) or CONTROL_FILE) as f:
            return json.load(f)
    except (FileNotFoundError, json.JSONDecodeError):
        # A file caught half-written by the test counts as absent until the next read.
        return {}


def reward_at(control: dict[str, Any], step: int) -> float:
    """The mean reward of batch ``step``: the control's ``rewards[step]`` (its last value repeats),
    else a curve rising from 0.3 towards 0.8."""
    rewards = control.get("rewards")
    if rewards:
        return float(rewards[min(step, len(rewards) - 1)])
    return round(0.3 + 0.5 * (1 - 0.85 ** step), 6)


def step_seconds(control: dict[str, Any]) -> float:
    return float(control.get("step_seconds", 0.05))


def at_trainer_start() -> None:
    """``ignore_sigterm``: SIGTERM is ignored from here on; ``spawn_grandchild``: a sleeping child in
    the same process group, its pid printed as "grandchild pid: N"."""
    control = read_control()
    if control.get("ignore_sigterm"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if control.get("spawn_grandchild"):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        print(f"grandchild pid: {child.pid}", flush=True)


def _failure_class(name: str) -> type[Exception]:
    """``fail_with``: RuntimeError, or a class of tinker_cookbook.exceptions (ConfigurationError,
    TrainingError), raised as the cookbook raises its own."""
    if name == "RuntimeError":
        return RuntimeError
    from tinker_cookbook import exceptions
    return getattr(exceptions, name)


async def before_step(step: int) -> None:
    """Batch ``step`` takes ``step_seconds``; ``hang_at_step`` holds it (and every later one) before
    its metrics row as long as the key stays; ``fail_at_step`` makes it raise ``fail_with``."""
    control = read_control()
    while control.get("hang_at_step") is not None and step >= int(control["hang_at_step"]):
        await asyncio.sleep(POLL_SECONDS)
        control = read_control()
    if control.get("fail_at_step") == step:
        raise _failure_class(control.get("fail_with", "RuntimeError"))(f"simulated failure in batch {step}")
    await asyncio.sleep(step_seconds(control))

