"""The binder's background task for unit-test rigs that drive scheduling cycles by hand."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest


@contextlib.asynccontextmanager
async def running_binder(binder: Any) -> AsyncIterator[None]:
    """Run ``binder.run()`` for the body's duration; it must still be running (not failed) at the end."""
    task = asyncio.create_task(binder.run())
    await asyncio.sleep(0)
    try:
        yield
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


async def bindings_done(binder: Any) -> None:
    """Return once no binding is in flight (each finishes within a few loop turns: its API is in memory)."""
    for _ in range(100):
        if binder.in_flight == 0:
            return
        await asyncio.sleep(0)
    raise AssertionError("the bindings did not finish")
