"""Durability of the embedded store: reopen, kill -9 of a real process, the data-dir lock."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sqlite3
import sys
from pathlib import Path

import pytest

from store.base import EventType, KeyValue, StoreUnavailable, WatchEvent
from store.sqlite import DataDirLocked, SqliteStore

REPO = Path(__file__).resolve().parents[2]


async def test_everything_survives_close_and_reopen(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path)
    a = await store.create("/a", b"a1")
    b = await store.create("/b", b"b1")
    a2 = await store.update("/a", b"a2", a.revision)
    await store.delete("/b", b.revision)
    c = await store.create("/c", b"c1")
    revision = await store.current_revision()
    await store.close()

    store = await SqliteStore.open(tmp_path)
    try:
        assert await store.current_revision() == revision
        assert await store.get("/a") == KeyValue("/a", b"a2", a.revision, a2.revision)
        assert await store.get("/b") is None
        assert (await store.list("/")).items == [
            KeyValue("/a", b"a2", a.revision, a2.revision),
            KeyValue("/c", b"c1", c.revision, c.revision),
        ]
        # History too: the old revision still lists, the watch from 1 replays everything.
        assert [kv.key for kv in (await store.list("/", revision=b.revision)).items] == ["/a", "/b"]
        assert (await store.create("/d", b"d1")).revision == revision + 1
    finally:
        await store.close()


async def test_revisions_and_compaction_continue_after_reopen(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path)
    for i in range(5):
        created = await store.create(f"/gone/{i}", b"x")
        await store.delete(f"/gone/{i}", created.revision)
    revision = await store.current_revision()
    await store.compact(revision)
    await store.close()

    store = await SqliteStore.open(tmp_path)
    try:
        assert await store.current_revision() == revision
        assert await store.compacted_revision() == revision
        assert (await store.create("/next", b"y")).revision == revision + 1
    finally:
        await store.close()


# A child process that writes from several coroutines at once and prints each write as soon as it is
# acknowledged: "<key> <revision> <value>".
_WRITER_CHILD = r"""
import asyncio, sys
from store.sqlite import SqliteStore

async def main():
    store = await SqliteStore.open(sys.argv[1])
    print("ready", flush=True)

    async def writer(w):
        i = 0
        while True:
            key = f"/k/{w}/{i % 25}"
            value = f"{w}-{i}".encode()
            if i < 25:
                result = await store.create(key, value)
            else:
                result = await store.update(key, value, None)
            assert result.succeeded
            print(key, result.revision, value.decode(), flush=True)
            i += 1

    await asyncio.gather(*(writer(w) for w in range(8)))

asyncio.run(main())
"""


async def test_kill_9_loses_no_acknowledged_write(tmp_path: Path) -> None:
    child = await _start_writer(tmp_path)
    assert child.stdout is not None
    try:
        lines: list[bytes] = []
        while len(lines) < 3000:
            line = await child.stdout.readline()
            assert line, "the writer exited early"
            lines.append(line)
        # In the middle of the writes: some are in flight, some committed but not yet printed.
        child.send_signal(signal.SIGKILL)
        lines.extend((await child.stdout.read()).splitlines(keepends=True))
        assert await child.wait() == -signal.SIGKILL
    finally:
        await _reap(child)
    acked = {}
    for line in lines:
        if line.endswith(b"\n"):  # a line cut by the kill was not a complete acknowledgement
            key, revision, value = line.decode().split()
            acked[int(revision)] = (key, value.encode())

    store = await SqliteStore.open(tmp_path)
    try:
        current = await store.current_revision()
        assert current >= max(acked)
        history: dict[int, WatchEvent] = {}
        async for event in store.watch("/k/", 1):
            history[event.revision] = event
            if event.revision == current:
                break
        for revision, (key, value) in acked.items():
            assert revision in history, f"acknowledged write {key}@{revision} was lost"
            assert (history[revision].type, history[revision].key, history[revision].value) == (
                EventType.PUT,
                key,
                value,
            )
    finally:
        await store.close()


async def test_a_second_store_on_the_same_directory_fails_at_once(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path)
    try:
        with pytest.raises(DataDirLocked) as caught:
            await SqliteStore.open(tmp_path)
        assert str(tmp_path) in str(caught.value)
        assert f"pid {os.getpid()}" in str(caught.value)
        # The first store is untouched by the failed attempt.
        assert (await store.create("/k", b"v")).succeeded
    finally:
        await store.close()
    reopened = await SqliteStore.open(tmp_path)
    await reopened.close()


_OPEN_CHILD = r"""
import asyncio, sys
from store.sqlite import SqliteStore, DataDirLocked

async def main():
    try:
        store = await SqliteStore.open(sys.argv[1])
    except DataDirLocked as exc:
        print(exc)
        sys.exit(3)
    await store.close()

asyncio.run(main())
"""


async def test_a_second_process_on_the_same_directory_fails_at_once(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path)
    try:
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-c", _OPEN_CHILD, str(tmp_path), cwd=REPO, stdout=asyncio.subprocess.PIPE
        )
        out, _ = await asyncio.wait_for(child.communicate(), timeout=60)
        assert child.returncode == 3
        message = out.decode()
        assert f"data directory {tmp_path} is already in use" in message
        assert f"held by pid {os.getpid()}" in message
    finally:
        await store.close()


async def test_the_lock_is_released_when_the_holder_is_killed(tmp_path: Path) -> None:
    child = await _start_writer(tmp_path)
    try:
        with pytest.raises(DataDirLocked):
            await SqliteStore.open(tmp_path)
    finally:
        await _reap(child)
    store = await SqliteStore.open(tmp_path)
    await store.close()


async def _start_writer(data_dir: Path) -> asyncio.subprocess.Process:
    """The writer child, once it holds the store open."""
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _WRITER_CHILD, str(data_dir), cwd=REPO, stdout=asyncio.subprocess.PIPE
    )
    assert child.stdout is not None
    assert await asyncio.wait_for(child.stdout.readline(), timeout=60) == b"ready\n"
    return child


async def _reap(child: asyncio.subprocess.Process) -> None:
    if child.returncode is None:
        child.kill()
    await child.wait()


async def test_a_file_that_is_not_a_database_is_refused_naming_it(tmp_path: Path) -> None:
    (tmp_path / "podsched.db").write_bytes(b"this is not an SQLite database, just text " * 100)
    expected = f"cannot open {tmp_path / 'podsched.db'}: file is not a database"
    with pytest.raises(StoreUnavailable, match=re.escape(expected)):
        await SqliteStore.open(tmp_path)
    # The failed open let go of the directory.
    (tmp_path / "podsched.db").unlink()
    store = await SqliteStore.open(tmp_path)
    await store.close()


@pytest.mark.parametrize(
    ("fsync_every_commit", "synchronous"), [(False, 1), (True, 2)], ids=["normal", "full"]
)
async def test_fsync_every_commit_selects_synchronous_full(
    tmp_path: Path, fsync_every_commit: bool, synchronous: int
) -> None:
    store = await SqliteStore.open(tmp_path, fsync_every_commit=fsync_every_commit)
    try:
        setting = await store._log._writer.submit(
            lambda conn: (conn.execute("PRAGMA synchronous").fetchone()[0], ())
        )
        assert setting == synchronous
        assert (await store.create("/k", b"v")).succeeded
    finally:
        await store.close()
    conn = sqlite3.connect(tmp_path / "podsched.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
