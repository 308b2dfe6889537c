"""The API server's watch cache on every store (SQLite and etcd): one store watch for all its watchers,
the same bytes to each, a resume from its ring, consistent reads, and a new List after its store watch
breaks. tests/unit/test_watch_cache.py covers the rest on SQLite."""

from __future__ import annotations

import asyncio

from cluster.api.kinds import NODE, POD
from store.base import Store
from tests import builders
from tests.unit.test_client_fake_apiserver import until
from tests.unit.test_watch_cache import (
    ADDED,
    MODIFIED,
    STEP_S,
    Stream,
    WatchedStore,
    decoded,
    pod,
    relabel,
    running,
    selection,
)


async def test_watchers_share_one_store_watch_and_the_same_bytes(store: Store) -> None:
    watched = WatchedStore(store)
    async with running(watched) as (cacher, registry):
        watches = [Stream(cacher.watch(selection(), "", "0")) for _ in range(3)]
        selected = Stream(cacher.watch(selection(labels="app=web"), "default", "0"))
        for watch in (*watches, selected):
            assert await watch.quiet(0.05)
        await registry.create(POD, pod("a"))
        frames = [(await watch.take(1))[0] for watch in (*watches, selected)]
        assert decoded(frames[0])[:2] == (ADDED, "a")
        assert all(frame is frames[0] for frame in frames)
        assert watched.watches == 1 and cacher.watchers(POD) == 4


async def test_resume_from_the_ring_and_consistent_reads(store: Store) -> None:
    watched = WatchedStore(store)
    async with running(watched) as (cacher, registry):
        first = await registry.create(POD, pod("a"))
        await relabel(registry, "a", "db")
        resumed = Stream(cacher.watch(selection(), "", first.metadata.resource_version))
        assert decoded((await resumed.take(1))[0])[:3] == (MODIFIED, "a", "db")
        assert watched.watches == 1
        watched.gate.clear()
        await registry.create(NODE, builders.node("n1"))
        reading = asyncio.create_task(cacher.list(selection(NODE)))
        await asyncio.sleep(0.2)
        assert not reading.done()  # it waits for the cache to see the store's revision
        watched.gate.set()
        assert [n.metadata.name for n in (await reading).items] == ["n1"]


async def test_a_broken_store_watch_lists_again(store: Store) -> None:
    watched = WatchedStore(store)
    async with running(watched) as (cacher, registry):
        watcher = Stream(cacher.watch(selection(), "", "0"))
        assert await watcher.quiet(0.05)
        watched.break_watches()
        await registry.create(POD, pod("during"))
        assert await watcher.rest() == []
        await until(lambda: cacher.reflector.watches_opened == 2 and cacher.reflector.ready, 10.0)
        got = await cacher.get(POD, "default", "during")
        assert got is not None


async def test_writes_outside_the_registry_reach_the_cache_without_an_event(isolated_store: Store) -> None:
    # A long timeout: a read the cache answers was answered because the cache learned the revision.
    watched = WatchedStore(isolated_store)
    async with running(watched, fresh_timeout_s=STEP_S) as (cacher, registry):
        await registry.create(POD, pod("a"))
        created = await isolated_store.create("/outside/the/registry", b"foreign")
        assert created.succeeded
        page = await cacher.list(selection())
        assert [p.metadata.name for p in page.items] == ["a"]
        assert cacher.reflector.revision >= created.revision and page.revision >= created.revision
        # etcd's compaction record is such a write too.
        await isolated_store.compact(created.revision)
        revision = await isolated_store.current_revision()
        assert await cacher.get(POD, "default", "a") is not None
        assert cacher.reflector.revision >= revision
        assert cacher.unreached_waits == 0  # no read waited in vain and went to the store
