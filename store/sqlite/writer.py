"""The single writer thread, with group commit.

SQLite admits one writer at a time, and every COMMIT pays for a WAL append (and with synchronous=FULL an
fsync). So one dedicated thread owns the only write connection and runs every write; the asyncio event
loop never waits on the database. The thread takes whatever requests have queued up while it was busy
and runs them in one transaction, each inside its own SAVEPOINT, so a failing request is undone alone
while the others still commit together: many coroutines writing at once cost one commit per batch, not
one per write.

A request is a function of the connection returning ``(result, events)``. After COMMIT the thread hands
the batch back to the event loop in a single callback that first publishes the events of the whole batch
(in commit order, so watchers see revisions in order) and then resolves the requests' futures: a caller
whose write was acknowledged knows that every watcher registered before has been offered its event.

A request marked ``exclusive`` runs on its own, outside any transaction (a WAL checkpoint or an
incremental vacuum cannot run inside one).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from store.base import StoreUnavailable
from store.sqlite.dialect import translate_error

log = logging.getLogger(__name__)

T = TypeVar("T")
E = TypeVar("E")

#: The most requests committed in one transaction. Bigger batches amortise a commit over more writes
#: but hold the write lock longer and delay the first acknowledgement of the batch; 256 small writes
#: take a few milliseconds.
MAX_BATCH = 256

#: A request's function: runs on the writer thread, returns its result and the events it produced.
WriteFn = Callable[[sqlite3.Connection], tuple[T, Sequence[E]]]


@dataclass(slots=True)
class _Request(Generic[T, E]):
    fn: WriteFn[T, E]
    future: asyncio.Future[T]
    exclusive: bool


# What a finished request hands back to the event loop: (future, result, error).
_Outcome = tuple[asyncio.Future[Any], Any, BaseException | None]


class Writer(Generic[E]):
    """Runs write requests on one thread and one connection; see the module docstring."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        loop: asyncio.AbstractEventLoop,
        publish: Callable[[list[E]], None],
    ) -> None:
        self._conn = conn
        self._loop = loop
        self._publish = publish
        self._queue: queue.SimpleQueue[_Request[Any, E] | None] = queue.SimpleQueue()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="sqlite-writer", daemon=True)
        self._thread.start()

    def submit(self, fn: WriteFn[T, E], *, exclusive: bool = False) -> asyncio.Future[T]:
        """Queue ``fn``; the future resolves once its transaction committed (or fails with its error)."""
        if self._closed:
            raise StoreUnavailable("sqlite store is closed")
        future: asyncio.Future[T] = self._loop.create_future()
        self._queue.put(_Request(fn, future, exclusive))
        return future

    async def close(self) -> None:
        """Finish the requests already queued, then stop the thread and close the connection."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(None)
        await asyncio.to_thread(self._thread.join)

    def _run(self) -> None:
        # A request taken from the queue that cannot join the current batch (an exclusive one, or the
        # stop sentinel) is held for the next round, which keeps the queue's order.
        held: _Request[Any, E] | None = None
        stop = False
        try:
            while True:
                if held is not None:
                    first, held = held, None
                elif stop:
                    return
                else:
                    taken = self._queue.get()
                    if taken is None:
                        return
                    first = taken
                if first.exclusive:
                    self._run_exclusive(first)
                    continue
                batch = [first]
                while len(batch) < MAX_BATCH:
                    try:
                        nxt = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if nxt is None:
                        stop = True
                        break
                    if nxt.exclusive:
                        held = nxt
                        break
                    batch.append(nxt)
                self._run_batch(batch)
        finally:
            self._conn.close()

    def _run_exclusive(self, request: _Request[Any, E]) -> None:
        try:
            result, events = request.fn(self._conn)
        except sqlite3.Error as exc:
            self._deliver([], [(request.future, None, translate_error(exc))])
        except Exception as exc:  # delivered to the caller, who owns the error
            self._deliver([], [(request.future, None, exc)])
        else:
            self._deliver(list(events), [(request.future, result, None)])

    def _run_batch(self, batch: list[_Request[Any, E]]) -> None:
        conn = self._conn
        outcomes: list[_Outcome] = []
        events: list[E] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            error = translate_error(exc)
            self._deliver([], [(r.future, None, error) for r in batch])
            return
        try:
            for request in batch:
                conn.execute("SAVEPOINT request")
                try:
                    result, produced = request.fn(conn)
                except Exception as exc:
                    conn.execute("ROLLBACK TO request")
                    conn.execute("RELEASE request")
                    failure: Exception = translate_error(exc) if isinstance(exc, sqlite3.Error) else exc
                    outcomes.append((request.future, None, failure))
                else:
                    conn.execute("RELEASE request")
                    outcomes.append((request.future, result, None))
                    events.extend(produced)
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            # The transaction as a whole failed (disk full, I/O error): nothing of the batch landed.
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            error = translate_error(exc)
            self._deliver([], [(r.future, None, error) for r in batch])
            return
        self._deliver(events, outcomes)

    def _deliver(self, events: list[E], outcomes: list[_Outcome]) -> None:
        try:
            self._loop.call_soon_threadsafe(self._complete, events, outcomes)
        except RuntimeError:
            # The event loop is gone (closed without closing the store); nobody is waiting any more.
            log.debug("sqlite writer: event loop closed, dropping %d outcomes", len(outcomes))

    def _complete(self, events: list[E], outcomes: list[_Outcome]) -> None:
        if events:
            self._publish(events)
        for future, result, error in outcomes:
            if future.done():  # the caller was cancelled; the write stands regardless, as in etcd
                continue
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)
