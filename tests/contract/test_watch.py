"""watch: event contents, order, exactly-once delivery from any revision, and resuming after a reopen."""

from __future__ import annotations

import asyncio
import contextlib
import random

import pytest

from store.base import EventType, FutureRevision, ProgressMark, Store, WatchEvent
from tests.contract.conftest import Backend
from tests.contract.watching import EVENT_TIMEOUT_S, close, summary, take, take_until_sentinel


async def _write_history(store: Store, prefix: str, writes: int, seed: int = 1) -> list[WatchEvent]:
    """Random creates, updates and deletes under ``prefix``; returns the events they must produce."""
    rng = random.Random(seed)
    live: dict[str, tuple[bytes, int]] = {}  # key -> (value, create_revision)
    expected: list[WatchEvent] = []
    for i in range(writes):
        key = f"{prefix}k{rng.randrange(6)}"
        value = f"v{i}".encode()
        if key not in live:
            result = await store.create(key, value)
            expected.append(WatchEvent(EventType.PUT, key, value, result.revision, result.revision, None))
            live[key] = (value, result.revision)
        elif rng.random() < 0.3:
            result = await store.delete(key, None)
            old, created = live.pop(key)
            expected.append(WatchEvent(EventType.DELETE, key, old, result.revision, created, old))
        else:
            result = await store.update(key, value, None)
            old, created = live[key]
            expected.append(WatchEvent(EventType.PUT, key, value, result.revision, created, old))
            live[key] = (value, created)
        assert result.succeeded
    return expected


async def test_events_carry_values_revisions_and_previous_values(store: Store) -> None:
    events = store.watch("/pods/")
    try:
        created = await store.create("/pods/a", b"v1")
        updated = await store.update("/pods/a", b"v2", created.revision)
        deleted = await store.delete("/pods/a", updated.revision)

        got = await take(events, 3)
    finally:
        await close(events)

    assert got == [
        WatchEvent(EventType.PUT, "/pods/a", b"v1", created.revision, created.revision, None),
        WatchEvent(EventType.PUT, "/pods/a", b"v2", updated.revision, created.revision, b"v1"),
        WatchEvent(EventType.DELETE, "/pods/a", b"v2", deleted.revision, created.revision, b"v2"),
    ]


async def test_a_watch_from_now_sees_only_later_writes(store: Store) -> None:
    await store.create("/pods/before", b"x")
    events = store.watch("/pods/")
    try:
        after = await store.create("/pods/after", b"y")

        got = await take_until_sentinel(store, events, "/pods/~sentinel")
    finally:
        await close(events)

    assert summary(got) == [("PUT", "/pods/after", after.revision)]


async def test_a_watch_sees_only_its_prefix(store: Store) -> None:
    events = store.watch("/pods/ns1/")
    try:
        await store.create("/pods/ns1-other/a", b"x")
        await store.create("/pods/ns2/a", b"x")
        mine = await store.create("/pods/ns1/a", b"x")
        await store.create("/pods/ns1", b"x")

        got = await take_until_sentinel(store, events, "/pods/ns1/~sentinel")
    finally:
        await close(events)

    assert summary(got) == [("PUT", "/pods/ns1/a", mine.revision)]


async def test_a_watch_from_any_past_revision_replays_exactly_the_later_events(store: Store) -> None:
    history = await _write_history(store, "/pods/", 24)
    sentinels: list[int] = []

    for start in range(history[0].revision, history[-1].revision + 2):
        events = store.watch("/pods/", from_revision=start)
        try:
            got = await take_until_sentinel(store, events, f"/pods/~sentinel-{start}")
        finally:
            await close(events)
        due = [event for event in history if event.revision >= start]
        assert _without_sentinels(got) == due, f"watch from {start}: {summary(got)} != {summary(due)}"
        # Sentinels of earlier rounds were written after the history, so every round sees them all.
        assert [event.revision for event in got if "~sentinel" in event.key] == sentinels
        sentinel = await store.get(f"/pods/~sentinel-{start}")
        assert sentinel is not None
        sentinels.append(sentinel.mod_revision)


async def test_a_watch_from_the_past_continues_with_live_events_exactly_once(store: Store) -> None:
    history = await _write_history(store, "/pods/", 12)
    start = history[4].revision
    events = store.watch("/pods/", from_revision=start)
    try:
        replayed = await take(events, len(history) - 4)
        live = await _write_history(store, "/pods/live-", 12, seed=2)
        got = await take_until_sentinel(store, events, "/pods/~sentinel")
    finally:
        await close(events)

    assert replayed == history[4:]
    assert got == live


