"""etcd only: the store across real member crashes, restarts and a 3-member cluster losing its leader.

The SQLite store has no connection to lose; its counterpart (a watch resumed after the store is
reopened) is in test_watch.py and runs on both backends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from etcd3aio import Etcd3Client

from cluster.launcher.etcd import EtcdCluster
from store.base import EventType, Store, StoreUnavailable, TooOldRevision, WriteResult
from store.etcd import EtcdStore, EtcdTimeouts
from tests.conftest import running_cluster
from tests.contract.watching import close, take, take_until_sentinel

pytestmark = pytest.mark.etcd


@pytest.fixture
def etcd_cluster_1(tmp_path: Path) -> Iterator[EtcdCluster]:
    """A single-member etcd of the test's own, which it may kill and restart."""
    with running_cluster(1, tmp_path / "etcd", "solo") as cluster:
        yield cluster


async def _write(store: Store, prefix: str, count: int, *, concurrency: int = 1) -> list[WriteResult]:
    """``count`` creates under ``prefix``, ``concurrency`` at a time; returns them in revision order."""
    results: list[WriteResult] = []

    async def writer(n: int) -> None:
        for i in range(n, count, concurrency):
            result = await store.create(f"{prefix}{i:05d}", b"x" * 200)
            assert result.succeeded
            results.append(result)

    await asyncio.gather(*(writer(n) for n in range(concurrency)))
    return sorted(results, key=lambda r: r.revision)


async def test_a_live_watch_survives_its_member_being_killed_and_restarted(
    etcd_cluster_1: EtcdCluster,
) -> None:
    store = await EtcdStore.connect(etcd_cluster_1.endpoints)
    try:
        events = store.watch("/pods/")
        before = await _write(store, "/pods/a", 20)
        seen = await take(events, 20)

        await etcd_cluster_1.kill_member(0)
        reader = asyncio.create_task(anext(events))  # waits through the outage
        await asyncio.sleep(0.5)
        await etcd_cluster_1.restart_member(0)
        after = await _write(store, "/pods/b", 20)
        seen.append(await reader)
        seen += await take_until_sentinel(store, events, "/pods/~sentinel")
        await close(events)
    finally:
        await store.close()

    assert [event.revision for event in seen] == [r.revision for r in before + after]
    assert all(event.type is EventType.PUT for event in seen)


async def test_a_catching_up_watch_resumes_after_its_last_event_not_its_last_header(
    etcd_cluster_1: EtcdCluster,
) -> None:
    # More than 1000 revisions behind, etcd sends a watcher its events in batches stamped with the
    # current revision; a watch resumed from that header would skip the rest of the backlog. The restarted
    # member replays the 2500 writes before it answers promptly, which on a loaded machine outlasts the
    # default 5 s budget of the sentinel's write: give it the watch's.
    timeouts = EtcdTimeouts(retry_budget_s=30.0)
    store = await EtcdStore.connect(etcd_cluster_1.endpoints, timeouts=timeouts)
    try:
        backlog = await _write(store, "/pods/", 2500, concurrency=16)
        events = store.watch("/pods/", from_revision=backlog[0].revision)
        first = await take(events, 1000)

        await etcd_cluster_1.kill_member(0)
        await etcd_cluster_1.restart_member(0)
        rest = await take_until_sentinel(store, events, "/pods/~sentinel")
        await close(events)
    finally:
        await store.close()

    assert [event.revision for event in first + rest] == [r.revision for r in backlog]


async def test_requests_fail_as_unavailable_while_etcd_is_down(etcd_cluster_1: EtcdCluster) -> None:
    timeouts = EtcdTimeouts(retry_budget_s=1.0, watch_reconnect_budget_s=2.0)
    store = await EtcdStore.connect(etcd_cluster_1.endpoints, timeouts=timeouts)
    try:
        events = store.watch("/pods/")
        await store.create("/pods/a", b"x")
        await take(events, 1)

        await etcd_cluster_1.kill_member(0)

        with pytest.raises(StoreUnavailable, match=etcd_cluster_1.endpoints[0]):
            await store.get("/pods/a")
        with pytest.raises(StoreUnavailable):
            await store.create("/pods/b", b"x")
        with pytest.raises(StoreUnavailable):
            await take(events, 1)
    finally:
        await store.close()


