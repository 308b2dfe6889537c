"""Gang preemption after a failed whole-group cycle (DefaultPreemption's PodGroupPostFilter, run by the
framework): eligibility, the nominations and message it hands back, and the eviction it runs in the
background."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from typing import Any

import pytest

from cluster.api import objects_pb2
from scheduler.algorithm import ScheduleFitError, schedule_pod
from scheduler.framework import CycleState, FailedPodGroup, PodGroupPostFilterResult, PodInfo, Status
from scheduler.plugins.defaultpreemption import NAME, NOT_ELIGIBLE_NEVER, NOT_ELIGIBLE_TERMINATING
from scheduler.plugins.defaultpreemption.executor import REASON_PREEMPTION_BY_SCHEDULER
from scheduler.plugins.defaultpreemption.group import NOT_ENOUGH_ROOM
from scheduler.plugins.defaultpreemption.plugin import evicting_message
from tests.unit.gang_preemption_util import X_K8S, GangCluster, fill, member, nodes, pod_group
from tests.unit.preemption_util import FakeClient, cpu_pod


class OrderedClient(FakeClient):
    """Also keeps the order of the writes: ("status", kind, name) and ("delete", name)."""

    def __init__(self, pods: Sequence[objects_pb2.Pod]) -> None:
        super().__init__(pods)
        self.calls: list[tuple[str, ...]] = []

    async def update_status(self, obj: Any) -> Any:
        self.calls.append(("status", type(obj).__name__, obj.metadata.name))
        return await super().update_status(obj)

    async def delete(self, kind: str, name: str, namespace: str = "", *,
                     grace_period_seconds: int | None = None) -> Any:
        self.calls.append(("delete", name))
        return await super().delete(kind, name, namespace, grace_period_seconds=grace_period_seconds)


def gang_members(count: int, **kwargs: Any) -> list[objects_pb2.Pod]:
    return [member(f"w-{i}", "train", "2", 100, **kwargs) for i in range(count)]


def failed_group(cluster: GangCluster, pods: Sequence[objects_pb2.Pod], admitted: int = 0) -> FailedPodGroup:
    """The gang "train" after a group cycle in which no member found a node."""
    policy = cluster.index.policy("default/train")
    assert policy is not None
    return FailedPodGroup(policy, admitted, [PodInfo(pod) for pod in pods])


async def run(cluster: GangCluster,
              group: FailedPodGroup) -> tuple[PodGroupPostFilterResult | None, Status | None]:
    """The profile's PodGroupPostFilter, and the evictions it starts, to the end."""
    async with asyncio.TaskGroup() as tasks:
        running = tasks.create_task(cluster.preemptions.run())
        await asyncio.sleep(0)
        try:
            return cluster.framework.run_pod_group_post_filter(group)
        finally:
            await cluster.preemptions.wait_idle()
            running.cancel()


def full_cluster(client: FakeClient | None = None,
                 **kwargs: Any) -> tuple[GangCluster, list[objects_pb2.Pod]]:
    """Two nodes of 4 cpu: a full of four 1-cpu pods, b of gang "batch" (two 2-cpu pods), all priority 1;
    a gang "train" of four 2-cpu members, priority 100, needs all of it."""
    batch = [member(f"batch-{i}", "batch", "2", 1, node_name="b") for i in range(2)]
    low = [*fill("a", "low", 4, "1", 1), *batch]
    members = gang_members(4, **kwargs)
    cluster = GangCluster(nodes("a", "b"), [*low, *members],
                          [pod_group("train", 4, priority=100), pod_group("batch", 2, all_=True, priority=1)],
                          client=client)
    return cluster, members


