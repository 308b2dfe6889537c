"""The API server's watch cache (cluster/apiserver/watchcache) on a real SQLite store: one store watch
however many watchers, one serialization per event, selector transitions, resuming from the ring and
past it, slow watchers closed, consistent reads that wait for the store's revision, and a new List after
the store watch breaks."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from cluster.api import apiserver_pb2, errors, kinds, objects_pb2
from cluster.api.kinds import POD, PRIORITY_CLASS, Kind
from cluster.apiserver.selection import Selection
from cluster.apiserver.storage import Storage
from cluster.apiserver.watchcache import Cacher, CacheSettings, read_scope
from cluster.apiserver.watchcache.framing import watch_event_bytes
from store.base import ProgressMark, Store, StoreUnavailable, WatchEvent
from store.sqlite import SqliteStore
from tests import builders
from tests.unit.test_client_fake_apiserver import until

ADDED, MODIFIED, DELETED = (
    apiserver_pb2.WatchEvent.ADDED, apiserver_pb2.WatchEvent.MODIFIED, apiserver_pb2.WatchEvent.DELETED
)
STEP_S = 5.0
T = TypeVar("T")


class WatchedStore:
    """The store it wraps, with its watches counted, their events (and progress marks) held back while
    ``gate`` is clear, and a way to break them (as an etcd restart would)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.watches = 0
        self.revision_reads = 0
        self.gate = asyncio.Event()
        self.gate.set()
        self._broken = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def current_revision(self) -> int:
        self.revision_reads += 1
        return await self._store.current_revision()

    def watch(self, prefix: str, from_revision: int = 0) -> AsyncIterator[WatchEvent]:
        self.watches += 1
        return self._watch(self._store.watch(prefix, from_revision))

    def watch_progress(self, prefix: str, from_revision: int = 0) -> AsyncIterator[WatchEvent | ProgressMark]:
        self.watches += 1
        return self._watch(self._store.watch_progress(prefix, from_revision))

    async def _watch(self, events: AsyncIterator[T]) -> AsyncIterator[T]:
        try:
            async for event in events:
                await self.gate.wait()
                if self._broken:
                    self._broken = False
                    raise StoreUnavailable("the watch broke")
                yield event
        finally:
            await events.aclose()  # type: ignore[attr-defined]

    def break_watches(self) -> None:
        """Break the watch at its next event."""
        self._broken = True


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[WatchedStore]:
    sqlite = await SqliteStore.open(tmp_path / "data")
    try:
        yield WatchedStore(sqlite)
    finally:
        await sqlite.close()


@contextlib.asynccontextmanager
async def running(store: WatchedStore, **settings: Any) -> AsyncIterator[tuple[Cacher, Storage]]:
    registry = Storage(store)  # type: ignore[arg-type]
    cacher = Cacher(registry, CacheSettings(retry_s=0.05, **settings))
    task = asyncio.create_task(cacher.run())
    try:
        await until(lambda: cacher.reflector.ready, STEP_S)
        yield cacher, registry
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def pod(name: str, *, app: str = "web", node: str = "") -> objects_pb2.Pod:
    return builders.pod(name, labels={"app": app}, node_name=node)


async def relabel(registry: Storage, name: str, app: str) -> objects_pb2.Pod:
    current = await registry.require(POD, "default", name)
    updated = objects_pb2.Pod()
    updated.CopyFrom(current)
    updated.metadata.labels["app"] = app
    outcome = await registry.update(POD, updated, int(current.metadata.resource_version))
    assert outcome.succeeded
    return updated


