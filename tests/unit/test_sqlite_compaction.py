"""Compaction of the embedded store: boundaries, what survives it, batches, and a bounded file."""

from __future__ import annotations

import asyncio
import itertools
import os
import random
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from store.base import EventType, FutureRevision, KeyValue, TooOldRevision, WatchEvent
from store.compactor import Compactor
from store.sqlite import SqliteStore, dialect
from tests.unit.test_compactor import FakeClock


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    opened = await SqliteStore.open(tmp_path, compact_batch=7)
    yield opened
    await opened.close()


def _rows_in_file(data_dir: str) -> int:
    conn = sqlite3.connect(os.path.join(data_dir, "podsched.db"))
    try:
        return conn.execute("SELECT COUNT(*) FROM log").fetchone()[0]
    finally:
        conn.close()


async def _history(store: SqliteStore, writes: int, keys: int = 8, seed: int = 7) -> None:
    """A random mix of creates, updates, deletes and re-creates over a few keys."""
    rng = random.Random(seed)
    for i in range(writes):
        key = f"/h/{rng.randrange(keys)}"
        current = await store.get(key)
        if current is None:
            assert (await store.create(key, b"c%d" % i)).succeeded
        elif rng.random() < 0.25:
            assert (await store.delete(key, current.mod_revision)).succeeded
        else:
            assert (await store.update(key, b"u%d" % i, current.mod_revision)).succeeded


async def _watch_all(store: SqliteStore, prefix: str, from_revision: int) -> list[WatchEvent]:
    current = await store.current_revision()
    events = []
    if from_revision > current:
        return events
    async for event in store.watch(prefix, from_revision):
        events.append(event)
        if event.revision == current:
            break
    return events


async def test_every_read_at_or_after_the_compact_revision_is_unchanged(store: SqliteStore) -> None:
    await _history(store, 150)
    current = await store.current_revision()
    lists = {r: (await store.list("/h/", revision=r)).items for r in range(1, current + 1)}
    watches = {r: await _watch_all(store, "/h/", r) for r in range(1, current + 1)}
    gets = {f"/h/{k}": await store.get(f"/h/{k}") for k in range(8)}
    rows_before = _rows_in_file(store.data_dir)

    for compact_to in (1, 40, 41, 97, current):
        await store.compact(compact_to)
        assert await store.compacted_revision() == compact_to
        for r in range(compact_to, current + 1):
            assert (await store.list("/h/", revision=r)).items == lists[r], f"list at {r}"
            assert await _watch_all(store, "/h/", r) == watches[r], f"watch from {r}"
        for r in (1, compact_to - 1):
            if 0 < r < compact_to:
                with pytest.raises(TooOldRevision):
                    await store.list("/h/", revision=r)
        assert {key: await store.get(key) for key in gets} == gets
    assert _rows_in_file(store.data_dir) < rows_before


@pytest.mark.parametrize(
    ("read", "error", "fields"),
    [
        (lambda s: s.list("/", revision=4), TooOldRevision, (4, 5)),
        (lambda s: anext(s.watch("/", 4)), TooOldRevision, (4, 5)),
        (lambda s: s.compact(5), TooOldRevision, (5, 5)),
        (lambda s: s.compact(3), TooOldRevision, (3, 5)),
        (lambda s: s.list("/", revision=9), FutureRevision, (9, 8)),
        (lambda s: anext(s.watch("/", 10)), FutureRevision, (10, 8)),
        (lambda s: s.compact(9), FutureRevision, (9, 8)),
    ],
    ids=["list-below", "watch-below", "compact-again", "compact-below", "list-future", "watch-future",
         "compact-future"],
)
async def test_revisions_outside_the_history_are_refused(
    store: SqliteStore,
    read: Callable[[SqliteStore], Awaitable[object]],
    error: type[TooOldRevision | FutureRevision],
    fields: tuple[int, int],
) -> None:
    for i in range(8):
        await store.create(f"/k/{i}", b"v")
    await store.compact(5)
    with pytest.raises(error) as caught:
        await read(store)
    exc = caught.value
    bound = exc.compacted if isinstance(exc, TooOldRevision) else exc.current
    assert (exc.requested, bound) == fields


async def test_reads_at_exactly_the_compact_revision_work(store: SqliteStore) -> None:
    for i in range(8):
        await store.create(f"/k/{i}", b"v")
    await store.compact(5)
    assert [kv.key for kv in (await store.list("/", revision=5)).items] == [f"/k/{i}" for i in range(5)]
    assert (await anext(store.watch("/", 5))).revision == 5


async def test_previous_values_are_right_across_the_compaction_boundary(store: SqliteStore) -> None:
    a1 = await store.create("/k", b"one")
    a2 = await store.update("/k", b"two", a1.revision)
    await store.compact(a2.revision)
    # The update at the boundary still knows what it replaced, which is older than the boundary.
    assert (await _watch_all(store, "/k", a2.revision)) == [
        WatchEvent(EventType.PUT, "/k", b"two", a2.revision, a1.revision, b"one"),
    ]
    gone = await store.delete("/k", a2.revision)
    await store.compact(gone.revision)
    assert (await _watch_all(store, "/k", gone.revision)) == [
        WatchEvent(EventType.DELETE, "/k", b"two", gone.revision, a1.revision, b"two"),
    ]
    back = await store.create("/k", b"three")
    await store.compact(back.revision)
    assert (await _watch_all(store, "/k", back.revision)) == [
        WatchEvent(EventType.PUT, "/k", b"three", back.revision, back.revision, None),
    ]
    assert await store.get("/k") == KeyValue("/k", b"three", back.revision, back.revision)