async def test_concurrent_writers_are_watched_in_revision_order_exactly_once(store: Store) -> None:
    events = store.watch("/pods/")
    writers, writes = 4, 30

    async def writer(n: int) -> list[int]:
        revisions = []
        for i in range(writes):
            key = f"/pods/w{n}-{i % 5}"
            if i < 5:
                result = await store.create(key, b"0")
            else:
                result = await store.update(key, str(i).encode(), None)
            assert result.succeeded
            revisions.append(result.revision)
        return revisions

    try:
        written = await asyncio.gather(*(writer(n) for n in range(writers)))
        got = await take_until_sentinel(store, events, "/pods/~sentinel")
    finally:
        await close(events)

    revisions = [event.revision for event in got]
    assert revisions == sorted(set(revisions)), "events out of order or repeated"
    assert sorted(revisions) == sorted(r for rs in written for r in rs)


async def test_watchers_of_one_prefix_see_the_same_sequence(store: Store) -> None:
    watches = [store.watch("/pods/") for _ in range(3)]
    try:
        history = await _write_history(store, "/pods/", 15)
        seen = [await take_until_sentinel(store, w, f"/pods/~sentinel-{n}") for n, w in enumerate(watches)]
    finally:
        for w in watches:
            await close(w)

    assert [_without_sentinels(got) for got in seen] == [history] * len(watches)


def _without_sentinels(events: list[WatchEvent]) -> list[WatchEvent]:
    return [event for event in events if "~sentinel" not in event.key]


async def test_a_watch_resumed_after_a_reopen_from_its_last_revision_misses_nothing(backend: Backend) -> None:
    store = await backend.open()
    first = await _write_history(store, "/pods/", 10)
    events = store.watch("/pods/", from_revision=first[0].revision)
    seen = await take(events, 6)
    await close(events)
    await store.close()

    reopened = await backend.open()
    second = await _write_history(reopened, "/pods/more-", 10, seed=3)
    resumed = reopened.watch("/pods/", from_revision=seen[-1].revision + 1)
    try:
        rest = await take_until_sentinel(reopened, resumed, "/pods/~sentinel")
    finally:
        await close(resumed)

    assert seen + rest == first + second


async def test_close_ends_a_pending_watch(backend: Backend) -> None:
    store = await backend.open()
    events = store.watch("/pods/")
    received: list[WatchEvent] = []
    first = asyncio.Event()

    async def consume() -> None:
        async for event in events:
            received.append(event)
            first.set()

    consumer = asyncio.create_task(consume())
    await store.create("/pods/a", b"x")
    async with asyncio.timeout(10):
        await first.wait()

    await store.close()

    async with asyncio.timeout(10):
        await consumer  # ends by itself, without an error
    assert [event.key for event in received] == ["/pods/a"]


async def test_a_negative_start_revision_is_refused(store: Store) -> None:
    with pytest.raises(ValueError, match="revision"):
        events = store.watch("/pods/", from_revision=-1)
        with contextlib.suppress(StopAsyncIteration):
            await anext(events)


async def test_a_watch_from_beyond_the_next_revision_raises(store: Store) -> None:
    await store.create("/pods/a", b"x")
    current = await store.current_revision()

    events = store.watch("/pods/", from_revision=current + 10)
    try:
        with pytest.raises(FutureRevision) as raised:
            await take(events, 1)
    finally:
        await close(events)

    assert (raised.value.requested, raised.value.current) == (current + 10, current)


async def test_a_watch_from_the_next_revision_waits_for_it(store: Store) -> None:
    await store.create("/pods/a", b"x")
    events = store.watch("/pods/", from_revision=await store.current_revision() + 1)
    try:
        written = await store.create("/pods/b", b"y")
        got = await take(events, 1)
    finally:
        await close(events)

    assert summary(got) == [("PUT", "/pods/b", written.revision)]


async def test_a_progress_mark_follows_the_events_it_covers(store: Store) -> None:
    watch = store.watch_progress("/watched/")
    try:
        inside = await store.create("/watched/a", b"1")
        outside = await store.create("/elsewhere/b", b"2")  # moves the revision on, no event here
        items: list[WatchEvent | ProgressMark] = []
        await store.request_progress()
        async with asyncio.timeout(EVENT_TIMEOUT_S):
            while True:
                item = await anext(watch)
                items.append(item)
                if isinstance(item, ProgressMark):
                    if item.revision >= outside.revision:
                        break
                    await store.request_progress()  # an earlier mark: ask again
        events = [item for item in items if isinstance(item, WatchEvent)]
        assert summary(events) == [("PUT", "/watched/a", inside.revision)]
        marks = [(index, item.revision) for index, item in enumerate(items) if isinstance(item, ProgressMark)]
        assert [revision for _, revision in marks] == sorted(revision for _, revision in marks)
        # A mark that covers the event comes after it.
        assert all(index > items.index(events[0]) for index, revision in marks if revision >= inside.revision)
    finally:
        await close(watch)