class Stream:
    """A watch consumed by a task of its own into a queue, so a test can wait for items without
    cancelling the watch (cancelling an async generator's step closes it)."""

    END = object()

    def __init__(self, events: AsyncIterator[Any]) -> None:
        self._events = events
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._task = asyncio.create_task(self._pump())

    async def _pump(self) -> None:
        try:
            async for event in self._events:
                await self._queue.put(event)
        except Exception as exc:  # handed to the test, which expects it
            await self._queue.put(exc)
        await self._queue.put(self.END)

    async def take(self, count: int) -> list[Any]:
        """The next ``count`` items, raw; an error the watch ended with is raised."""
        items = []
        async with asyncio.timeout(STEP_S):
            for _ in range(count):
                item = await self._queue.get()
                if isinstance(item, Exception):
                    raise item
                assert item is not self.END, f"the watch ended after {items}"
                items.append(item)
        return items

    async def quiet(self, seconds: float = 0.2) -> bool:
        """Whether nothing arrives for ``seconds``."""
        await asyncio.sleep(seconds)
        return self._queue.empty()

    async def rest(self) -> list[Any]:
        """Every item until the watch ends."""
        items = []
        async with asyncio.timeout(STEP_S):
            while (item := await self._queue.get()) is not self.END:
                items.append(item)
        return items

    async def close(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


def decoded(frame: bytes | apiserver_pb2.WatchEvent) -> tuple[int, str, str, str]:
    event = apiserver_pb2.WatchEvent.FromString(frame) if isinstance(frame, bytes) else frame
    obj = kinds.unwrap(event.object)
    meta = obj.metadata
    return event.type, meta.name, dict(meta.labels).get("app", ""), meta.resource_version


def selection(kind: Kind = POD, labels: str = "", fields: str = "") -> Selection:
    return Selection.parse(kind, labels, fields)


# ---------------------------------------------------------------------------------------------- framing


def test_frames_are_the_watch_event_as_protobuf_serializes_it() -> None:
    obj = pod("web")
    obj.metadata.resource_version = "12"
    for type_ in (ADDED, MODIFIED, DELETED):
        expected = apiserver_pb2.WatchEvent(type=type_, object=kinds.wrap(obj)).SerializeToString()
        assert watch_event_bytes(type_, POD, obj.SerializeToString()) == expected


# ---------------------------------------------------------------------------------------------- watch


async def test_one_store_watch_however_many_watchers(store: WatchedStore) -> None:
    async with running(store) as (cacher, registry):
        watches = [
            Stream(cacher.watch(selection(), "", "0")), Stream(cacher.watch(selection(labels="app=web"))),
            Stream(cacher.watch(selection(), "default")), Stream(cacher.watch(selection(PRIORITY_CLASS))),
        ]
        for watch in watches:
            assert await watch.quiet(0.05)  # started: the snapshot is empty
        await registry.create(POD, pod("a"))
        for watch in watches[:3]:
            assert decoded((await watch.take(1))[0])[:2] == (ADDED, "a")
        assert cacher.watchers(POD) == 3
        assert store.watches == 1
        assert cacher.reflector.watches_opened == 1


class SlowListStore(WatchedStore):
    """Its first List waits for ``listing``, as a server's first List of a large store takes a while."""

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.listing = asyncio.Event()

    async def list(self, *args: Any, **kwargs: Any) -> Any:
        await self.listing.wait()
        return await self._store.list(*args, **kwargs)


async def test_a_watch_opened_before_the_first_list_waits_for_the_cache(store: WatchedStore) -> None:
    slow = SlowListStore(store._store)
    registry = Storage(slow)  # type: ignore[arg-type]
    await registry.create(POD, pod("before"))
    cacher = Cacher(registry, CacheSettings(retry_s=0.05))
    task = asyncio.create_task(cacher.run())
    try:
        # Opened while the cache lists (its server just started), as a component started with it does.
        early = Stream(cacher.watch(selection(), "", ""))
        assert await early.quiet(0.05) and not cacher.reflector.ready
        slow.listing.set()
        assert decoded((await early.take(1))[0])[:2] == (ADDED, "before")
        await registry.create(POD, pod("after"))
        assert decoded((await early.take(1))[0])[:2] == (ADDED, "after")
        # Served from the cache, not by a store watch of its own for as long as it lasts.
        assert cacher.watchers(POD) == 1
        assert slow.watches == 1
        await early.close()
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_a_cache_nobody_runs_leaves_a_watch_to_the_store_at_once(store: WatchedStore) -> None:
    registry = Storage(store)  # type: ignore[arg-type]
    cacher = Cacher(registry, CacheSettings(fresh_timeout_s=STEP_S))
    watch = Stream(cacher.watch(selection(), "", ""))
    await registry.create(POD, pod("a"))
    async with asyncio.timeout(STEP_S / 2):
        assert decoded((await watch.take(1))[0])[:2] == (ADDED, "a")
    assert cacher.watchers(POD) == 0 and store.watches == 1
    await watch.close()


async def test_every_watcher_is_sent_the_same_bytes(store: WatchedStore) -> None:
    async with running(store) as (cacher, registry):
        first = Stream(cacher.watch(selection(), "", "0"))
        second = Stream(cacher.watch(selection(labels="app=web"), "", "0"))
        assert await first.quiet(0.05) and await second.quiet(0.05)
        await registry.create(POD, pod("a"))
        [sent_first], [sent_second] = await first.take(1), await second.take(1)
        assert isinstance(sent_first, bytes)
        assert sent_first is sent_second


async def test_selector_transitions(store: WatchedStore) -> None:
    async with running(store) as (cacher, registry):
        web = Stream(cacher.watch(selection(labels="app=web"), "", "0"))
        assert await web.quiet(0.05)
        await registry.create(POD, pod("a", app="db"))
        assert await web.quiet()
        started = await relabel(registry, "a", "web")
        assert decoded((await web.take(1))[0]) == (ADDED, "a", "web", started.metadata.resource_version)
        current = await registry.require(POD, "default", "a")
        bound = objects_pb2.Pod()
        bound.CopyFrom(current)
        bound.spec.node_name = "n1"
        assert (await registry.update(POD, bound, int(current.metadata.resource_version))).succeeded
        assert decoded((await web.take(1))[0])[:3] == (MODIFIED, "a", "web")
        stopped = await relabel(registry, "a", "db")
        # It stopped matching: DELETED, carrying the state it matched in, at the event's revision.
        assert decoded((await web.take(1))[0]) == (DELETED, "a", "web", stopped.metadata.resource_version)
        current = await registry.require(POD, "default", "a")
        assert (await registry.delete(POD, current, int(current.metadata.resource_version))).succeeded
        assert await web.quiet()


async def test_snapshot_then_changes(store: WatchedStore) -> None:
    registry = Storage(store)  # type: ignore[arg-type]
    await registry.create(POD, pod("a"))
    await registry.create(POD, pod("b", app="db"))
    async with running(store) as (cacher, registry):
        web = Stream(cacher.watch(selection(labels="app=web")))
        assert [decoded(f)[:2] for f in await web.take(1)] == [(ADDED, "a")]
        await registry.create(POD, pod("c"))
        assert decoded((await web.take(1))[0])[:2] == (ADDED, "c")


async def test_resume_from_a_revision_in_the_ring(store: WatchedStore) -> None:
    async with running(store) as (cacher, registry):
        first = await registry.create(POD, pod("a"))
        await registry.create(POD, pod("b"))
        await relabel(registry, "a", "db")
        resumed = Stream(cacher.watch(selection(), "", first.metadata.resource_version))
        assert [decoded(f)[:3] for f in await resumed.take(2)] == [(ADDED, "b", "web"), (MODIFIED, "a", "db")]
        assert store.watches == 1  # served from the ring


async def test_resume_from_before_the_ring_watches_the_store(store: WatchedStore) -> None:
    async with running(store, ring_capacity=2) as (cacher, registry):
        first = await registry.create(POD, pod("a"))
        for name in ("b", "c", "d"):
            await registry.create(POD, pod(name))
        resumed = Stream(cacher.watch(selection(), "", first.metadata.resource_version))
        assert [decoded(f)[1] for f in await resumed.take(3)] == ["b", "c", "d"]
        assert store.watches == 2  # the cache's, and this watch's own on the store


async def test_resume_from_a_compacted_revision_is_too_old(store: WatchedStore) -> None:
    async with running(store) as (cacher, registry):
        first = await registry.create(POD, pod("a"))
        await registry.create(POD, pod("b"))
        await registry.create(POD, pod("c"))
        # The ring still holds every event after ``first``; the store no longer does.
        await store.compact(await store.current_revision())
        with pytest.raises(errors.Expired, match="too old resource version"):
            await Stream(cacher.watch(selection(), "", first.metadata.resource_version)).take(1)


async def test_a_slow_watcher_is_closed_not_buffered(store: WatchedStore) -> None:
    async with running(store, watcher_capacity=3) as (cacher, registry):
        await registry.create(POD, pod("seed"))
        slow = cacher.watch(selection(), "", "0")
        async with asyncio.timeout(STEP_S):
            assert decoded(await anext(slow))[:2] == (ADDED, "seed")  # registered; now it reads no more
        for index in range(6):
            await registry.create(POD, pod(f"p{index}"))
        await until(lambda: not cacher.watchers(POD), STEP_S)
        # Its queue was dropped when it overflowed: the stream ends without the events it fell behind on.
        async with asyncio.timeout(STEP_S):
            received = [frame async for frame in slow]
        assert received == []


# --------------------------------------------------------------------------------------- consistent reads


async def test_a_consistent_read_waits_for_the_stores_revision(store: WatchedStore) -> None:
    async with running(store) as (cacher, registry):
        store.gate.clear()  # the cache's watch is held back: it has not seen what follows
        await registry.create(POD, pod("late"))
        reading = asyncio.create_task(cacher.list(selection()))
        await asyncio.sleep(0.2)
        assert not reading.done()
        store.gate.set()
        page = await asyncio.wait_for(reading, STEP_S)
        assert [p.metadata.name for p in page.items] == ["late"]
        assert page.revision >= await store.current_revision()


async def test_a_consistent_read_the_cache_cannot_catch_up_on_goes_to_the_store(store: WatchedStore) -> None:
    async with running(store, fresh_timeout_s=0.1) as (cacher, registry):
        store.gate.clear()
        created = await registry.create(POD, pod("late"))
        assert [p.metadata.name for p in (await cacher.list(selection())).items] == ["late"]
        got = await cacher.get(POD, "default", "late")
        assert got is not None and got.metadata.resource_version == created.metadata.resource_version
        store.gate.set()


async def test_a_revision_the_cache_never_sees_costs_one_wait(
    store: WatchedStore, caplog: pytest.LogCaptureFixture
) -> None:
    async with running(store, fresh_timeout_s=0.1) as (cacher, registry):
        store.gate.clear()  # as a write outside the registry: the store's revision moves, no event comes
        await registry.create(POD, pod("late"))
        with caplog.at_level(logging.INFO, logger="cluster.apiserver.watchcache.cacher"):
            for _ in range(4):
                assert [p.metadata.name for p in (await cacher.list(selection())).items] == ["late"]
        # Only the first read waited for it; the others went to the store at once.
        assert len([r for r in caplog.records if "has not reached revision" in r.getMessage()]) == 1
        store.gate.set()
        await until(lambda: cacher.reflector.revision >= cacher.reflector.applied_revision > 0, STEP_S)
        assert await cacher.fresh(POD) is not None


async def test_list_pages_from_the_cache_continue_from_the_store(store: WatchedStore) -> None:
    async with running(store) as (cacher, registry):
        for name in ("a", "b", "c", "d", "e"):
            await registry.create(POD, pod(name))
        first = await cacher.list(selection(), limit=2)
        names = [p.metadata.name for p in first.items]
        await registry.create(POD, pod("aa"))  # after the first page's revision: not in any page
        token = first.continue_token
        while token:
            page = await cacher.list(selection(), limit=2, continue_token=token)
            assert page.revision == first.revision
            names += [p.metadata.name for p in page.items]
            token = page.continue_token
        assert names == ["a", "b", "c", "d", "e"]


# --------------------------------------------------------------------------------------- store watch breaks


async def test_a_broken_store_watch_ends_the_watchers_and_lists_again(store: WatchedStore) -> None:
    async with running(store) as (cacher, registry):
        watcher = Stream(cacher.watch(selection(), "", "0"))
        assert await watcher.quiet(0.05)
        store.gate.clear()
        await registry.create(POD, pod("during"))  # held back, then lost with the watch
        store.break_watches()
        store.gate.set()
        assert await watcher.rest() == []  # the stream ends: its client re-watches
        await until(lambda: cacher.reflector.watches_opened == 2 and cacher.reflector.ready, STEP_S)
        # The new List has it, and new watchers are served from the cache again.
        assert cacher.reflector.watches_opened == 2
        fresh = Stream(cacher.watch(selection(), "", "0"))
        assert decoded((await fresh.take(1))[0])[:2] == (ADDED, "during")
        assert cacher.watchers(POD) == 1



class Listener:
    """What a listener of the cache is told: ("reset", names) and ("changed", name, resourceVersion or
    None for a deletion)."""

    def __init__(self) -> None:
        self.told: list[tuple[Any, ...]] = []

    def reset(self, objects: Any) -> None:
        self.told.append(("reset", sorted(obj.metadata.name for obj in objects.values())))

    def changed(self, key: str, obj: Any) -> None:
        version = None if obj is None else obj.metadata.resource_version
        self.told.append(("changed", key.rsplit("/", 1)[1], version))


async def test_a_listener_is_told_every_list_and_change_in_order(store: WatchedStore) -> None:
    registry = Storage(store)  # type: ignore[arg-type]
    await registry.create(POD, pod("before"))
    cacher = Cacher(registry, CacheSettings(retry_s=0.05))
    listener = Listener()
    cacher.listen(POD, listener)
    task = asyncio.create_task(cacher.run())
    try:
        await until(lambda: cacher.reflector.ready, STEP_S)
        created = await registry.create(POD, pod("after"))
        current = await registry.require(POD, "default", "before")
        assert (await registry.delete(POD, current, int(current.metadata.resource_version))).succeeded
        await until(lambda: len(listener.told) == 3, STEP_S)
        assert listener.told == [
            ("reset", ["before"]), ("changed", "after", created.metadata.resource_version),
            ("changed", "before", None),
        ]
        # A change lost with a broken store watch reaches the listener with the List that follows.
        store.gate.clear()
        await registry.create(POD, pod("during"))
        store.break_watches()
        store.gate.set()
        await until(lambda: len(listener.told) == 4, STEP_S)
        assert listener.told[3] == ("reset", ["after", "during"])
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def test_only_a_cached_kind_can_be_listened_to(tmp_path: Path) -> None:
    cacher = Cacher(Storage(None), CacheSettings(uncached=frozenset({POD})))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="does not cache pods"):
        cacher.listen(POD, Listener())


async def test_one_request_asks_the_store_for_its_revision_once(store: WatchedStore) -> None:
    async with running(store) as (cacher, registry):
        await registry.create(POD, pod("a"))
        store.revision_reads = 0
        await cacher.list(selection(PRIORITY_CLASS))
        await cacher.get(POD, "default", "a")
        assert store.revision_reads == 2  # no request: every read asks
        store.revision_reads = 0
        with read_scope():
            await cacher.list(selection(PRIORITY_CLASS))
            got = await cacher.get(POD, "default", "a")
        assert store.revision_reads == 1
        assert got is not None and got.metadata.name == "a"


async def test_concurrent_reads_share_one_revision_probe(store: WatchedStore) -> None:
    async with running(store) as (cacher, registry):
        await registry.create(POD, pod("a"))
        store.revision_reads = 0
        pages = await asyncio.gather(*(cacher.list(selection()) for _ in range(10)))
        assert all([p.metadata.name for p in page.items] == ["a"] for page in pages)
        # The first probe starts at once; every later reader shares the one that starts after it.
        assert store.revision_reads == 2