async def test_the_gang_is_nominated_and_its_victims_evicted_in_the_background():
    client = OrderedClient([])
    cluster, members = full_cluster(client)
    client.pods = {(p.metadata.namespace, p.metadata.name): p for p in cluster.pods}
    result, status = await run(cluster, failed_group(cluster, members))

    assert status is None and result is not None
    assert result.message == evicting_message(6)
    assert sorted(result.nominations.values()) == ["a", "a", "b", "b"]
    assert set(result.nominations) == {f"default/w-{i}" for i in range(4)}
    deleted = sorted(name for _, _, name, _ in client.deleted)
    assert deleted == ["batch-0", "batch-1", "low-0", "low-1", "low-2", "low-3"]
    # The victim gang's PodGroup is marked before any of its pods is deleted.
    marked = client.calls.index(("status", "PodGroup", "batch"))
    assert all(client.calls.index(("delete", f"batch-{i}")) > marked for i in range(2))
    group = next(obj for obj in client.status_updates if isinstance(obj, objects_pb2.PodGroup))
    condition = next(c for c in group.status.conditions if c.type == "DisruptionTarget")
    assert (condition.status, condition.reason) == ("True", REASON_PREEMPTION_BY_SCHEDULER)
    assert "pod group default/train" in condition.message
    preempted = [event for event in cluster.events.events if event[2] == "Preempted"]
    assert len(preempted) == 6
    assert not any(cluster.queue.is_held(f"default/w-{i}") for i in range(4))


async def test_the_members_are_held_until_the_last_victim_is_deleted():
    cluster, members = full_cluster()
    held_at_deletes: list[bool] = []
    delete = cluster.client.delete

    async def watching_delete(*args: Any, **kwargs: Any) -> Any:
        held_at_deletes.append(all(cluster.queue.is_held(f"default/w-{i}") for i in range(4)))
        return await delete(*args, **kwargs)

    cluster.client.delete = watching_delete  # type: ignore[method-assign]
    await run(cluster, failed_group(cluster, members))
    # Held while all but the last victim go; released just before the last deletion.
    assert held_at_deletes == [True] * 5 + [False]


async def test_a_podgroup_with_preemption_policy_never_does_not_preempt():
    cluster, members = full_cluster()
    cluster.index.set_group(pod_group("train", 4, priority=100, never=True))
    result, status = await run(cluster, failed_group(cluster, members))
    assert status is not None and status.message() == "preemption: " + NOT_ELIGIBLE_NEVER
    assert result is None  # the nominations stay
    assert cluster.client.deleted == [] and cluster.client.status_updates == []


async def test_a_members_preemption_policy_is_ignored_for_its_podgroups():
    # Upstream resolves a group preemptor's policy from its PodGroup alone (PreemptLowerPriority unset).
    cluster, members = full_cluster()
    members[2].spec.preemption_policy = "Never"
    result, status = await run(cluster, failed_group(cluster, members))
    assert status is None and result is not None
    assert len(cluster.client.deleted) == 6


async def test_a_coscheduling_gang_with_a_member_saying_never_does_not_preempt():
    # Coscheduling's PodGroup has no preemptionPolicy: the members' decide, any Never wins.
    members = gang_members(2)
    members[1].spec.preemption_policy = "Never"
    cluster = GangCluster(nodes("a"), [*fill("a", "low", 4, "1", 1), *members],
                          [pod_group("train", 2, api_version=X_K8S)])
    result, status = await run(cluster, failed_group(cluster, members))
    assert status is not None and status.message() == "preemption: " + NOT_ELIGIBLE_NEVER
    assert result is None and cluster.client.deleted == []


async def test_a_member_waiting_for_its_victims_keeps_its_nomination_and_preempts_nothing():
    terminating = cpu_pod("going", "2", 1, node_name="a", terminating=True)
    members = gang_members(2, nominated="a")
    cluster = GangCluster(nodes("a"), [terminating, *fill("a", "low", 2, "1", 1), *members],
                          [pod_group("train", 2)])
    result, status = await run(cluster, failed_group(cluster, members))
    assert status is not None and status.message() == "preemption: " + NOT_ELIGIBLE_TERMINATING
    assert result is None  # the nominations stay
    assert cluster.client.deleted == []


