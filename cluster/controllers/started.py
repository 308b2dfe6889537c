"""How a controller's ``run()`` tells its callers it has started: its informers have synced and its
workers run (``Started``), and the start every controller shares (``sync_informers``)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from cluster.client import Informer


class Started:
    """Set once ``run()`` has synced its informers and started its workers. A ``run()`` that fails
    before that releases the waiters with its error; a cancellation releases nobody."""

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self._failure: BaseException | None = None

    def is_set(self) -> bool:
        return self._event.is_set()

    def set(self) -> None:
        self._event.set()

    def ended(self, error: BaseException) -> None:
        """``run()`` ended with ``error``: waiters not yet released get it."""
        if not self._event.is_set() and not isinstance(error, asyncio.CancelledError):
            self._failure = error
            self._event.set()

    async def wait(self) -> None:
        """Return once started; raise what ended ``run()`` if it failed first."""
        await self._event.wait()
        if self._failure is not None:
            raise self._failure


async def sync_informers(
    tasks: asyncio.TaskGroup, controller: str, informers: Mapping[str, Informer[Any]]
) -> None:
    """Run each of ``informers`` (by the kind it watches) in ``tasks`` and return once all have synced."""
    for kind, informer in informers.items():
        tasks.create_task(informer.run(), name=f"{controller}-{kind}-informer")
    for informer in informers.values():
        await informer.wait_synced()
