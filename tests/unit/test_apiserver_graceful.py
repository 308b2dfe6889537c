"""Graceful deletion: the decision table (Kubernetes' pod strategy + rest.BeforeDelete) and the
finisher that stands in for the kubelet, over a real SqliteStore."""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from cluster.api import objects_pb2
from cluster.api.kinds import POD
from cluster.apiserver.graceful import Action, DeletionFinisher, apply_plan, plan_pod_deletion
from cluster.apiserver.server import ApiServer, ApiServerOptions
from cluster.apiserver.storage import Storage
from cluster.apiserver.watchcache import Cacher
from store.base import EventType
from store.sqlite import SqliteStore
from tests import builders
from tests.unit.test_client_fake_apiserver import until
from tests.unit.test_watch_cache import STEP_S, WatchedStore

NOW = 1_700_000_000.25


def pod(
    *,
    node: str = "n1",
    phase: str = "Running",
    termination_grace: int | None = None,
    deletion_at: int | None = None,
    deletion_grace: int | None = None,
) -> objects_pb2.Pod:
    spec = {} if termination_grace is None else {"terminationGracePeriodSeconds": termination_grace}
    p = builders.pod("web", spec=spec, node_name=node, phase=phase, deletion_timestamp=deletion_at)
    if deletion_grace is not None:
        p.metadata.deletion_grace_period_seconds = deletion_grace
    return p


T = int(NOW)


@pytest.mark.parametrize(
    ("target", "requested", "action", "deadline", "grace"),
    [
        (pod(), None, Action.MARK, T + 31, 30),
        (pod(termination_grace=10), None, Action.MARK, T + 11, 10),
        (pod(termination_grace=10), 3, Action.MARK, T + 4, 3),
        (pod(), 0, Action.DELETE, None, None),
        (pod(termination_grace=0), None, Action.DELETE, None, None),
        (pod(), -5, Action.MARK, T + 2, 1),
        (pod(node=""), 30, Action.DELETE, None, None),
        (pod(phase="Succeeded"), 30, Action.DELETE, None, None),
        (pod(phase="Failed"), None, Action.DELETE, None, None),
        # Already terminating: only a shorter grace moves the deadline (earlier, by the difference).
        (pod(deletion_at=T + 20, deletion_grace=30), None, Action.KEEP, None, None),
        (pod(deletion_at=T + 20, deletion_grace=30), 30, Action.KEEP, None, None),
        (pod(deletion_at=T + 20, deletion_grace=30), 45, Action.KEEP, None, None),
        (pod(deletion_at=T + 20, deletion_grace=30), 10, Action.MARK, T, 10),
        (pod(deletion_at=T + 20, deletion_grace=30), 0, Action.DELETE, None, None),
        (pod(deletion_at=T + 20, deletion_grace=0), None, Action.DELETE, None, None),
        (pod(deletion_at=T + 20), 10, Action.DELETE, None, None),
    ],
    ids=[
        "default-30s", "pod-grace", "request-grace-wins", "grace-0", "pod-grace-0", "negative-is-1",
        "unscheduled", "succeeded", "failed", "terminating-no-grace", "terminating-same",
        "terminating-longer", "terminating-shorter", "terminating-now", "terminating-grace-0-recovers",
        "terminating-without-grace-recovers",
    ],
)
def test_plan(
    target: objects_pb2.Pod, requested: int | None, action: Action, deadline: int | None, grace: int | None
) -> None:
    plan = plan_pod_deletion(target, requested, NOW)
    assert plan.action is action
    if action is Action.MARK:
        assert plan.deletion_timestamp is not None
        assert plan.deletion_timestamp.seconds == deadline
        assert plan.grace_period_seconds == grace
        marked = apply_plan(target, plan)
        assert marked.metadata.deletion_timestamp.seconds == deadline
        assert marked.metadata.deletion_grace_period_seconds == grace
        # The pod asked about is left as it was.
        assert target.metadata.deletion_timestamp.seconds != deadline


# --------------------------------------------------------------------------------------- finisher
# These run on the wall clock (deletionTimestamps are wall times, whole seconds): deadlines are a
# second or two away, so each test takes about that long.


