"""MemoryStore: etcd's semantics held in this process's memory, for the in-process control planes.

``podsched simulate`` (and other planes that run the API server and the scheduler in one process on a
virtual clock) need a store whose calls cost a few dictionary operations: no thread, no file, no hop
off the event loop. Everything here runs on the event loop, and a call never waits for anything but its
own work, so one call is atomic with respect to every other.

It is NOT a deployment option (store.factory does not offer it): its data is gone when the process
exits. The contract suite (tests/contract) holds it to exactly the SQLite store's and etcd's behaviour.

Layout, for 10,000s of keys and 100,000s of revisions:

* per key, its versions as (revision, value or None for a deletion), oldest first: a historical read
  bisects them;
* two sorted key indexes, the live keys (current lists) and every key with retained history
  (historical lists): a page costs a bisect plus the page;
* one event log in (revision, key) order for watches; a watch is a cursor into it, so watchers share
  the log rather than each buffering a copy.

``compact(C)`` drops the versions no read at or after C needs (walking only the keys written since the
last compaction) and the events before C, except those a live watch has yet to deliver: a watch that
falls behind a compaction still sees every event, as a SQLite watch does from its buffer.

Several ``MemoryStore`` handles may share one ``MemoryState`` (``MemoryStore(state)``), like several
connections to one etcd: closing a handle ends that handle's watches and refuses its later calls, and
the data stays for the others.
"""

from __future__ import annotations

import asyncio
import weakref
from bisect import bisect_left, bisect_right
from collections.abc import AsyncIterator, Sequence
from typing import cast

from store.base import (
    EventType,
    FutureRevision,
    Guard,
    KeyValue,
    ListResult,
    OpType,
    ProgressMark,
    StoreError,
    StoreUnavailable,
    TooOldRevision,
    TxnOp,
    TxnResult,
    WatchEvent,
    WriteResult,
    check_list_arguments,
    check_txn,
    op_holds,
)

#: One version of a key: the revision that wrote it and the key as written, or None for a deletion.
Version = tuple[int, KeyValue | None]


class _Cursor:
    """A watch's position in the event log: the absolute index of the next event it reads."""

    __slots__ = ("__weakref__", "position")

    def __init__(self, position: int) -> None:
        self.position = position


class _MarkRequest:
    """Whether a progress watch owes a ``ProgressMark`` (held weakly: it goes with its watch)."""

    __slots__ = ("__weakref__", "requested")

    def __init__(self) -> None:
        self.requested = False


class _Waiter:
    """A watch waiting for the log to grow: its prefix and cursor, so that a write it would not deliver
    moves its cursor on without resuming it."""

    __slots__ = ("cursor", "future", "prefix")

    def __init__(self, prefix: str, cursor: _Cursor, future: asyncio.Future[None]) -> None:
        self.prefix = prefix
        self.cursor = cursor
        self.future = future


