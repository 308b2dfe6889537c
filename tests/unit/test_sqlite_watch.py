"""Watching the embedded store: catch-up then live, slow watchers, close, compaction while lagging."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from store.base import EventType, FutureRevision, TooOldRevision, TxnOp, WatchEvent
from store.sqlite import SqliteStore
from store.sqlite.dialect import Row

#: The watch buffer of the stores here: small, so that slow watchers overflow it quickly.
BUFFER = 16


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    opened = await SqliteStore.open(tmp_path, watch_buffer=BUFFER)
    yield opened
    await opened.close()


class Follower:
    """Consumes a watch in the background, optionally slowly, keeping what it received."""

    def __init__(self, events: AsyncIterator[WatchEvent], delay_every: int = 0) -> None:
        self.events: list[WatchEvent] = []
        self.error: BaseException | None = None
        self._changed = asyncio.Event()
        self._delay_every = delay_every
        self.task = asyncio.create_task(self._run(events))

    async def _run(self, events: AsyncIterator[WatchEvent]) -> None:
        try:
            async for event in events:
                self.events.append(event)
                self._changed.set()
                if self._delay_every and len(self.events) % self._delay_every == 0:
                    await asyncio.sleep(0.001)  # a consumer slower than the writers
        except Exception as exc:
            self.error = exc
        finally:
            self._changed.set()

    async def until(self, revision: int) -> list[WatchEvent]:
        async with asyncio.timeout(60):
            while not (self.events and self.events[-1].revision >= revision):
                if self.task.done():
                    raise AssertionError(f"watch ended early ({self.error!r}) at {self.events[-1:]}")
                self._changed.clear()
                await self._changed.wait()
        return self.events

    async def stop(self) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


async def _write_many(store: SqliteStore, writers: int, per_writer: int, prefix: str) -> None:
    """Concurrent creates, updates, deletes and re-creates under ``prefix``."""

    async def writer(w: int) -> None:
        for i in range(per_writer):
            key = f"{prefix}{w}/{i % 5}"
            if i < 5:
                assert (await store.create(key, b"%d" % i)).succeeded
            elif i % 7 == 0:
                assert (await store.delete(key, None)).succeeded
                assert (await store.create(key, b"%d" % i)).succeeded
            else:
                assert (await store.update(key, b"%d" % i, None)).succeeded

    await asyncio.gather(*(writer(w) for w in range(writers)))


def _revisions(events: list[WatchEvent]) -> list[int]:
    return [event.revision for event in events]


@pytest.mark.parametrize("history", [0, 40, 2000], ids=["no-history", "short-history", "long-history"])
async def test_catch_up_then_live_without_gap_or_duplicate(store: SqliteStore, history: int) -> None:
    # History written before the watch starts (the long one spans several log pages and overflows
    # the buffer), then writers keep going while the watch catches up and goes live.
    await _write_many(store, 4, history // 4, "/w/old-")
    follower = Follower(store.watch("/w/", 1))
    await _write_many(store, 8, 120, "/w/live-")
    last = await store.current_revision()
    events = await follower.until(last)
    await follower.stop()
    assert _revisions(events) == list(range(1, last + 1))


async def test_rows_both_read_from_the_log_and_buffered_are_delivered_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Widen the window between a commit and its publication (still in order, as the writer
    # guarantees), so that the log read keeps seeing rows the subscription receives afterwards; the
    # buffer is big enough that it does not overflow, so those rows really reach the watcher twice.
    store = await SqliteStore.open(tmp_path, watch_buffer=100_000)
    writer = store._log._writer
    publish = writer._publish
    backlog: asyncio.Queue[list] = asyncio.Queue()
    published_late = 0

    async def publish_late() -> None:
        nonlocal published_late
        while True:
            rows = await backlog.get()
            await asyncio.sleep(0.001)
            published_late += len(rows)
            publish(rows)

    monkeypatch.setattr(writer, "_publish", backlog.put_nowait)
    publisher = asyncio.create_task(publish_late())
    try:
        await _write_many(store, 4, 50, "/w/old-")
        follower = Follower(store.watch("/w/", 1))
        await _write_many(store, 8, 60, "/w/live-")
        last = await store.current_revision()
        assert published_late < last, "publication was not behind the log: nothing was tested"
        events = await follower.until(last)
        await follower.stop()
    finally:
        publisher.cancel()
        await store.close()
    assert _revisions(events) == list(range(1, last + 1))


async def test_a_prefix_watch_sees_only_its_prefix_in_order(store: SqliteStore) -> None:
    follower = Follower(store.watch("/mine/", 1))
    await asyncio.gather(
        _write_many(store, 3, 60, "/mine/"), _write_many(store, 3, 60, "/other/"),
        _write_many(store, 3, 60, "/mine"),  # "/mine0/..." etc. do not start with "/mine/"
    )
    mine = (await store.list("/mine/")).items
    last = max(kv.mod_revision for kv in mine)
    events = await follower.until(last)
    await follower.stop()
    assert all(event.key.startswith("/mine/") for event in events)
    assert _revisions(events) == sorted(set(_revisions(events)))
    expected = []
    async for event in store.watch("/", 1):
        if event.key.startswith("/mine/"):
            expected.append(event.revision)
        if event.revision == last:
            break
    assert _revisions(events) == expected


async def test_a_slow_watcher_falls_back_to_the_log_and_misses_nothing(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    log_reads = 0
    after = store._log.after

    async def counting_after(prefix: str, revision: int, after_key: str, limit: int) -> tuple[int, list[Row]]:
        nonlocal log_reads
        log_reads += 1
        return await after(prefix, revision, after_key, limit)

    monkeypatch.setattr(store._log, "after", counting_after)
    start = await store.current_revision() + 1
    follower = Follower(store.watch("/w/"), delay_every=5)
    await _write_many(store, 16, 100, "/w/")
    last = await store.current_revision()
    events = await follower.until(last)
    await follower.stop()
    assert _revisions(events) == list(range(start, last + 1))
    assert log_reads > 0, "the buffer never overflowed: the test did not exercise the fallback"


async def test_a_stalled_watcher_neither_blocks_writers_nor_holds_their_events(store: SqliteStore) -> None:
    watch = store.watch("/w/")
    first = await store.create("/w/first", b"1")
    assert (await anext(watch)).revision == first.revision
    # Nobody consumes while thousands of writes land: they complete, and the watcher holds at most
    # one buffer of them.
    await asyncio.wait_for(_write_many(store, 10, 300, "/w/"), timeout=60)
    (subscription,) = store._log._broadcaster._subscriptions
    assert len(subscription._rows) <= BUFFER
    assert subscription.overflowed
    last = await store.current_revision()
    rest = []
    async for event in watch:
        rest.append(event)
        if event.revision == last:
            break
    assert _revisions(rest) == list(range(first.revision + 1, last + 1))


async def test_watch_from_zero_starts_at_the_call(store: SqliteStore) -> None:
    before = await store.create("/k/before", b"0")
    watch = store.watch("/k/")  # subscribed here, before the first iteration
    after = await store.create("/k/after", b"1")
    event = await anext(watch)
    assert (event.key, event.revision) == ("/k/after", after.revision)
    assert before.revision < after.revision


async def test_watch_may_start_one_past_the_current_revision_but_not_further(store: SqliteStore) -> None:
    await store.create("/k/a", b"0")
    current = await store.current_revision()
    with pytest.raises(FutureRevision):
        await anext(store.watch("/k/", current + 2))
    watch = store.watch("/k/", current + 1)
    pending = asyncio.ensure_future(anext(watch))
    written = await store.create("/k/b", b"1")
    assert (await pending).revision == written.revision


async def test_live_and_replayed_events_are_identical(store: SqliteStore) -> None:
    live = store.watch("/k")
    a = await store.create("/k", b"1")
    b = await store.update("/k", b"2", a.revision)
    c = await store.delete("/k", b.revision)
    d = await store.create("/k", b"3")
    expected = [
        WatchEvent(EventType.PUT, "/k", b"1", a.revision, a.revision, None),
        WatchEvent(EventType.PUT, "/k", b"2", b.revision, a.revision, b"1"),
        WatchEvent(EventType.DELETE, "/k", b"2", c.revision, a.revision, b"2"),
        WatchEvent(EventType.PUT, "/k", b"3", d.revision, d.revision, None),
    ]
    assert [await anext(live) for _ in range(4)] == expected
    replayed = store.watch("/k", a.revision)
    assert [await anext(replayed) for _ in range(4)] == expected


async def test_close_ends_every_watch(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path)
    await store.create("/k/a", b"0")
    waiting = Follower(store.watch("/k/"))
    replaying = Follower(store.watch("/k/", 1))
    await replaying.until(1)
    await asyncio.sleep(0)
    await store.close()
    async with asyncio.timeout(10):
        await asyncio.gather(waiting.task, replaying.task)
    assert waiting.error is None and replaying.error is None
    assert waiting.events == []
    # A watch asked for after close ends at once too.
    assert [event async for event in store.watch("/k/")] == []


async def test_a_lagging_watcher_whose_position_is_compacted_gets_too_old(store: SqliteStore) -> None:
    first = await store.create("/k/a", b"0")
    watch = store.watch("/k/", first.revision)
    assert (await anext(watch)).revision == first.revision
    # More than a buffer of updates while the watcher does not read, then compaction past its position.
    for i in range(BUFFER * 3):
        await store.update("/k/a", b"%d" % i, None)
    current = await store.current_revision()
    await store.compact(current)
    with pytest.raises(TooOldRevision) as caught:
        await anext(watch)
    assert (caught.value.requested, caught.value.compacted) == (first.revision + 1, current)


async def test_a_watcher_keeping_up_is_not_cut_off_by_compaction(store: SqliteStore) -> None:
    watch = store.watch("/k/")
    a = await store.create("/k/a", b"0")
    b = await store.update("/k/a", b"1", None)
    await store.compact(b.revision)
    assert [(await anext(watch)).revision for _ in range(2)] == [a.revision, b.revision]


async def test_a_dropped_watch_releases_its_subscription(store: SqliteStore) -> None:
    store.watch("/k/")  # never iterated, never closed
    kept = store.watch("/k/")
    gc.collect()
    assert len(store._log._broadcaster._subscriptions) == 1
    await kept.aclose()
    assert len(store._log._broadcaster._subscriptions) == 0


async def test_a_watcher_overflowed_inside_a_transaction_gets_each_of_its_events_once(tmp_path: Path) -> None:
    """A buffer of 4 rows: the watcher stops after two events of a 3-key transaction, a 10-key one
    overflows its buffer meanwhile, and it goes back to the log from the middle of the first."""
    store = await SqliteStore.open(tmp_path, watch_buffer=4)
    try:
        events = store.watch("/t/")
        first = await store.txn([TxnOp.create(f"/t/a{i}", b"a") for i in range(3)])
        got = [await anext(events), await anext(events)]
        second = await store.txn([TxnOp.create(f"/t/b{i:02d}", b"b") for i in range(10)])
        sentinel = await store.create("/t/~", b"end")
        async with asyncio.timeout(10):
            while got[-1].key != "/t/~":
                got.append(await anext(events))
        await events.aclose()  # type: ignore[attr-defined]
    finally:
        await store.close()
    assert [(e.key, e.revision) for e in got] == [
        *((f"/t/a{i}", first.revision) for i in range(3)),
        *((f"/t/b{i:02d}", second.revision) for i in range(10)),
        ("/t/~", sentinel.revision),
    ]