async def test_connecting_to_no_etcd_fails_as_unavailable(etcd_cluster_1: EtcdCluster) -> None:
    endpoints = etcd_cluster_1.endpoints
    await etcd_cluster_1.stop_member(0)

    with pytest.raises(StoreUnavailable, match="unavailable"):
        await EtcdStore.connect(endpoints, timeouts=EtcdTimeouts(retry_budget_s=0.5))


async def test_a_three_member_cluster_keeps_serving_when_its_leader_is_killed(
    etcd_cluster_3: EtcdCluster,
) -> None:
    store = await EtcdStore.connect(etcd_cluster_3.endpoints, key_prefix="/ha")
    watcher = await EtcdStore.connect(etcd_cluster_3.endpoints, key_prefix="/ha")
    try:
        created = await store.create("/counter", b"0")
        events = watcher.watch("/counter", from_revision=created.revision + 1)
        await _increment(store, 10)
        leader = await etcd_cluster_3.leader()
        assert leader is not None

        await etcd_cluster_3.kill_member(leader)
        await _increment(store, 10)
        await etcd_cluster_3.restart_member(leader)
        await _increment(store, 10)

        got = await take(events, 30)
        await close(events)
        final = await store.get("/counter")
    finally:
        await store.close()
        await watcher.close()

    assert final is not None and final.value == b"30"
    assert [event.value for event in got] == [str(n).encode() for n in range(1, 31)]
    assert [event.prev_value for event in got] == [str(n).encode() for n in range(30)]


async def _increment(store: Store, times: int) -> None:
    """Compare-and-swap increments of /counter by its only writer. A write whose outcome an outage
    left unknown (StoreUnavailable) is settled by re-reading, as a client would: if the value it
    wanted is there, it landed."""
    for _ in range(times):
        wanted = None
        async with asyncio.timeout(30):
            while True:
                try:
                    current = await store.get("/counter")
                    assert current is not None
                    if current.value == wanted:
                        break
                    wanted = str(int(current.value) + 1).encode()
                    if (await store.update("/counter", wanted, current.mod_revision)).succeeded:
                        break
                except StoreUnavailable:
                    await asyncio.sleep(0.2)


async def test_a_cluster_started_again_on_its_data_root_keeps_its_data(tmp_path: Path) -> None:
    first = EtcdCluster(3, tmp_path)
    await first.start()
    try:
        store = await EtcdStore.connect(first.endpoints)
        written = await store.create("/kept", b"yes")
        await store.close()
        endpoints = first.endpoints
    finally:
        await first.stop()

    again = EtcdCluster(3, tmp_path)
    await again.start()
    try:
        store = await EtcdStore.connect(again.endpoints)
        kept = await store.get("/kept")
        await store.close()
    finally:
        await again.stop()

    assert again.endpoints == endpoints
    assert kept == written.current


async def test_a_host_name_endpoint_connects(etcd_endpoints: list[str], unique_prefix: str) -> None:
    port = etcd_endpoints[0].rpartition(":")[2]
    store = await EtcdStore.connect([f"localhost:{port}"], key_prefix=unique_prefix)
    try:
        assert (await store.create("/a", b"v")).succeeded
    finally:
        await store.close()


async def test_a_compaction_behind_the_stores_back_is_reported_by_etcds_own_revision(
    etcd_cluster_1: EtcdCluster,
) -> None:
    store = await EtcdStore.connect(etcd_cluster_1.endpoints)
    try:
        first = await store.create("/pods/a", b"1")
        await store.update("/pods/a", b"2", first.revision)
        third = await store.create("/pods/b", b"1")
        async with Etcd3Client(etcd_cluster_1.endpoints) as etcdctl:  # as `etcdctl compact` would
            await etcdctl.kv.compact(third.revision)  # type: ignore[union-attr]

        with pytest.raises(TooOldRevision) as listed:
            await store.list("/pods/", revision=first.revision)
        events = store.watch("/pods/", from_revision=first.revision)
        try:
            with pytest.raises(TooOldRevision) as watched:
                await take(events, 1)
        finally:
            await close(events)
    finally:
        await store.close()

    # etcd's compaction to N may drop deletions at N, so the store's history starts at N + 1.
    assert (listed.value.requested, listed.value.compacted) == (first.revision, third.revision + 1)
    assert (watched.value.requested, watched.value.compacted) == (first.revision, third.revision + 1)


async def test_a_running_cluster_cannot_be_started_twice(etcd_cluster_1: EtcdCluster) -> None:
    with pytest.raises(RuntimeError, match="already running"):
        await etcd_cluster_1.start()

    assert etcd_cluster_1.members[0].running