class MemoryState:
    """The data that ``MemoryStore`` handles share: keys, their history, the event log, the revisions."""

    def __init__(self) -> None:
        self.revision = 0
        self.compacted = 0
        self.live: dict[str, KeyValue] = {}
        self.live_keys: list[str] = []
        self.history: dict[str, list[Version]] = {}
        self.history_keys: list[str] = []
        #: Events in (revision, key) order; ``events[0]`` is event number ``events_base`` of the store.
        self.events: list[WatchEvent] = []
        self.events_base = 0
        #: The absolute index of the first event whose keys a compaction has not yet visited.
        self._unvisited = 0
        self._cursors: weakref.WeakSet[_Cursor] = weakref.WeakSet()
        #: The handles with a watch waiting for the log to grow.
        self.waiting: set[MemoryStore] = set()

    # ---- reads -------------------------------------------------------------------------------------

    def at(self, key: str, revision: int) -> KeyValue | None:
        """``key`` as it was at ``revision`` (which must not be compacted)."""
        versions = self.history.get(key)
        if not versions:
            return None
        index = bisect_right(versions, revision, key=lambda version: version[0])
        return versions[index - 1][1] if index else None

    def check_readable(self, revision: int) -> None:
        if revision > self.revision:
            raise FutureRevision(revision, self.revision)
        if revision < self.compacted:
            raise TooOldRevision(revision, self.compacted)

    # ---- writes ------------------------------------------------------------------------------------

    def mod_revision(self, key: str) -> int:
        current = self.live.get(key)
        return 0 if current is None else current.mod_revision

    def failed_guards(self, guards: Sequence[Guard]) -> tuple[Guard, ...]:
        return tuple(guard for guard in guards if self.mod_revision(guard.key) != guard.mod_revision)

    def put(self, key: str, value: bytes, revision: int) -> KeyValue:
        """Write ``key`` at ``revision`` (the caller advanced ``self.revision`` to it)."""
        before = self.live.get(key)
        written = KeyValue(key, value, revision if before is None else before.create_revision, revision)
        if before is None:
            _insert(self.live_keys, key)
        self.live[key] = written
        self._record(key, written, revision)
        self.events.append(
            WatchEvent(
                EventType.PUT, key, value, revision, written.create_revision,
                None if before is None else before.value,
            )
        )
        return written

    def remove(self, key: str, revision: int) -> KeyValue:
        """Delete the live ``key`` at ``revision``; returns the value it had."""
        before = self.live.pop(key)
        _discard(self.live_keys, key)
        self._record(key, None, revision)
        self.events.append(
            WatchEvent(EventType.DELETE, key, before.value, revision, before.create_revision, before.value)
        )
        return before

    def _record(self, key: str, written: KeyValue | None, revision: int) -> None:
        versions = self.history.get(key)
        if versions is None:
            self.history[key] = [(revision, written)]
            _insert(self.history_keys, key)
        else:
            versions.append((revision, written))

    def published(self) -> None:
        """Wake the waiting watches that have an event of the grown log to deliver."""
        if self.waiting:
            waiting, self.waiting = self.waiting, set()
            for handle in waiting:
                if handle.wake_matching():
                    self.waiting.add(handle)

    # ---- compaction --------------------------------------------------------------------------------

    def compact(self, revision: int) -> None:
        if revision > self.revision:
            raise FutureRevision(revision, self.revision)
        if revision <= self.compacted:
            raise TooOldRevision(revision, self.compacted)
        self.compacted = revision
        end = self.events_base + bisect_left(self.events, revision, key=lambda event: event.revision)
        unvisited = self.events[self._unvisited - self.events_base : end - self.events_base]
        touched = {event.key for event in unvisited}
        for key in touched:
            self._forget_before(key, revision)
        self._unvisited = end
        # Events a live watch has not delivered yet stay until it has read past them.
        keep_from = min([end, *(cursor.position for cursor in self._cursors)])
        if keep_from > self.events_base:
            del self.events[: keep_from - self.events_base]
            self.events_base = keep_from

    def _forget_before(self, key: str, revision: int) -> None:
        """Keep of ``key``'s versions only the one a read at ``revision`` sees and the later ones."""
        versions = self.history.get(key)
        if versions is None:  # forgotten whole by an earlier compaction, deleted at its revision
            return
        index = bisect_right(versions, revision, key=lambda version: version[0])
        if index and versions[index - 1][1] is None:
            # Deleted as of the compaction: a read at or after it finds nothing there.
            del versions[:index]
        elif index > 1:
            del versions[: index - 1]
        if not versions:
            del self.history[key]
            _discard(self.history_keys, key)

    # ---- watch cursors -----------------------------------------------------------------------------

    def cursor_at(self, revision: int) -> _Cursor:
        """A cursor on the first event at ``revision`` or later (the log holds every event from the
        compaction on, so for a readable revision that is the first event a watch owes)."""
        index = bisect_left(self.events, revision, key=lambda event: event.revision)
        cursor = _Cursor(self.events_base + index)
        self._cursors.add(cursor)
        return cursor

    def release(self, cursor: _Cursor) -> None:
        self._cursors.discard(cursor)


