"""The PodGarbageCollector against a real in-process API server on a temporary SQLite store, through
the real client: pods of a deleted node go after the quarantine, marked Failed first, terminating ones
included; a node back within the quarantine keeps its pods; pods on live nodes and unbound pods are left
alone; a node the informer has not seen yet is read from the server before anything is judged; and a
pod re-created under the name of a collected one is never deleted for it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cluster.api import errors, objects_pb2
from cluster.api.kinds import NODE, POD
from cluster.client import Client, WatchEvent
from cluster.controllers import PodGarbageCollector, podgc
from cluster.controllers.podgc import collect_pod
from tests.unit.test_apiserver_server import Harness, make_node
from tests.unit.test_disruption_controller import make_pod

NS = "shop"
SETTLE_TIMEOUT_S = 10.0
#: Short enough for the tests to run quickly; the order of quarantines, not their length, is what the
#: tests rely on.
QUARANTINE_S = 0.3


@dataclass
class Cluster:
    client: Client
    collector: PodGarbageCollector

    async def names(self) -> set[str]:
        return {pod.metadata.name for pod in (await self.client.list(POD, NS)).items}  # type: ignore[attr-defined]

    async def gone(self, *names: str) -> None:
        """Wait until no pod is named ``names``."""
        left: set[str] = set()
        try:
            async with asyncio.timeout(SETTLE_TIMEOUT_S):
                while True:
                    left = await self.names() & set(names)
                    if not left:
                        return
                    await asyncio.sleep(0.02)
        except TimeoutError:
            raise AssertionError(f"pods {sorted(left)} are still there") from None

    async def collected_after(self, *, node: str = "sentinel") -> None:
        """Wait until a pod bound to ``node``, a node that never exists, created now, is collected: every
        quarantine that began before is over and its node's pods are dealt with."""
        name = f"on-{node}"
        await self.client.create(make_pod(name, node=node))
        await self.gone(name)


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    async with Harness(tmp_path) as api:
        assert api.server is not None
        async with Client(api.server.address) as client:
            for name in ("n1", "n2"):
                await client.create(make_node(name))
            collector = PodGarbageCollector(client, quarantine_s=QUARANTINE_S)
            running = asyncio.create_task(collector.run(), name="test-podgc")
            try:
                await asyncio.wait_for(collector.wait_synced(), SETTLE_TIMEOUT_S)
                yield Cluster(client, collector)
            finally:
                running.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await running


async def last_states(client: Client, since: str, names: set[str]) -> dict[str, objects_pb2.Pod]:
    """The pods ``names`` as their DELETED watch events (since ``since``) show them."""
    deleted: dict[str, objects_pb2.Pod] = {}
    events = client.watch(POD, NS, resource_version=since)
    async with contextlib.aclosing(events), asyncio.timeout(SETTLE_TIMEOUT_S):
        event: WatchEvent
        async for event in events:
            pod = event.object
            if event.type == "DELETED" and pod.metadata.name in names:  # type: ignore[attr-defined]
                deleted[pod.metadata.name] = pod  # type: ignore[attr-defined,assignment]
                if deleted.keys() == names:
                    return deleted
    raise AssertionError("the watch ended")


async def test_the_pods_of_a_deleted_node_go_after_the_quarantine(cluster: Cluster) -> None:
    client = cluster.client
    for name in ("a", "b"):
        await client.create(make_pod(name, node="n1"))
    terminating = make_pod("slow", node="n1")
    terminating.spec.termination_grace_period_seconds = 3600
    await client.create(terminating)
    marked = await client.delete(POD, "slow", NS)
    assert marked.metadata.HasField("deletion_timestamp")  # type: ignore[attr-defined]
    await client.create(make_pod("elsewhere", node="n2"))
    await client.create(make_pod("unbound"))
    since = (await client.list(POD, NS)).resource_version

    await client.delete(NODE, "n1")
    await cluster.gone("a", "b", "slow")

    assert await cluster.names() == {"elsewhere", "unbound"}
    for pod in (await last_states(client, since, {"a", "b", "slow"})).values():
        assert pod.status.phase == "Failed"
        target = next(c for c in pod.status.conditions if c.type == "DisruptionTarget")
        assert (target.status, target.reason, target.message) == (
            "True", "DeletionByPodGC", 'node "n1" no longer exists')


async def test_collecting_a_node_does_not_put_it_back_in_quarantine(
    cluster: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    client = cluster.client
    for name in ("a", "b"):
        await client.create(make_pod(name, node="n1"))
    with caplog.at_level(logging.INFO, logger=podgc.__name__):
        await client.delete(NODE, "n1")
        await cluster.gone("a", "b")
        # Every event of the collection (status writes, deletions) comes before the sentinel's.
        await cluster.collected_after()
    quarantined = [r.getMessage() for r in caplog.records if r.getMessage().startswith("node n1 is missing")]
    assert len(quarantined) == 1, quarantined


async def test_a_pod_created_on_a_node_that_never_existed_goes(cluster: Cluster) -> None:
    await cluster.client.create(make_pod("lost", node="nowhere"))
    await cluster.gone("lost")


async def test_a_node_back_within_the_quarantine_keeps_its_pods(cluster: Cluster) -> None:
    client = cluster.client
    await client.create(make_pod("a", node="n1"))
    await client.delete(NODE, "n1")
    await client.create(make_node("n1"))
    # The sentinel's quarantine began after n1's: once its pod is collected, n1's quarantine is over.
    await cluster.collected_after()
    pod = await client.get(POD, "a", NS)
    assert pod.status.phase == "Running"  # type: ignore[attr-defined]
    assert await cluster.names() == {"a"}


async def test_a_node_the_informer_has_not_seen_is_read_before_its_pods_are_judged(
    cluster: Cluster,
) -> None:
    client = cluster.client
    await client.create(make_pod("a", node="n1"))
    # A collector whose informers have not run knows no node and no pod: it must ask the server.
    unsynced = PodGarbageCollector(client, quarantine_s=0)
    assert await unsynced.collect("n1") == 0
    assert await cluster.names() == {"a"}


async def test_a_pod_recreated_under_the_same_name_is_not_collected_for_the_old_one(
    cluster: Cluster,
) -> None:
    client = cluster.client
    old = await client.create(make_pod("web", node="n1"))
    await client.delete(POD, "web", NS, grace_period_seconds=0)
    new = await client.create(make_pod("web", node="n1"))
    assert new.metadata.uid != old.metadata.uid
    with pytest.raises(errors.Conflict):
        await collect_pod(client, old)  # type: ignore[arg-type]
    kept = await client.get(POD, "web", NS)
    assert kept.metadata.uid == new.metadata.uid  # type: ignore[attr-defined]
    assert kept.status.phase == "Running"  # type: ignore[attr-defined]

    finished = objects_pb2.Pod()
    finished.CopyFrom(old)
    finished.status.phase = "Succeeded"  # deleted as it is, with the precondition alone
    with pytest.raises(errors.Conflict):
        await collect_pod(client, finished)
    assert (await client.get(POD, "web", NS)).metadata.uid == new.metadata.uid  # type: ignore[attr-defined]


async def test_a_pod_already_gone_is_not_counted(cluster: Cluster) -> None:
    client = cluster.client
    pod = await client.create(make_pod("web", node="n1"))
    await client.delete(POD, "web", NS, grace_period_seconds=0)
    assert await collect_pod(client, pod) is False  # type: ignore[arg-type]
