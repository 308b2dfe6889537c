"""What is particular to MemoryStore (tests/contract holds it to the Store contract): it runs on the event
loop alone, its handles share one state, closing a handle ends that handle's watches only, and
compaction frees history without losing what a live watch still owes."""

from __future__ import annotations

import asyncio
import threading

import pytest

from store.base import StoreUnavailable, TxnOp
from store.memory import MemoryState, MemoryStore
from tests.contract.watching import close, take


async def test_no_thread_is_started() -> None:
    before = set(threading.enumerate())
    store = MemoryStore()
    events = store.watch("/pods/")
    created = await store.create("/pods/a", b"v")
    await store.update("/pods/a", b"w", created.revision)
    await store.txn([TxnOp.create("/pods/b", b"v"), TxnOp.delete("/pods/a", None)])
    await store.list("/pods/", revision=created.revision)
    assert len(await take(events, 4)) == 4
    await store.compact(await store.current_revision())
    await close(events)
    await store.close()

    assert set(threading.enumerate()) == before


async def test_closing_a_store_ends_its_pending_watches_and_refuses_its_calls() -> None:
    store = MemoryStore()
    waiting = [asyncio.create_task(anext(store.watch(prefix), None)) for prefix in ("/pods/", "/nodes/")]
    await asyncio.sleep(0)

    await store.close()

    async with asyncio.timeout(5):
        assert await asyncio.gather(*waiting) == [None, None]
    with pytest.raises(StoreUnavailable, match="memory store is closed"):
        await store.create("/pods/a", b"v")
    with pytest.raises(StoreUnavailable, match="memory store is closed"):
        await store.list("/pods/")
    assert await anext(store.watch("/pods/"), None) is None


async def test_closing_one_handle_leaves_the_data_and_the_watches_of_another() -> None:
    state = MemoryState()
    first, second = MemoryStore(state), MemoryStore(state)
    events = second.watch("/pods/")
    await first.create("/pods/a", b"v")

    await first.close()
    written = await second.create("/pods/b", b"v")

    assert [event.key for event in await take(events, 2)] == ["/pods/a", "/pods/b"]
    assert [kv.key for kv in (await MemoryStore(state).list("/pods/")).items] == ["/pods/a", "/pods/b"]
    assert await second.current_revision() == written.revision
    await close(events)


async def test_compaction_frees_superseded_versions_deleted_keys_and_delivered_events() -> None:
    store = MemoryStore()
    created = await store.create("/pods/a", b"1")
    for value in (b"2", b"3"):
        await store.update("/pods/a", value, None)
    await store.create("/pods/gone", b"x")
    deleted = await store.delete("/pods/gone", None)

    await store.compact(deleted.revision)

    state = store.state
    assert state.history == {"/pods/a": [(created.revision + 2, await store.get("/pods/a"))]}
    assert state.history_keys == ["/pods/a"]
    # The deletion at the compaction revision is still watchable from there; nothing before it is kept.
    assert [(event.key, event.revision) for event in state.events] == [("/pods/gone", deleted.revision)]


async def test_compaction_keeps_the_events_a_live_watch_has_not_delivered() -> None:
    store = MemoryStore()
    events = store.watch("/pods/")
    written = [await store.create(f"/pods/p{index}", b"v") for index in range(5)]

    await store.compact(written[-1].revision)

    assert len(store.state.events) == 5
    assert [event.revision for event in await take(events, 5)] == [w.revision for w in written]
    await close(events)
    # With the watch gone, the next compaction drops what only it needed.
    await store.create("/pods/later", b"v")
    await store.compact(await store.current_revision())
    assert [event.key for event in store.state.events] == ["/pods/later"]


async def test_a_waiting_watch_sleeps_through_other_prefixes_and_leaves_their_events_to_compaction() -> None:
    store = MemoryStore()
    nodes = store.watch("/nodes/")
    first = asyncio.create_task(anext(nodes))
    await asyncio.sleep(0)
    for index in range(50):
        await store.create(f"/pods/p{index}", b"v")

    assert not first.done()
    await store.compact(await store.current_revision())
    # The sleeping watch's cursor moved past the pods' events: only the compaction revision's stays.
    assert [event.key for event in store.state.events] == ["/pods/p49"]
    await store.create("/nodes/n", b"v")
    async with asyncio.timeout(5):
        assert (await first).key == "/nodes/n"
    await close(nodes)
    await store.close()