class MemoryStore:
    """One handle on a ``MemoryState`` (a new, empty one unless given). Use it from one event loop."""

    def __init__(self, state: MemoryState | None = None) -> None:
        self.state = state if state is not None else MemoryState()
        self._closed = False
        self._waiters: list[_Waiter] = []
        self._mark_requests: weakref.WeakSet[_MarkRequest] = weakref.WeakSet()

    async def _open_state(self) -> MemoryState:
        # Every call of the other stores is a point where other tasks run; one turn of the event loop
        # keeps that (callers interleave, a loop of writes lets watchers and servers run) at no hop's cost.
        await asyncio.sleep(0)
        if self._closed:
            raise StoreUnavailable("memory store is closed")
        return self.state

    # ---- reads -------------------------------------------------------------------------------------

    async def get(self, key: str) -> KeyValue | None:
        return (await self._open_state()).live.get(key)

    async def get_many(self, keys: Sequence[str]) -> list[KeyValue | None]:
        live = (await self._open_state()).live
        return [live.get(key) for key in keys]

    async def list(
        self, prefix: str, limit: int = 0, continue_key: str | None = None, revision: int = 0
    ) -> ListResult:
        check_list_arguments(prefix, limit, continue_key, revision)
        state = await self._open_state()
        start = prefix if continue_key is None or continue_key < prefix else continue_key
        # One key more than the page tells whether there is a next page, and where it starts.
        want = limit + 1 if limit else -1
        items: list[KeyValue] = []
        if revision == 0 or revision == state.revision:
            at, keys = state.revision, state.live_keys
            for index in range(bisect_left(keys, start), len(keys)):
                key = keys[index]
                if not key.startswith(prefix) or len(items) == want:
                    break
                items.append(state.live[key])
        else:
            state.check_readable(revision)
            at, keys = revision, state.history_keys
            for index in range(bisect_left(keys, start), len(keys)):
                key = keys[index]
                if not key.startswith(prefix) or len(items) == want:
                    break
                found = state.at(key, revision)
                if found is not None:
                    items.append(found)
        next_key = None
        if limit and len(items) > limit:
            next_key = items[limit].key
            items = items[:limit]
        return ListResult(items, at, next_key)

    async def current_revision(self) -> int:
        return (await self._open_state()).revision

    async def compacted_revision(self) -> int:
        return (await self._open_state()).compacted

    # ---- writes ------------------------------------------------------------------------------------

    async def create(self, key: str, value: bytes, guards: Sequence[Guard] = ()) -> WriteResult:
        return await self._write(TxnOp.create(key, value), guards)

    async def update(
        self, key: str, value: bytes, expected_revision: int | None, guards: Sequence[Guard] = ()
    ) -> WriteResult:
        return await self._write(TxnOp.update(key, value, expected_revision), guards)

    async def delete(
        self, key: str, expected_revision: int | None, guards: Sequence[Guard] = ()
    ) -> WriteResult:
        return await self._write(TxnOp.delete(key, expected_revision), guards)

    async def _write(self, op: TxnOp, guards: Sequence[Guard]) -> WriteResult:
        """One key's compare-and-swap: ``op`` at a new revision if its comparison and ``guards`` hold. The
        answer carries the key as written (for a delete, as it was), or as it is when nothing was."""
        _check_key(op.key)
        state = await self._open_state()
        current = state.live.get(op.key)
        failed = state.failed_guards(guards)
        if not op_holds(op, current) or failed:
            return WriteResult(False, state.revision, current, failed)
        state.revision += 1
        if op.type is OpType.DELETE:
            written = state.remove(op.key, state.revision)
        else:
            written = state.put(op.key, op.value, state.revision)
        state.published()
        return WriteResult(True, state.revision, written)

    async def txn(self, ops: Sequence[TxnOp], guards: Sequence[Guard] = ()) -> TxnResult:
        check_txn(ops)
        state = await self._open_state()
        current = tuple(state.live.get(op.key) for op in ops)
        failed_ops = tuple(index for index, op in enumerate(ops) if not op_holds(op, current[index]))
        failed = state.failed_guards(guards)
        if failed_ops or failed:
            return TxnResult(False, state.revision, current, failed_ops, failed)
        state.revision += 1
        written: list[KeyValue | None] = [None] * len(ops)
        # Key order, so that watchers see the revision's events in key order, as the other stores do.
        for index in sorted(range(len(ops)), key=lambda i: ops[i].key):
            op = ops[index]
            if op.type is OpType.DELETE:
                written[index] = state.remove(op.key, state.revision)
            else:
                written[index] = state.put(op.key, op.value, state.revision)
        state.published()
        return TxnResult(True, state.revision, tuple(written))

    async def compact(self, revision: int) -> None:
        if revision <= 0:
            raise ValueError(f"compact revision must be positive, got {revision}")
        (await self._open_state()).compact(revision)

    # ---- watch -------------------------------------------------------------------------------------

    def watch(self, prefix: str, from_revision: int = 0) -> AsyncIterator[WatchEvent]:
        # Without a mark request it yields events only.
        return cast(AsyncIterator[WatchEvent], self._watch(prefix, from_revision, None))

    def watch_progress(
        self, prefix: str, from_revision: int = 0
    ) -> AsyncIterator[WatchEvent | ProgressMark]:
        marks = _MarkRequest()
        self._mark_requests.add(marks)
        return self._watch(prefix, from_revision, marks)

    async def request_progress(self) -> None:
        await self._open_state()
        for marks in self._mark_requests:
            marks.requested = True
        self.wake()

    def _watch(
        self, prefix: str, from_revision: int, marks: _MarkRequest | None
    ) -> AsyncIterator[WatchEvent | ProgressMark]:
        if from_revision < 0:
            raise ValueError(f"watch from_revision must be >= 0, got {from_revision}")
        state = self.state
        refused: StoreError | None = None
        if from_revision > state.revision + 1:
            refused = FutureRevision(from_revision, state.revision)
        elif from_revision and from_revision < state.compacted:
            refused = TooOldRevision(from_revision, state.compacted)
        # The cursor is placed now, not at the first iteration, so "events after the call" means after
        # this call, and a compaction before the first iteration keeps what this watch owes. A closed
        # handle's watch ends at once, as a closed SQLite store's does.
        cursor = None if refused else state.cursor_at(from_revision or state.revision + 1)
        return self._follow(prefix, cursor, refused, marks)

    async def _follow(
        self, prefix: str, cursor: _Cursor | None, refused: StoreError | None, marks: _MarkRequest | None
    ) -> AsyncIterator[WatchEvent | ProgressMark]:
        if refused is not None:
            raise refused
        assert cursor is not None
        state = self.state
        try:
            while not self._closed:
                while cursor.position - state.events_base < len(state.events):
                    event = state.events[cursor.position - state.events_base]
                    cursor.position += 1
                    if event.key.startswith(prefix):
                        yield event
                        if self._closed:
                            return
                if marks is not None and marks.requested:
                    # The log is read to its end: every event up to the store's revision is out.
                    marks.requested = False
                    yield ProgressMark(state.revision)
                    continue
                waiter = asyncio.get_running_loop().create_future()
                self._waiters.append(_Waiter(prefix, cursor, waiter))
                state.waiting.add(self)
                await waiter
        finally:
            state.release(cursor)

    def wake(self) -> None:
        """Resume this handle's watches that are waiting for events."""
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.future.done():
                waiter.future.set_result(None)

    def wake_matching(self) -> bool:
        """Resume this handle's waiting watches that have an event of the log to deliver; move the others'
        cursors past the events, which they would skip (resuming every watch of every kind on every write
        would cost a pass through each watch's stack of generators for nothing). Whether any still waits."""
        state = self.state
        events, base = state.events, state.events_base
        end = base + len(events)
        waiting = []
        for waiter in self._waiters:
            if waiter.future.done():  # cancelled
                continue
            prefix = waiter.prefix
            for index in range(waiter.cursor.position - base, end - base):
                if events[index].key.startswith(prefix):
                    waiter.future.set_result(None)
                    break
            else:
                waiter.cursor.position = end
                waiting.append(waiter)
        self._waiters = waiting
        return bool(waiting)

    # ---- lifecycle ---------------------------------------------------------------------------------

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.state.waiting.discard(self)
        self.wake()


def _check_key(key: str) -> None:
    if not key:
        raise ValueError("store key must not be empty")


# A sorted list's insert and delete move the tail of the list in memory (one memmove, microseconds at
# 100,000 keys); lookups and pages are bisects.


def _insert(keys: list[str], key: str) -> None:
    index = bisect_left(keys, key)
    if index == len(keys) or keys[index] != key:
        keys.insert(index, key)


def _discard(keys: list[str], key: str) -> None:
    index = bisect_left(keys, key)
    if index < len(keys) and keys[index] == key:
        del keys[index]
