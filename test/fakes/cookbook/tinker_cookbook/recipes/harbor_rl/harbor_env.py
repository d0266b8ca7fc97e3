"""Harbor tasks and their sandboxes (tinker_cookbook/recipes/harbor_rl/harbor_env.py): the default
sandbox factory imports ``modal`` where it is called, as upstream."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SandboxFactory = Callable[[Path, int], Awaitable[Any]]


async def default_sandbox_factory(env_dir: Path, timeout: int) -> Any:
    import modal

    return modal.Image.from_dockerfile(path=str(env_dir / "Dockerfile"), context_dir=str(env_dir))


@dataclass(frozen=True)
class HarborTask:
    task_name: str
    instruction: str
    task_dir: Path
    config: dict[str, Any] = field(default_factory=dict)