async def _store_pod(registry: Storage, name: str, *, deletion_at: float | None) -> None:
    if deletion_at is None:
        p = pod()
    else:
        p = pod(deletion_at=math.ceil(deletion_at), deletion_grace=1)
    p.metadata.name = name
    await registry.create(POD, p)


async def _exists(registry: Storage, name: str) -> bool:
    return await registry.get(POD, "default", name) is not None


async def _wait_gone(registry: Storage, name: str) -> float:
    """Wait until the pod is deleted; return the wall time its deletion was seen."""
    key = POD.key("default", name)
    kv = await registry.store.get(key)
    if kv is not None:
        async for event in registry.store.watch(key, kv.mod_revision + 1):
            if event.type is EventType.DELETE and event.key == key:
                break
    return time.time()


@contextlib.asynccontextmanager
async def _finishing(registry: Storage) -> AsyncIterator[Cacher]:
    """A finisher running beside the watch cache it learns from (as in the server), until the end."""
    cache = Cacher(registry)
    finisher = DeletionFinisher(registry, cache)
    async with asyncio.TaskGroup() as tasks:
        running = [tasks.create_task(cache.run()), tasks.create_task(finisher.run())]
        try:
            yield cache
        finally:
            for task in running:
                task.cancel()


@pytest.fixture
async def registry(tmp_path: Path) -> AsyncIterator[Storage]:
    store = await SqliteStore.open(tmp_path)
    try:
        yield Storage(store)
    finally:
        await store.close()


async def test_finisher_deletes_pods_when_their_deadline_passes(registry: Storage) -> None:
    start = time.time()
    await _store_pod(registry, "overdue", deletion_at=start - 10)
    await _store_pod(registry, "soon", deletion_at=start + 1)
    await _store_pod(registry, "alive", deletion_at=None)
    async with _finishing(registry):
        await asyncio.wait_for(_wait_gone(registry, "overdue"), 1.0)
        assert await _exists(registry, "soon")
        # Marked after the finisher started: it learns of it from its watch.
        await _store_pod(registry, "marked-later", deletion_at=time.time() + 1)
        soon_gone = await asyncio.wait_for(_wait_gone(registry, "soon"), 5.0)
        marked_gone = await asyncio.wait_for(_wait_gone(registry, "marked-later"), 5.0)
        assert soon_gone >= math.ceil(start + 1)
        assert marked_gone >= math.ceil(start + 1)
        assert await _exists(registry, "alive")


async def test_finisher_goes_by_the_stored_pod_when_it_changed(registry: Storage) -> None:
    await _store_pod(registry, "web", deletion_at=time.time() + 1)
    async with _finishing(registry):
        await asyncio.sleep(0.1)
        # A status write after the finisher saw the pod: its CAS on the old revision fails, and it
        # deletes by what is stored now.
        current = await registry.require(POD, "default", "web")
        current.status.nominated_node_name = "changed"
        outcome = await registry.update(POD, current, int(current.metadata.resource_version))
        assert outcome.succeeded
        await asyncio.wait_for(_wait_gone(registry, "web"), 5.0)


async def test_finisher_shortened_grace_moves_the_deadline_earlier(registry: Storage) -> None:
    await _store_pod(registry, "web", deletion_at=time.time() + 60)
    async with _finishing(registry):
        await asyncio.sleep(0.1)
        current = await registry.require(POD, "default", "web")
        current.metadata.deletion_timestamp.seconds = math.ceil(time.time() + 1)
        assert (await registry.update(POD, current, int(current.metadata.resource_version))).succeeded
        await asyncio.wait_for(_wait_gone(registry, "web"), 3.0)


async def test_the_finisher_shares_the_watch_caches_store_watch(tmp_path: Path) -> None:
    """The server's finisher learns of pods from the watch cache: the store sends each pod event to the
    server once, not once for the cache and again for the finisher."""
    sqlite = await SqliteStore.open(tmp_path / "data")
    store = WatchedStore(sqlite)
    server = ApiServer(store, ApiServerOptions(listen="127.0.0.1:0"))  # type: ignore[arg-type]
    try:
        await server.start()
        await until(lambda: store.watches >= 1, STEP_S)
        await asyncio.sleep(0.2)  # a second watch, if any, has been opened by now
        assert store.watches == 1
    finally:
        await server.stop(0)
        await sqlite.close()