async def test_nothing_is_evicted_when_the_whole_gang_cannot_fit_and_nominations_are_cleared():
    cluster, members = full_cluster()
    five = [*members, member("w-4", "train", "2", 100)]
    cluster.index.set_group(pod_group("train", 5, priority=100))
    result, status = await run(cluster, failed_group(cluster, five))
    assert status is not None and status.message() == "preemption: " + NOT_ENOUGH_ROOM
    assert result is not None and result.nominations == {}
    assert cluster.client.deleted == [] and cluster.client.status_updates == []


async def test_members_already_bound_count_toward_min_count():
    # minCount 4, two members bound on b: the two pending ones need only node a.
    bound = [member(f"w-{i}", "train", "2", 100, node_name="b") for i in (2, 3)]
    pending = gang_members(2)
    cluster = GangCluster(nodes("a", "b"), [*fill("a", "low", 4, "1", 1), *bound, *pending],
                          [pod_group("train", 4, priority=100)])
    result, status = await run(cluster, failed_group(cluster, pending, admitted=2))
    assert status is None and result is not None
    assert result.nominations == {"default/w-0": "a", "default/w-1": "a"}
    assert sorted(name for _, _, name, _ in cluster.client.deleted) == [f"low-{i}" for i in range(4)]


async def preempt_for_pod(cluster: GangCluster, preemptor: objects_pb2.Pod) -> str:
    """A single pod's failed cycle and DefaultPreemption's PostFilter, its evictions run to the end: the
    node it is nominated to."""
    info = PodInfo(preemptor)
    state = CycleState()
    with pytest.raises(ScheduleFitError) as failed:
        await schedule_pod(cluster.framework, state, info, cluster.snapshot,  # type: ignore[arg-type]
                           percentage_of_nodes_to_score=None, rng=random.Random(0), start_index=0)
    plugin = cluster.framework.plugin(NAME)
    assert plugin is not None
    async with asyncio.TaskGroup() as group:
        running = group.create_task(cluster.preemptions.run())
        await asyncio.sleep(0)
        try:
            result, status = await plugin.post_filter(  # type: ignore[attr-defined]
                state, info, failed.value.diagnosis.node_to_status)
        finally:
            await cluster.preemptions.wait_idle()
            running.cancel()
    assert status is None and result is not None
    return str(result.nominated_node_name)


async def test_a_single_pods_preemption_evicts_a_running_gang_whole_too():
    # The pod needs 2 CPUs on n1, held by batch-a, whose gang also runs batch-b on n2: both go, and the
    # gang's PodGroup says why; the more important single pod of n2 stays.
    batch = [member(f"batch-{n}", "batch", "2", 1, node_name=n) for n in ("a", "b")]
    cluster = GangCluster(nodes("a", "b", cpu="2"), batch, [pod_group("batch", 2, all_=True, priority=1)])
    cluster.client.pods = {(p.metadata.namespace, p.metadata.name): p for p in batch}
    node = await preempt_for_pod(cluster, cpu_pod("urgent", "2", 100))
    assert node in ("a", "b")
    assert sorted(name for _, _, name, _ in cluster.client.deleted) == ["batch-a", "batch-b"]
    (group,) = [obj for obj in cluster.client.status_updates if isinstance(obj, objects_pb2.PodGroup)]
    assert group.metadata.name == "batch"
    assert next(c for c in group.status.conditions if c.type == "DisruptionTarget").status == "True"


async def test_a_single_pod_never_evicts_a_podgroup_above_it_even_where_its_pods_are_below():
    # n1 and n2 hold gang batch's pods, of priority 1, but their PodGroup says 500, above the preemptor;
    # n3 a lone pod of priority 50.
    batch = [member(f"batch-{n}", "batch", "2", 1, node_name=n) for n in ("a", "b")]
    lone = cpu_pod("lone", "2", 50, node_name="c")
    cluster = GangCluster(nodes("a", "b", "c", cpu="2"), [*batch, lone],
                          [pod_group("batch", 2, all_=True, priority=500)])
    node = await preempt_for_pod(cluster, cpu_pod("urgent", "2", 100))
    assert node == "c"
    assert [name for _, _, name, _ in cluster.client.deleted] == ["lone"]