async def test_compaction_runs_in_bounded_batches_between_other_writes(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(700):
        await store.create(f"/k/{i % 10}", b"v") if i < 10 else await store.update(f"/k/{i % 10}", b"v", None)
    batches: list[tuple[int, int]] = []
    victims = dialect.compaction_victims

    def recording_victims(conn: sqlite3.Connection, lo: int, hi: int) -> list[int]:
        batches.append((lo, hi))
        return victims(conn, lo, hi)

    monkeypatch.setattr(dialect, "compaction_victims", recording_victims)
    compaction = asyncio.create_task(store.compact(690))
    await asyncio.sleep(0)
    written = await store.create("/during", b"x")
    assert not compaction.done(), "the write waited for the whole compaction"
    await compaction
    assert written.succeeded
    # Contiguous batches of at most compact_batch (7) revisions covering everything below 690.
    assert batches[0][0] == 0 and batches[-1][1] == 690
    assert all(hi - lo <= 7 for lo, hi in batches)
    assert all(prev[1] == nxt[0] for prev, nxt in itertools.pairwise(batches))
    # Left: the rows from 690 on (690..700), the rows they replaced (680..689), and "/during".
    assert _rows_in_file(store.data_dir) == 11 + 10 + 1


async def test_an_interrupted_compaction_is_finished_by_the_next_one(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path)
    for i in range(300):
        await store.update("/k", b"%d" % i, None) if i else await store.create("/k", b"0")
    # A crash right after the compact revision was recorded, before any row was deleted.
    await store._log._writer.submit(
        lambda conn: (dialect.set_meta(conn, dialect.META_COMPACT_REVISION, 200), ())
    )
    await store.close()

    store = await SqliteStore.open(tmp_path)
    try:
        assert await store.compacted_revision() == 200
        with pytest.raises(TooOldRevision):
            await store.list("/", revision=199)
        assert (await store.list("/", revision=200)).items[0].value == b"199"
        assert _rows_in_file(store.data_dir) == 300
        await store.compact(250)
        # Left: the rows from 250 on, and the row the one at 250 replaced.
        assert _rows_in_file(store.data_dir) == 51 + 1
        assert (await store.get("/k")).value == b"299"
    finally:
        await store.close()


def _file_size(data_dir: str, name: str = "podsched.db") -> int:
    path = os.path.join(data_dir, name)
    return os.path.getsize(path) if os.path.exists(path) else 0


async def test_compaction_gives_freed_space_back_to_the_file_system(store: SqliteStore) -> None:
    results = await asyncio.gather(*(store.create(f"/big/{i}", bytes(2048)) for i in range(3000)))
    await asyncio.gather(*(store.delete(f"/big/{i}", r.revision) for i, r in enumerate(results)))
    await store.create("/small", b"v")
    await store._log._writer.submit(lambda conn: (dialect.checkpoint(conn), ()), exclusive=True)
    full = _file_size(store.data_dir)
    assert full > 6_000_000
    await store.compact(await store.current_revision())
    assert _file_size(store.data_dir) + _file_size(store.data_dir, "podsched.db-wal") < full / 4
    assert (await store.list("/")).items == [await store.get("/small")]


async def test_a_week_of_lease_renewals_does_not_grow_the_file(tmp_path: Path) -> None:
    # Ten leases renewed over and over (a week of 10-second renewals is 60,000 writes per lease; the
    # file must reach a plateau long before that), with the Compactor ticking on a fake clock every
    # 1,000 writes, keeping the newest 500 revisions.
    store = await SqliteStore.open(tmp_path)
    clock = FakeClock()
    compactor = Compactor(store, interval_s=10.0, min_retained_revisions=500, clock=clock)
    running = asyncio.create_task(compactor.run())
    leases = [f"/registry/leases/kube-system/lease-{i}" for i in range(10)]
    rng = random.Random(1)
    sizes = []  # database + WAL after each tick
    largest_wal = 0  # WAL, sampled between writes
    try:
        await clock.until_sleeping()
        for lease in leases:
            await store.create(lease, rng.randbytes(400))
        ticks = 30
        for _ in range(ticks):
            for _ in range(100):
                await asyncio.gather(*(store.update(lease, rng.randbytes(400), None) for lease in leases))
                largest_wal = max(largest_wal, _file_size(store.data_dir, "podsched.db-wal"))
            await clock.advance(10.0)
            await clock.until_sleeping()
            sizes.append(_file_size(store.data_dir) + _file_size(store.data_dir, "podsched.db-wal"))
        assert await store.compacted_revision() > (ticks - 2) * 1000
        assert _rows_in_file(store.data_dir) <= 2 * 1000 + len(leases)
        written = ticks * 1000 * 400
        # The first tick only observes; each later one compacts. What the file reaches in the next few
        # ticks bounds the rest of the run, give or take B-tree pages that are only partly refilled.
        bound = max(sizes[1:6]) * 1.25
        assert all(size <= bound for size in sizes[6:]), sizes
        # Without compaction the file would hold every renewal ever written.
        assert bound < written / 5, sizes
        # The WAL is checkpointed every ~4 MiB of writes and truncated after each compaction.
        assert largest_wal < 8 * 1024 * 1024
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        await store.close()
