"""The group-commit writer thread: batching, per-request rollback, publication order, shutdown."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from store.base import StoreUnavailable
from store.sqlite import dialect
from store.sqlite.writer import WriteFn, Writer


class Recorder:
    def __init__(self) -> None:
        self.statements: list[str] = []
        self.published: list[list[int]] = []

    def trace(self, statement: str) -> None:
        self.statements.append(statement.strip().split()[0].upper())

    def publish(self, events: list[int]) -> None:
        self.published.append(list(events))

    @property
    def commits(self) -> int:
        return self.statements.count("COMMIT")


@pytest.fixture
async def setup(tmp_path: Path) -> AsyncIterator[tuple[Writer[int], Recorder]]:
    conn = dialect.connect(str(tmp_path / "t.db"), synchronous="NORMAL")
    conn.execute("CREATE TABLE t (n INTEGER NOT NULL UNIQUE)")
    recorder = Recorder()
    conn.set_trace_callback(recorder.trace)
    writer: Writer[int] = Writer(conn, asyncio.get_running_loop(), recorder.publish)
    yield writer, recorder
    await writer.close()


def _insert(n: int) -> WriteFn[int, int]:
    def run(conn: sqlite3.Connection) -> tuple[int, list[int]]:
        conn.execute("INSERT INTO t (n) VALUES (?)", (n,))
        return n, [n]

    return run


def _block(started: threading.Event, release: threading.Event) -> WriteFn[None, int]:
    def run(conn: sqlite3.Connection) -> tuple[None, list[int]]:
        started.set()
        release.wait(timeout=30)
        return None, []

    return run


async def test_writes_queued_while_the_writer_is_busy_commit_together(
    setup: tuple[Writer[int], Recorder],
) -> None:
    writer, recorder = setup
    started, release = threading.Event(), threading.Event()
    first = writer.submit(_block(started, release))
    await asyncio.to_thread(started.wait, 30)
    rest = [writer.submit(_insert(n)) for n in range(100)]
    release.set()
    assert await asyncio.gather(first, *rest) == [None, *range(100)]
    # The blocking request's batch, then one batch for the hundred queued behind it.
    assert recorder.commits == 2
    assert recorder.published == [list(range(100))]


async def test_a_failing_request_is_undone_alone(setup: tuple[Writer[int], Recorder]) -> None:
    writer, recorder = setup
    started, release = threading.Event(), threading.Event()
    first = writer.submit(_block(started, release))
    await asyncio.to_thread(started.wait, 30)
    ok1 = writer.submit(_insert(1))
    dup = writer.submit(_insert(1))  # violates UNIQUE
    ok2 = writer.submit(_insert(2))
    release.set()
    await first
    assert await ok1 == 1
    with pytest.raises(StoreUnavailable, match="UNIQUE"):
        await dup
    assert await ok2 == 2
    # Only the successful requests' events are published, in order, once committed.
    assert recorder.published == [[1, 2]]

    def count(conn: sqlite3.Connection) -> tuple[list[int], list[int]]:
        return [row[0] for row in conn.execute("SELECT n FROM t ORDER BY n")], []

    assert await writer.submit(count) == [1, 2]


async def test_a_request_that_raises_gets_its_error_and_its_changes_undone(
    setup: tuple[Writer[int], Recorder],
) -> None:
    writer, _ = setup

    def refuse(conn: sqlite3.Connection) -> tuple[None, list[int]]:
        conn.execute("INSERT INTO t (n) VALUES (7)")
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        await writer.submit(refuse)

    def count(conn: sqlite3.Connection) -> tuple[int, list[int]]:
        return conn.execute("SELECT COUNT(*) FROM t").fetchone()[0], []

    assert await writer.submit(count) == 0


async def test_exclusive_requests_run_outside_a_transaction(setup: tuple[Writer[int], Recorder]) -> None:
    writer, _ = setup

    def in_transaction(conn: sqlite3.Connection) -> tuple[bool, list[int]]:
        return conn.in_transaction, []

    assert await writer.submit(in_transaction, exclusive=True) is False
    assert await writer.submit(in_transaction) is True


async def test_a_cancelled_caller_does_not_undo_its_write(setup: tuple[Writer[int], Recorder]) -> None:
    writer, recorder = setup
    started, release = threading.Event(), threading.Event()
    first = writer.submit(_block(started, release))
    await asyncio.to_thread(started.wait, 30)
    cancelled = writer.submit(_insert(5))
    cancelled.cancel()
    release.set()
    await first

    def count(conn: sqlite3.Connection) -> tuple[int, list[int]]:
        return conn.execute("SELECT COUNT(*) FROM t").fetchone()[0], []

    assert await writer.submit(count) == 1
    assert recorder.published == [[5]]


async def test_close_finishes_queued_writes_then_refuses_new_ones(tmp_path: Path) -> None:
    conn = dialect.connect(str(tmp_path / "t.db"), synchronous="NORMAL")
    conn.execute("CREATE TABLE t (n INTEGER NOT NULL UNIQUE)")
    writer: Writer[int] = Writer(conn, asyncio.get_running_loop(), lambda events: None)
    pending = [writer.submit(_insert(n)) for n in range(10)]
    await writer.close()
    assert await asyncio.gather(*pending) == list(range(10))
    with pytest.raises(StoreUnavailable, match="closed"):
        writer.submit(_insert(11))
    check = sqlite3.connect(str(tmp_path / "t.db"))
    assert check.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 10
    check.close()
