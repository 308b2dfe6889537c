"""The store's current revision for consistent reads, one probe shared by the readers that wait together.

A reader must learn a revision read after it arrived (else it could miss a write acknowledged before
it asked), so it joins a probe only if that probe has not started yet: while one runs, the readers that
arrive meanwhile share the next one, which starts when it ends. Under load a probe costs one store round
trip per batch of readers instead of one per reader."""

from __future__ import annotations

import asyncio

from store.base import Store


class RevisionProbe:
    def __init__(self, store: Store) -> None:
        self._store = store
        self._running: asyncio.Future[int] | None = None
        self._next: asyncio.Future[int] | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def current(self) -> int:
        if self._running is None:
            future = self._running = asyncio.get_running_loop().create_future()
            self._start(future)
        else:
            if self._next is None:
                self._next = asyncio.get_running_loop().create_future()
            future = self._next
        return await asyncio.shield(future)

    def _start(self, future: asyncio.Future[int]) -> None:
        task = asyncio.get_running_loop().create_task(self._probe(future), name="store-revision-probe")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _probe(self, future: asyncio.Future[int]) -> None:
        try:
            revision = await self._store.current_revision()
        except asyncio.CancelledError:
            future.cancel()
            raise
        except Exception as exc:
            if not future.done():
                future.set_exception(exc)
                # Marked as seen: every waiter may have gone meanwhile, and it is theirs to report.
                future.exception()
        else:
            if not future.done():
                future.set_result(revision)
        finally:
            self._running = None
            if self._next is not None:
                following, self._next = self._next, None
                self._running = following
                self._start(following)
