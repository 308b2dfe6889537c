"""What a controller is (`Controller`: a name and a ``run()``), and the skeleton of the controllers that
follow informers (`InformerController`): ``run()`` syncs their informers, then starts one worker that
syncs a key at a time from a `WorkQueue`, then releases ``wait_synced``."""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, Protocol

from cluster.api.kinds import kind_by_name
from cluster.client import Client, Informer
from cluster.controllers.workqueue import WorkQueue


class Controller(Protocol):
    @property
    def name(self) -> str:
        """How ``--controllers``, the controller's tasks and its errors name it."""

    async def run(self) -> None:
        """Watch and write through the client until cancelled."""


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


class InformerController(ABC):
    """A controller whose handlers mark keys in ``_queue`` and whose one worker syncs them (``_sync``),
    each key's failures retried with backoff."""

    name: str

    def __init__(self, client: Client) -> None:
        self._client = client
        self._queue = WorkQueue()
        self._synced = Started()
        self._log = logging.getLogger(type(self).__module__)
        #: Whether the worker is syncing a key right now.
        self._syncing = False

    @abstractmethod
    def _informers(self) -> Mapping[str, Informer[Any]]:
        """The informers ``run()`` runs, by the kind each watches (in their tasks' names)."""

    @abstractmethod
    async def _sync(self, key: str) -> None:
        """Bring ``key``'s object up to date; an error brings ``key`` back after its backoff."""

    @abstractmethod
    def _what(self, key: str) -> str:
        """``key``'s object as the log names it."""

    @abstractmethod
    def _after_sync(self, tasks: asyncio.TaskGroup) -> None:
        """Once the informers have synced, before the worker starts: say so in the log, and start in
        ``tasks`` whatever else runs beside the worker."""

    async def wait_synced(self) -> None:
        """Return once the informers have synced and the worker runs; raise what ended ``run()`` if it
        failed first."""
        await self._synced.wait()

    async def run(self) -> None:
        """Follow the informers and sync what they mark, until cancelled."""
        try:
            async with asyncio.TaskGroup() as tasks:
                informers = self._informers()
                for kind, informer in informers.items():
                    tasks.create_task(informer.run(), name=f"{self.name}-{kind}-informer")
                for informer in informers.values():
                    await informer.wait_synced()
                self._after_sync(tasks)
                tasks.create_task(self._work(), name=f"{self.name}-worker")
                self._synced.set()
        except BaseException as err:
            self._synced.ended(err)
            raise

    async def _work(self) -> None:
        while True:
            await self._process(await self._queue.get())

    async def _process(self, key: str) -> None:
        self._syncing = True
        try:
            await self._queue.process(key, self._sync, self._what(key), self._log)
        finally:
            self._syncing = False

    def idle(self) -> bool:
        """No key ready to be synced and none being synced: what a simulation waits for before it goes on.
        A key waiting out a failure's backoff does not count: its sync failed on what the controller saw
        (a missing template, say) and fails again until that changes, which marks it ready."""
        return not self._syncing and not self._queue.has_ready()

    def informer_revisions(self) -> dict[str, int]:
        """The resourceVersion each informer has applied (0 before its first list), by the plural of the
        kind it watches."""
        return {kind_by_name(kind).plural: int(informer.resource_version or 0)
                for kind, informer in self._informers().items()}
