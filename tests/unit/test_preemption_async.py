"""Asynchronous preemption (kube-scheduler's KEP-4832): DefaultPreemption nominates at once and hands the
API calls to ``scheduler.preemptions.Preemptions``, which holds the preemptor in the queue until just
before the last victim's deletion, and on a failure drops the nomination and retries the pod at once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from cluster.api import errors, objects_pb2
from scheduler.framework import Code, PodInfo, PostFilterResult, Status
from scheduler.queue import ACTIVE, UNSCHEDULABLE
from tests.unit.preemption_util import Cluster, cpu_node, cpu_pod


class Rig:
    """A cluster whose handle preempts through a running ``Preemptions`` over a real queue."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.queue = cluster.queue
        self.preemptions = cluster.preemptions
        #: For each delete call: the victim and whether the preemptor was held at that moment.
        self.deletes: list[tuple[str, bool]] = []
        delete = cluster.client.delete

        async def watched_delete(kind: str, name: str, namespace: str = "", **kwargs: Any) -> Any:
            self.deletes.append((name, self.queue.is_held("default/hi")))
            return await delete(kind, name, namespace, **kwargs)

        cluster.client.delete = watched_delete  # type: ignore[method-assign]

    async def preempt(self, preemptor: objects_pb2.Pod) -> tuple[PostFilterResult | None, Status | None]:
        """One cycle of ``preemptor`` that ends in preemption, handled as the failure handler does
        (requeued as Unschedulable, nominated); the background work has not run yet."""
        self.queue.add(preemptor)
        queued = await self.queue.pop()
        cycle = self.queue.scheduling_cycle
        result, status = await self.cluster.post_filter(preemptor)
        queued.unschedulable_plugins = {"NodeResourcesFit"}
        self.queue.add_unschedulable_if_not_present(queued, cycle)
        if result is not None:
            self.queue.add_nominated_pod(queued.pod_info, result.nominated_node_name)
        return result, status

    def where(self, key: str) -> str | None:
        found = self.queue.lookup(key)
        return found[0] if found else None


@pytest.fixture
async def running() -> AsyncIterator[Callable[[Cluster], Awaitable[Rig]]]:
    async with asyncio.TaskGroup() as group:
        tasks: list[asyncio.Task[None]] = []

        async def start(cluster: Cluster) -> Rig:
            rig = Rig(cluster)
            tasks.append(group.create_task(rig.preemptions.run()))
            await asyncio.sleep(0)  # run() takes ownership of its task group
            return rig

        yield start
        for task in tasks:
            task.cancel()


def three_victims() -> Cluster:
    return Cluster(
        [cpu_node("n1", "4")],
        [cpu_pod(name, "1", 0, node_name="n1") for name in ("a", "b", "c", "d")],
        nominated={"n1": [cpu_pod("lower-nominee", "1", 5, nominated="n1")]},
    )


async def test_the_preemptor_is_nominated_before_any_victim_is_deleted(running: Any) -> None:
    rig = await running(three_victims())
    result, status = await rig.preempt(cpu_pod("hi", "3", 100))
    assert status is None and result == PostFilterResult("n1")
    assert rig.cluster.client.deleted == []
    assert [p.key for p in rig.queue.nominated_pods_for_node("n1")] == ["default/hi"]
    assert rig.queue.is_held("default/hi") and rig.preemptions.in_flight == 1

    await rig.preemptions.wait_idle()
    # "a", first among equals, is reprieved.
    assert sorted(name for _, _, name, _ in rig.cluster.client.deleted) == ["b", "c", "d"]
    assert sorted(e[0] for e in rig.cluster.events.events) == ["b", "c", "d"]
    # Lower-priority nominations on the node are cleared, in the API and in memory.
    assert [p.metadata.name for p in rig.cluster.client.status_updates] == ["lower-nominee"]
    assert rig.cluster.nominator.forgotten == ["lower-nominee"]
    assert not rig.queue.is_held("default/hi")
    # Still nominated: the deletions' events will requeue it.
    assert [p.key for p in rig.queue.nominated_pods_for_node("n1")] == ["default/hi"]
    assert rig.where("default/hi") == UNSCHEDULABLE


async def test_the_hold_ends_just_before_the_last_deletion(running: Any) -> None:
    rig = await running(three_victims())
    await rig.preempt(cpu_pod("hi", "3", 100))
    await rig.preemptions.wait_idle()
    assert [held for _, held in rig.deletes] == [True, True, False]


async def test_a_failed_deletion_spares_the_last_victim_and_retries_the_pod_unnominated(running: Any) -> None:
    rig = await running(three_victims())
    rig.cluster.client.fail_delete = errors.ApiError("etcd is down")
    result, status = await rig.preempt(cpu_pod("hi", "3", 100))
    assert status is None and result == PostFilterResult("n1")
    await rig.preemptions.wait_idle()
    # Two deletions tried at once, both failed; the third victim is left alone.
    assert len(rig.deletes) == 2 and rig.cluster.client.deleted == []
    assert rig.queue.nominated_pods_for_node("n1") == []
    assert not rig.queue.is_held("default/hi")
    assert rig.where("default/hi") == ACTIVE


async def test_a_failing_evictor_releases_and_retries_the_pod(running: Any) -> None:
    rig = await running(three_victims())
    rig.queue.add(cpu_pod("hi", "3", 100))
    queued = await rig.queue.pop()
    queued.unschedulable_plugins = {"NodeResourcesFit"}

    async def broken(release: Callable[[], None]) -> Status | None:
        raise RuntimeError("a bug")

    rig.preemptions.start(queued.pod_info, "n1", broken)
    rig.queue.add_unschedulable_if_not_present(queued, rig.queue.scheduling_cycle)
    rig.queue.add_nominated_pod(queued.pod_info, "n1")
    await rig.preemptions.wait_idle()
    assert rig.queue.nominated_pods_for_node("n1") == []
    assert rig.where("default/hi") == ACTIVE


async def test_an_error_status_of_the_evictor_retries_the_pod(running: Any) -> None:
    rig = await running(three_victims())
    rig.queue.add(cpu_pod("hi", "3", 100))
    queued = await rig.queue.pop()
    queued.unschedulable_plugins = {"NodeResourcesFit"}

    async def failing(release: Callable[[], None]) -> Status | None:
        return Status(Code.ERROR, ("conflict",))

    rig.preemptions.start(queued.pod_info, "n1", failing)
    rig.queue.add_unschedulable_if_not_present(queued, rig.queue.scheduling_cycle)
    await rig.preemptions.wait_idle()
    assert rig.where("default/hi") == ACTIVE


async def test_victims_already_terminating_need_no_call_and_no_hold(running: Any) -> None:
    cluster = Cluster([cpu_node("n1", "1")], [cpu_pod("low", "1", 0, node_name="n1", terminating=True)])
    rig = await running(cluster)
    result, status = await rig.preempt(cpu_pod("hi", "1", 100))
    assert status is None and result == PostFilterResult("n1")
    await rig.preemptions.wait_idle()
    assert rig.deletes == [] and not rig.queue.is_held("default/hi")


async def test_starting_before_run_is_refused() -> None:
    cluster = three_victims()
    rig = Rig(cluster)

    async def evict(release: Callable[[], None]) -> Status | None:
        return None

    with pytest.raises(RuntimeError, match="not running"):
        rig.preemptions.start(PodInfo(cpu_pod("hi", "3", 100)), "n1", evict)
    assert not rig.queue.is_held("default/hi") and rig.preemptions.in_flight == 0
