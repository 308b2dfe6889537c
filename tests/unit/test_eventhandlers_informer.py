"""The handler sets wired to real informers (an in-memory API server on loopback gRPC): a node, a pending
pod that gets bound, another scheduler's bound pod, deletions, all reach the cache and the queue."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from cluster.api import objects_pb2
from cluster.api.kinds import NODE, POD
from cluster.client import Client, Informer
from scheduler.cache import Cache, Snapshot
from scheduler.clock import FakeClock
from scheduler.eventhandlers import ASSIGNED_POD_DELETE, NODE_ADD, EventHandlers
from tests import builders
from tests.unit.test_client_fake_apiserver import FakeApiServer, pod, until
from tests.unit.test_eventhandlers import RecordingQueue


def scheduled_by(name: str, scheduler: str, node_name: str = "") -> objects_pb2.Pod:
    result = pod(name, node=node_name)
    result.spec.scheduler_name = scheduler
    return result


@contextlib.asynccontextmanager
async def running(informer: Informer) -> AsyncIterator[None]:
    task = asyncio.create_task(informer.run())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_informer_events_reach_cache_and_queue(fake: FakeApiServer) -> None:
    cache = Cache(clock=FakeClock())
    queue = RecordingQueue()
    bound: list[str] = []
    handlers = EventHandlers(cache, queue, {"default-scheduler"},
                             on_pod_bound=lambda p: bound.append(p.metadata.name))

    def on_n1() -> list[str]:
        snapshot = Snapshot()
        cache.update_snapshot(snapshot)
        return sorted(snapshot.get("n1").pods) if snapshot.num_nodes() else []

    async with Client(fake.address, timeout_s=5.0) as client:
        pods, nodes = Informer(client, POD), Informer(client, NODE)
        pods.add_handler(**handlers.pod_handlers())
        nodes.add_handler(**handlers.node_handlers())
        async with running(nodes), running(pods):
            await nodes.wait_synced()
            await pods.wait_synced()

            await fake.put(builders.node("n1", allocatable=builders.ROOMY))
            await until(lambda: cache.node_count() == 1)
            await fake.put(scheduled_by("web", "default-scheduler"))
            await fake.put(scheduled_by("other", "other-scheduler"))
            await fake.put(scheduled_by("db", "other-scheduler", node_name="n1"))
            await until(lambda: on_n1() == ["default/db"])
            await fake.put(scheduled_by("web", "default-scheduler", node_name="n1"))  # the binding
            await until(lambda: on_n1() == ["default/db", "default/web"])
            await fake.remove(POD, "default", "db")
            await until(lambda: on_n1() == ["default/web"])

    assert queue.calls == [
        ("move", NODE_ADD, None, "n1"),
        ("add", "web"),
        ("assigned_pod_added", "db"),
        ("assigned_pod_added", "web"),
        ("delete", "web"),
        ("move", ASSIGNED_POD_DELETE, "db", None),
    ]
    assert bound == ["db", "web"]
