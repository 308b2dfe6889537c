"""SqliteStore: etcd semantics on top of the log (kine's logstructured layer).

Every write is one appended row per key that names the row it supersedes, decided inside one write
transaction: the compare (expected revisions, guards) and the append see the same state, so
compare-and-swap needs no retry loop, and a failed comparison is a returned ``WriteResult`` (or
``TxnResult``), never an exception. A multi-key ``txn`` appends its rows in key order, all at one revision.

A watch subscribes to committed rows *before* it reads any history, then reads the log from its start
revision, then switches to the rows its subscription buffered, skipping rows it already delivered: every
event is delivered once, in order, with no gap at the switch. Its position is the (revision, key) of the
last row it delivered, not a revision alone, so a log read whose page ends inside a many-key revision
resumes with the rest of that revision. When the subscription's bounded buffer overflows (the consumer is
slow), the watch reads the log again from where it stands.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import AsyncIterator, Sequence
from typing import cast

from store.base import (
    EventType,
    Guard,
    KeyValue,
    ListResult,
    OpType,
    ProgressMark,
    StoreUnavailable,
    TxnOp,
    TxnResult,
    WatchEvent,
    WriteResult,
    check_list_arguments,
    check_txn,
    op_holds,
)
from store.sqlite.broadcast import DEFAULT_CAPACITY, Subscription
from store.sqlite.datadir import LOCK_FILE, DataDirLock
from store.sqlite.dialect import DuplicateSuccessor, Row
from store.sqlite.filemodes import private_dir, private_file, tighten_if_present
from store.sqlite.log import DEFAULT_COMPACT_BATCH, Log, LogTxn

DB_FILE = "podsched.db"
#: SQLite's side files of the database in WAL mode; they take the database file's mode when created.
SIDE_FILE_SUFFIXES = ("-wal", "-shm", "-journal")

#: Rows a catching-up watch reads per query. Bounds its memory and the time one read holds a snapshot.
WATCH_PAGE = 512


class SqliteStore:
    """The embedded store: one SQLite file in a data directory. Open it with ``SqliteStore.open``, from
    the event loop that will use it (writes are acknowledged and watch events delivered on that loop),
    and ``close`` it when done: that ends its watches and releases the directory."""

    def __init__(self, data_dir: str, log: Log, lock: DataDirLock) -> None:
        self.data_dir = data_dir
        self._log = log
        self._lock = lock
        self._closed = False
        #: The subscriptions of the progress watches (each goes with its watch).
        self._progress: weakref.WeakSet[Subscription] = weakref.WeakSet()

    @classmethod
    async def open(
        cls,
        data_dir: str | os.PathLike[str],
        *,
        fsync_every_commit: bool = False,
        watch_buffer: int = DEFAULT_CAPACITY,
        compact_batch: int = DEFAULT_COMPACT_BATCH,
    ) -> SqliteStore:
        """Open (creating if needed) the store in ``data_dir``, locking the directory exclusively.

        ``fsync_every_commit``: False (default) survives the process being killed at any moment with no
        acknowledged write lost (synchronous=NORMAL, see dialect.connect); True also survives power
        loss, at the cost of one disk flush per group commit. ``watch_buffer``: rows a watcher may lag
        behind live writes before it falls back to reading the log. ``compact_batch``: revisions per
        compaction transaction. The directory is made (or tightened to) 0700 and its files 0600.
        """
        path = os.fspath(data_dir)
        await asyncio.to_thread(private_dir, path)
        lock = DataDirLock.acquire(path)
        db_file = os.path.join(path, DB_FILE)
        try:
            await asyncio.to_thread(_private_files, path, db_file)
            log = await Log.open(
                db_file,
                synchronous="FULL" if fsync_every_commit else "NORMAL",
                watch_buffer=watch_buffer,
                compact_batch=compact_batch,
            )
        except BaseException:
            lock.release()
            raise
        return cls(path, log, lock)

    # ---- reads -------------------------------------------------------------------------------------

    async def get(self, key: str) -> KeyValue | None:
        row = await self._log.latest(key)
        return None if row is None or row.deleted else _key_value(row)

    async def get_many(self, keys: Sequence[str]) -> list[KeyValue | None]:
        rows = await self._log.latest_many(keys)
        return [None if row is None or row.deleted else _key_value(row) for row in rows]

    async def list(
        self, prefix: str, limit: int = 0, continue_key: str | None = None, revision: int = 0
    ) -> ListResult:
        check_list_arguments(prefix, limit, continue_key, revision)
        # One row more than the page tells whether there is a next page, and where it starts.
        at, rows = await self._log.list(prefix, continue_key, revision, limit + 1 if limit else -1)
        next_key = None
        if limit and len(rows) > limit:
            next_key = rows[limit].name
            rows = rows[:limit]
        return ListResult([_key_value(row) for row in rows], at, next_key)

    async def current_revision(self) -> int:
        return await self._log.current_revision()

    async def compacted_revision(self) -> int:
        return await self._log.compact_revision()

    # ---- writes ------------------------------------------------------------------------------------

    async def create(self, key: str, value: bytes, guards: Sequence[Guard] = ()) -> WriteResult:
        _check_key(key)
        guards = tuple(guards)
        return await self._log.transact(lambda txn: _create(txn, key, value, guards))

    async def update(
        self, key: str, value: bytes, expected_revision: int | None, guards: Sequence[Guard] = ()
    ) -> WriteResult:
        _check_key(key)
        guards = tuple(guards)
        return await self._log.transact(lambda txn: _update(txn, key, value, expected_revision, guards))

    async def delete(
        self, key: str, expected_revision: int | None, guards: Sequence[Guard] = ()
    ) -> WriteResult:
        _check_key(key)
        guards = tuple(guards)
        return await self._log.transact(lambda txn: _delete(txn, key, expected_revision, guards))

    async def txn(self, ops: Sequence[TxnOp], guards: Sequence[Guard] = ()) -> TxnResult:
        check_txn(ops)
        ordered, guards = tuple(ops), tuple(guards)
        return await self._log.transact(lambda txn: _txn(txn, ordered, guards))

    async def compact(self, revision: int) -> None:
        if revision <= 0:
            raise ValueError(f"compact revision must be positive, got {revision}")
        await self._log.compact(revision)

    # ---- watch -------------------------------------------------------------------------------------

    def watch(self, prefix: str, from_revision: int = 0) -> AsyncIterator[WatchEvent]:
        # Its subscription is never asked for a mark, so it yields events only.
        return cast(AsyncIterator[WatchEvent], self._watch(prefix, from_revision, progress=False))

    def watch_progress(
        self, prefix: str, from_revision: int = 0
    ) -> AsyncIterator[WatchEvent | ProgressMark]:
        return self._watch(prefix, from_revision, progress=True)

    async def request_progress(self) -> None:
        for subscription in list(self._progress):
            subscription.request_progress()

    def _watch(
        self, prefix: str, from_revision: int, *, progress: bool
    ) -> AsyncIterator[WatchEvent | ProgressMark]:
        if from_revision < 0:
            raise ValueError(f"watch from_revision must be >= 0, got {from_revision}")
        # Subscribe now, not at the first iteration, so "events after the call" means after this call.
        subscription = self._log.subscribe(prefix)
        if progress:
            self._progress.add(subscription)
        if from_revision == 0:
            return self._follow(subscription, prefix, self._log.published_revision + 1, from_log=False)
        return self._follow(subscription, prefix, from_revision, from_log=True)

    async def _follow(
        self, subscription: Subscription, prefix: str, next_revision: int, *, from_log: bool
    ) -> AsyncIterator[WatchEvent | ProgressMark]:
        # The position: every row at or before (revision, after_key) was delivered; after_key "" means
        # nothing of ``revision`` yet (no key is empty).
        revision, after_key = next_revision, ""
        try:
            while not subscription.closed:
                if from_log or subscription.overflowed:
                    from_log = False
                    # Whatever the buffer held is committed, so the log read below returns it.
                    subscription.reset()
                    while True:
                        current, rows = await self._log.after(prefix, revision, after_key, WATCH_PAGE)
                        for row in rows:
                            yield _event(row)
                            revision, after_key = row.revision, row.name
                        if len(rows) < WATCH_PAGE:
                            # Nothing else under the prefix up to this snapshot's revision.
                            if current + 1 > revision:
                                revision, after_key = current + 1, ""
                            break
                    continue
                for row in subscription.take():
                    # Rows the log read already delivered come again.
                    if (row.revision, row.name) > (revision, after_key):
                        yield _event(row)
                        revision, after_key = row.revision, row.name
                if subscription.overflowed:
                    continue
                if subscription.progress_requested and not subscription.buffered:
                    # Every row published so far was offered to this subscription and is now out.
                    subscription.progress_requested = False
                    yield ProgressMark(self._log.published_revision)
                    continue
                await subscription.wait()
        except StoreUnavailable:
            if self._closed:  # close() during a log read ends the watch like any other close
                return
            raise
        finally:
            self._log.unsubscribe(subscription)

    # ---- lifecycle ---------------------------------------------------------------------------------

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await self._log.close()
        finally:
            self._lock.release()


def _private_files(data_dir: str, db_file: str) -> None:
    """The lock, the database and its side files: created 0600, or tightened to it."""
    tighten_if_present(os.path.join(data_dir, LOCK_FILE))
    private_file(db_file)
    for suffix in SIDE_FILE_SUFFIXES:
        tighten_if_present(db_file + suffix)


# ---- the write transactions (run on the writer thread) ---------------------------------------------


def _check_key(key: str) -> None:
    if not key:
        raise ValueError("store key must not be empty")


def _create(txn: LogTxn, key: str, value: bytes, guards: tuple[Guard, ...]) -> WriteResult:
    row = txn.latest(key)
    failed = tuple(guard for guard in guards if _mod_revision(txn, guard.key) != guard.mod_revision)
    if (row is not None and not row.deleted) or failed:
        return WriteResult(False, txn.current_revision(), _live(row), failed)
    try:
        new = txn.append(
            key,
            created=True,
            deleted=False,
            create_revision=0,
            prev_revision=0 if row is None else row.revision,
            value=value,
            prev_value=None,
        )
    except DuplicateSuccessor:
        return _lost_race(txn, key, guards)
    return WriteResult(True, new.revision, _key_value(new))


def _update(
    txn: LogTxn, key: str, value: bytes, expected_revision: int | None, guards: tuple[Guard, ...]
) -> WriteResult:
    row, failed = _compare(txn, key, expected_revision, guards)
    if row is None or failed is not None:
        return WriteResult(False, txn.current_revision(), _live(row), failed or ())
    try:
        new = txn.append(
            key,
            created=False,
            deleted=False,
            create_revision=row.create_revision,
            prev_revision=row.revision,
            value=value,
            prev_value=row.value,
        )
    except DuplicateSuccessor:
        return _lost_race(txn, key, guards)
    return WriteResult(True, new.revision, _key_value(new))


def _delete(
    txn: LogTxn, key: str, expected_revision: int | None, guards: tuple[Guard, ...]
) -> WriteResult:
    row, failed = _compare(txn, key, expected_revision, guards)
    if row is None or failed is not None:
        return WriteResult(False, txn.current_revision(), _live(row), failed or ())
    try:
        # A tombstone carries no value: its previous value (the row it names) is the deleted value.
        new = txn.append(
            key,
            created=False,
            deleted=True,
            create_revision=row.create_revision,
            prev_revision=row.revision,
            value=b"",
            prev_value=row.value,
        )
    except DuplicateSuccessor:
        return _lost_race(txn, key, guards)
    return WriteResult(True, new.revision, _key_value(row))


def _txn(txn: LogTxn, ops: tuple[TxnOp, ...], guards: tuple[Guard, ...]) -> TxnResult:
    rows = [txn.latest(op.key) for op in ops]
    current = tuple(_live(row) for row in rows)
    failed_ops = tuple(index for index, op in enumerate(ops) if not op_holds(op, current[index]))
    failed = tuple(guard for guard in guards if _mod_revision(txn, guard.key) != guard.mod_revision)
    if failed_ops or failed:
        return TxnResult(False, txn.current_revision(), current, failed_ops, failed)
    written: list[KeyValue | None] = [None] * len(ops)
    # Key order, so that watchers see the revision's events in key order (as the log reads them). The
    # comparisons above and these appends run in one transaction on the only writer, so no other write
    # can come between them; were the unique index to refuse a row all the same, the error undoes every
    # row of this transaction (the writer's savepoint), never some of them.
    for index in sorted(range(len(ops)), key=lambda i: ops[i].key):
        op, row = ops[index], rows[index]
        if op.type is OpType.CREATE:
            new = txn.append(
                op.key, created=True, deleted=False, create_revision=0,
                prev_revision=0 if row is None else row.revision, value=op.value, prev_value=None,
            )
            written[index] = _key_value(new)
        else:
            assert row is not None
            deleted = op.type is OpType.DELETE
            new = txn.append(
                op.key, created=False, deleted=deleted, create_revision=row.create_revision,
                prev_revision=row.revision, value=b"" if deleted else op.value, prev_value=row.value,
            )
            written[index] = _key_value(row if deleted else new)
    return TxnResult(True, new.revision, tuple(written))


def _compare(
    txn: LogTxn, key: str, expected_revision: int | None, guards: tuple[Guard, ...]
) -> tuple[Row | None, tuple[Guard, ...] | None]:
    """The key's live row (None if absent) and the guards that failed (None if the write may go
    ahead: the key exists, has the expected revision, and every guard holds)."""
    row = txn.latest(key)
    if row is not None and row.deleted:
        row = None
    failed = tuple(guard for guard in guards if _mod_revision(txn, guard.key) != guard.mod_revision)
    if row is None or failed or (expected_revision is not None and row.revision != expected_revision):
        return row, failed
    return row, None


def _mod_revision(txn: LogTxn, key: str) -> int:
    row = txn.latest(key)
    return 0 if row is None or row.deleted else row.revision


def _lost_race(txn: LogTxn, key: str, guards: tuple[Guard, ...]) -> WriteResult:
    """The unique (key, previous revision) index refused our row: another write of the key landed
    first. Report what is there now, as any failed comparison does."""
    row = txn.latest(key)
    failed = tuple(guard for guard in guards if _mod_revision(txn, guard.key) != guard.mod_revision)
    return WriteResult(False, txn.current_revision(), _live(row), failed)


def _live(row: Row | None) -> KeyValue | None:
    return None if row is None or row.deleted else _key_value(row)


def _key_value(row: Row) -> KeyValue:
    return KeyValue(row.name, row.value, row.create_revision, row.revision)


def _event(row: Row) -> WatchEvent:
    if row.deleted:
        value = row.prev_value if row.prev_value is not None else b""
        return WatchEvent(EventType.DELETE, row.name, value, row.revision, row.create_revision, value)
    return WatchEvent(
        EventType.PUT,
        row.name,
        row.value,
        row.revision,
        row.create_revision,
        None if row.created else row.prev_value,
    )
