"""``maybe_semaphore`` (verifiers/utils/async_utils.py), which the cookbook's verifiers_rl recipe imports."""
import asyncio
import contextlib
from typing import AsyncContextManager, Optional


async def maybe_semaphore(limit: Optional[int] = None) -> AsyncContextManager:
    """A semaphore of ``limit`` slots, or a no-op context manager when limit is None or <= 0."""
    if limit and limit > 0:
        return asyncio.Semaphore(limit)
    return contextlib.nullcontext()
