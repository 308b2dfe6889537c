"""The Log: the middle layer of the embedded store (kine's sqllog).

It owns the database file's connections and threads, and offers what etcd semantics are built from:
append rows inside a write transaction, list the newest row of each key at a revision, read the rows
after a revision, subscribe to rows as they commit, and compact.

Concurrency model: one writer thread owns the only write connection and group-commits the write
transactions queued by coroutines (writer.py); a small pool of reader threads, each with its own
connection, runs reads as snapshot transactions, so a long list never waits for a write to commit
(WAL lets readers and the writer proceed together). Committed rows reach subscriptions through the
Broadcaster on the event loop, in commit order, before the writes are acknowledged. The event loop
itself never touches the database.

Compaction to revision C first records C (from then on reads below C are refused), then deletes the
rows no read at or after C needs, in batches of ``compact_batch`` revisions, one transaction each, so
writes interleave with a long compaction. A checkpoint and an incremental vacuum afterwards return the
freed space: the WAL is truncated and free pages go back to the file system.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import functools
import logging
import sqlite3
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from store.base import FutureRevision, StoreUnavailable, TooOldRevision
from store.sqlite import dialect
from store.sqlite.broadcast import Broadcaster, Subscription
from store.sqlite.dialect import Row
from store.sqlite.writer import Writer

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Revisions whose superseded rows one compaction transaction deletes. Bounded so that catching up on a
#: long-stalled compaction never holds the write lock for long (kine batches by 1000 too): at most twice
#: as many rows as these revisions wrote go per transaction, a few milliseconds of work.
DEFAULT_COMPACT_BATCH = 1000

#: Free pages (4 KiB each) tolerated after a compaction before the file is shrunk. Below this, freed
#: pages are simply reused by new rows, which is cheaper than moving pages around to truncate the file.
VACUUM_THRESHOLD_PAGES = 256

#: Pages one incremental-vacuum step returns to the file system; each step is its own short transaction.
VACUUM_STEP_PAGES = 2048

#: Reader threads, each with its own connection. Two keeps a long list from delaying a get or a
#: watcher's catch-up; more would only contend for the GIL.
READERS = 2


class LogTxn:
    """What one write transaction may do: look at the newest row of a key and append rows. Every row
    it appends gets the same new revision, the one after the store's current revision. Used only on
    the writer thread, inside the transaction Log.transact runs."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._revision = 0
        self.appended: list[Row] = []

    def current_revision(self) -> int:
        return dialect.current_revision(self._conn)

    def latest(self, name: str) -> Row | None:
        return dialect.latest(self._conn, name)

    def append(
        self,
        name: str,
        *,
        created: bool,
        deleted: bool,
        create_revision: int,
        prev_revision: int,
        value: bytes,
        prev_value: bytes | None,
    ) -> Row:
        """Append a row at this transaction's revision (``create_revision`` 0: that revision).

        ``prev_value`` is what the row replaced; the log derives it from ``prev_revision`` when reading
        history, and publishing it with the row spares live watchers that join."""
        if not self._revision:
            self._revision = dialect.current_revision(self._conn) + 1
            dialect.set_meta(self._conn, dialect.META_REVISION, self._revision)
        revision = self._revision
        create_revision = create_revision or revision
        dialect.insert(
            self._conn,
            revision=revision,
            name=name,
            created=created,
            deleted=deleted,
            create_revision=create_revision,
            prev_revision=prev_revision,
            value=value,
        )
        row = Row(revision, name, created, deleted, create_revision, prev_revision, value, prev_value)
        self.appended.append(row)
        return row


class Log:
    def __init__(
        self,
        path: str,
        writer: Writer[Row],
        broadcaster: Broadcaster,
        synchronous: str,
        compact_batch: int,
    ) -> None:
        self._path = path
        self._writer = writer
        self._broadcaster = broadcaster
        self._synchronous = synchronous
        self._compact_batch = compact_batch
        self._compact_lock = asyncio.Lock()
        self._reader_conns: list[sqlite3.Connection] = []
        self._reader_conns_lock = threading.Lock()
        self._local = threading.local()
        self._readers = ThreadPoolExecutor(
            max_workers=READERS, thread_name_prefix="sqlite-reader", initializer=self._open_reader
        )
        self._closed = False

    @classmethod
    async def open(
        cls,
        path: str,
        *,
        synchronous: str = "NORMAL",
        watch_buffer: int,
        compact_batch: int = DEFAULT_COMPACT_BATCH,
    ) -> Log:
        if compact_batch < 1:
            raise ValueError(f"compact_batch must be at least 1, got {compact_batch}")
        def setup() -> tuple[sqlite3.Connection, int]:
            conn = dialect.connect(path, synchronous=synchronous)
            try:
                dialect.create_schema(conn)
                return conn, dialect.current_revision(conn)
            except BaseException:
                conn.close()
                raise

        try:
            conn, revision = await asyncio.to_thread(setup)
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"sqlite: cannot open {path}: {exc}") from exc
        broadcaster = Broadcaster(revision, watch_buffer)
        writer = Writer(conn, asyncio.get_running_loop(), broadcaster.publish)
        return cls(path, writer, broadcaster, synchronous, compact_batch)

    # ---- reads -------------------------------------------------------------------------------------

    def _open_reader(self) -> None:
        conn = dialect.connect(self._path, synchronous=self._synchronous)
        conn.execute("PRAGMA query_only = 1")
        self._local.conn = conn
        with self._reader_conns_lock:
            self._reader_conns.append(conn)

    def _snapshot(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` in one read transaction: every statement sees the same committed state."""
        conn: sqlite3.Connection = self._local.conn
        conn.execute("BEGIN")
        try:
            return fn(conn)
        finally:
            # Nothing to commit; ending the transaction releases the snapshot so checkpoints can
            # recycle the WAL. If the connection itself broke, the original error is the one to see.
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")

    async def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        if self._closed:
            raise StoreUnavailable("sqlite store is closed")
        try:
            return await asyncio.get_running_loop().run_in_executor(self._readers, self._snapshot, fn)
        except sqlite3.Error as exc:
            raise dialect.translate_error(exc) from exc
        except RuntimeError as exc:  # the executor was shut down by close() meanwhile
            raise StoreUnavailable("sqlite store is closed") from exc

    async def current_revision(self) -> int:
        return await self._read(dialect.current_revision)

    async def compact_revision(self) -> int:
        return await self._read(lambda conn: dialect.get_meta(conn, dialect.META_COMPACT_REVISION))

    async def latest(self, name: str) -> Row | None:
        return await self._read(lambda conn: dialect.latest(conn, name))

    async def latest_many(self, names: Sequence[str]) -> list[Row | None]:
        """The newest row of each name (as ``latest``), all from one snapshot."""
        return await self._read(lambda conn: [dialect.latest(conn, name) for name in names])

    async def list(self, prefix: str, start: str | None, revision: int, limit: int) -> tuple[int, list[Row]]:
        """The live rows of keys with ``prefix`` from key ``start`` on, as of ``revision`` (0: current),
        at most ``limit`` (-1: all); returns the revision read at with them."""
        lo, hi = dialect.prefix_range(prefix)
        if start is not None and start > lo:
            lo = start

        def read(conn: sqlite3.Connection) -> tuple[int, list[Row]]:
            current = dialect.current_revision(conn)
            at = _check_revision(conn, revision, current) if revision else current
            if hi is not None and lo >= hi:
                return at, []
            return at, dialect.list_latest(conn, lo, hi, at, limit)

        return await self._read(read)

    async def after(
        self, prefix: str, revision: int, after_key: str, limit: int
    ) -> tuple[int, builtins.list[Row]]:
        """Rows of keys with ``prefix`` after the position (``revision``, ``after_key``) in (revision,
        key) order (``after_key`` "": from the start of ``revision``), at most ``limit``, with the
        revision of the snapshot they were read from. A page may end inside a revision; the next one
        continues from its last row's (revision, key)."""
        lo, hi = dialect.prefix_range(prefix)

        def read(conn: sqlite3.Connection) -> tuple[int, list[Row]]:
            current = dialect.current_revision(conn)
            _check_revision(conn, revision, current, resume=True)
            return current, dialect.after(conn, lo, hi, revision, after_key, limit)

        return await self._read(read)

    # ---- writes ------------------------------------------------------------------------------------

    async def transact(self, fn: Callable[[LogTxn], T]) -> T:
        """Run ``fn`` on the writer thread inside a write transaction (shared with other writes queued
        at the same time, but undone alone if ``fn`` raises). Returns once the transaction committed
        and its rows were published to subscriptions."""

        def run(conn: sqlite3.Connection) -> tuple[T, Sequence[Row]]:
            txn = LogTxn(conn)
            return fn(txn), txn.appended

        return await self._writer.submit(run)

    def subscribe(self, prefix: str) -> Subscription:
        return self._broadcaster.subscribe(prefix)

    @property
    def published_revision(self) -> int:
        """The newest revision offered to subscriptions (a subscription made now gets what follows)."""
        return self._broadcaster.revision

    def unsubscribe(self, subscription: Subscription) -> None:
        self._broadcaster.unsubscribe(subscription)

    # ---- compaction --------------------------------------------------------------------------------

    async def compact(self, revision: int) -> None:
        """Refuse reads below ``revision`` from now on, then delete what no later read needs."""
        async with self._compact_lock:

            def mark(conn: sqlite3.Connection) -> tuple[int, Sequence[Row]]:
                current = dialect.current_revision(conn)
                compacted = dialect.get_meta(conn, dialect.META_COMPACT_REVISION)
                if revision > current:
                    raise FutureRevision(revision, current)
                if revision <= compacted:
                    raise TooOldRevision(revision, compacted)
                dialect.set_meta(conn, dialect.META_COMPACT_REVISION, revision)
                return dialect.get_meta(conn, dialect.META_COMPACTED_THROUGH), ()

            through = await self._writer.submit(mark)
            deleted = 0
            while through < revision:
                hi = min(through + self._compact_batch, revision)
                deleted += await self._writer.submit(functools.partial(_compact_step, lo=through, hi=hi))
                through = hi
            log.info("compacted the log to revision %d: %d rows deleted", revision, deleted)
            if deleted:
                await self._reclaim_space()

    async def _reclaim_space(self) -> None:
        """Truncate the WAL and give free pages back to the file system (in bounded steps)."""

        def checkpoint(conn: sqlite3.Connection) -> tuple[int, Sequence[Row]]:
            dialect.checkpoint(conn)
            return dialect.free_pages(conn), ()

        def vacuum_step(conn: sqlite3.Connection) -> tuple[int, Sequence[Row]]:
            dialect.incremental_vacuum(conn, VACUUM_STEP_PAGES)
            return dialect.free_pages(conn), ()

        free = await self._writer.submit(checkpoint, exclusive=True)
        while free > VACUUM_THRESHOLD_PAGES:
            left = await self._writer.submit(vacuum_step, exclusive=True)
            if left >= free:  # nothing more can be returned now (should not happen; never loop on it)
                break
            free = left
        # The vacuum's pages went through the WAL; move them into the file and truncate the WAL again.
        await self._writer.submit(checkpoint, exclusive=True)

    # ---- lifecycle ---------------------------------------------------------------------------------

    async def close(self) -> None:
        """End subscriptions, finish queued writes, wait for running reads, close every connection."""
        if self._closed:
            return
        self._closed = True
        self._broadcaster.close()
        await self._writer.close()
        await asyncio.to_thread(self._readers.shutdown, wait=True)
        with self._reader_conns_lock:
            for conn in self._reader_conns:
                conn.close()
            self._reader_conns.clear()


def _compact_step(conn: sqlite3.Connection, *, lo: int, hi: int) -> tuple[int, Sequence[Row]]:
    """One compaction transaction: delete what rows lo <= revision < hi made obsolete, record progress."""
    victims = dialect.compaction_victims(conn, lo, hi)
    dialect.delete_rows(conn, victims)
    dialect.set_meta(conn, dialect.META_COMPACTED_THROUGH, hi)
    return len(victims), ()


def _check_revision(conn: sqlite3.Connection, revision: int, current: int, *, resume: bool = False) -> int:
    """``revision`` if this snapshot can be read at it: TooOldRevision below the compact revision,
    FutureRevision above the current one (``resume``: above current + 1, where a watch that has seen
    everything resumes)."""
    if revision > current + (1 if resume else 0):
        raise FutureRevision(revision, current)
    compacted = dialect.get_meta(conn, dialect.META_COMPACT_REVISION)
    if revision < compacted:
        raise TooOldRevision(revision, compacted)
    return revision
