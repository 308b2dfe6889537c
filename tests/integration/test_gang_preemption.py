"""Preemption for gangs with real processes: a `podsched apiserver` and a `podsched scheduler` with the
default profile, on each backend.

The module's cluster is four nodes of 2 CPUs on a store of its own. Each test fills the nodes with pods
pinned by spec.nodeName, submits a high-priority gang and follows the namespace's pods through a watch
(test_preemption's recording): what was disturbed, and that no node was ever overcommitted, is read from
the whole history.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cluster.api import objects_pb2
from cluster.client import Client
from cluster.launcher.process import ApiServerProcess, SchedulerProcess
from tests.integration.conftest import own_apiserver_with
from tests.integration.helpers import node_manifest, pod_manifest
from tests.integration.test_preemption import (
    GRACE_S,
    NODE_CPU,
    assert_never_overcommitted,
    gone,
    priority_class,
    recording,
)
from tests.integration.test_scheduler import all_bound, apply, eventually, pods_in, running_scheduler

NODES = tuple(f"node-{i}" for i in range(4))
CLASSES = (priority_class("low", 100), priority_class("high", 1000), priority_class("top", 5000))
UPSTREAM = "scheduling.k8s.io/v1alpha3"
NOT_ENOUGH_ROOM = "preemption: not enough room for the whole gang even after evicting lower-priority pods"


def gang_group(name: str, namespace: str, min_count: int, priority_class_name: str, *,
               whole: bool = False) -> dict[str, Any]:
    """A gang PodGroup of the class given (its pods count with its priority); ``whole``: disruptionMode
    all."""
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": min_count}},
                            "priorityClassName": priority_class_name}
    if whole:
        spec["disruptionMode"] = {"all": {}}
    return {"apiVersion": UPSTREAM, "kind": "PodGroup", "metadata": {"name": name, "namespace": namespace},
            "spec": spec}


def running(name: str, namespace: str, node: str, priority_class_name: str, *,
            group: str = "") -> dict[str, Any]:
    """A 1-CPU pod already running on ``node`` (created bound), of PodGroup ``group`` if given."""
    fields: dict[str, Any] = {"nodeName": node, "priorityClassName": priority_class_name,
                              "terminationGracePeriodSeconds": GRACE_S}
    if group:
        fields["schedulingGroup"] = {"podGroupName": group}
    return pod_manifest(name, namespace, cpu="1", **fields)


def member(name: str, namespace: str, group: str) -> dict[str, Any]:
    return pod_manifest(name, namespace, cpu="1", priorityClassName="high",
                        schedulingGroup={"podGroupName": group})


@pytest.fixture(scope="module")
def cluster(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    objects = (*(node_manifest(name, cpu=NODE_CPU) for name in NODES), *CLASSES)
    with own_apiserver_with(backend, tmp_path_factory.mktemp("gang-preemption-cluster"), *objects) as server:
        yield server


@pytest.fixture(scope="module")
def scheduler(cluster: ApiServerProcess) -> Iterator[SchedulerProcess]:
    with running_scheduler(cluster.address) as process:
        yield process


async def running_count(client: Client, namespace: str, count: int) -> bool | None:
    pods = await pods_in(client, namespace)
    return True if len(pods) == count and all(p.status.phase == "Running" for p in pods) else None


async def test_a_high_priority_gang_evicts_just_enough_low_pods_and_is_bound_whole(
    cluster: ApiServerProcess, scheduler: SchedulerProcess, api: Client, ns: str, tmp_path: Path
) -> None:
    # Every node full: node-0 holds a pod of the gang's own priority (never a victim) and a low one;
    # the others two low ones each. The gang of 4 needs 4 CPUs: exactly 4 low pods must go.
    low = [running("low-0", ns, "node-0", "low"), running("peer", ns, "node-0", "high")]
    low += [running(f"low-{n}{i}", ns, f"node-{n}", "low") for n in (1, 2, 3) for i in range(2)]
    apply(cluster.address, tmp_path, *low)
    await eventually(lambda: running_count(api, ns, 8), "the eight pods running")

    async with recording(api, ns) as history:
        apply(cluster.address, tmp_path, gang_group("train", ns, 4, "high"),
              *(member(f"w-{i}", ns, "train") for i in range(4)))
        pods = await eventually(lambda: all_bound(api, ns, 8), "the gang bound", within=40)

    gang = [p for p in pods if p.metadata.name.startswith("w-")]
    assert len(gang) == 4, scheduler.log()
    assert len({p.metadata.resource_version for p in gang}) == 1  # one BindGroup: all at once
    disturbed = history.disturbed()
    assert len(disturbed) == 4 and all(name.startswith("low-") for name in disturbed), disturbed
    assert "peer" in {p.metadata.name for p in pods}
    assert_never_overcommitted(history)
    # Each member was nominated while its victims went, and no member was bound before all were gone.
    first_bind = min(i for i, s in enumerate(history.seen)
                     if s.name.startswith("w-") and s.pod.spec.node_name)
    last_gone = max(i for i, s in enumerate(history.seen) if s.type == "DELETED")
    assert last_gone < first_bind
    assert all(any(s.pod.status.nominated_node_name for s in history.of(f"w-{i}")) for i in range(4))
    preempted = [e for e in (await api.list("events", ns)).items  # type: ignore[attr-defined]
                 if e.reason == "Preempted"]
    assert sorted(e.involved_object.name for e in preempted) == sorted(disturbed)


async def test_a_running_low_gang_as_the_only_victims_is_evicted_whole(
    cluster: ApiServerProcess, scheduler: SchedulerProcess, api: Client, ns: str, tmp_path: Path
) -> None:
    # A low-priority gang of 8 fills the cluster; a high gang of 2 needs only 2 CPUs, but a running gang
    # of disruptionMode all is never partly evicted: all 8 go, and its PodGroup says why.
    batch = [running(f"batch-{n}{i}", ns, f"node-{n}", "low", group="batch")
             for n in range(4) for i in range(2)]
    apply(cluster.address, tmp_path, gang_group("batch", ns, 8, "low", whole=True), *batch)
    await eventually(lambda: running_count(api, ns, 8), "the low gang running")

    async with recording(api, ns) as history:
        apply(cluster.address, tmp_path, gang_group("train", ns, 2, "high"),
              *(member(f"w-{i}", ns, "train") for i in range(2)))
        await eventually(lambda: gone(api, ns, [p["metadata"]["name"] for p in batch]), "the low gang gone",
                         within=40)
        pods = await eventually(lambda: all_bound(api, ns, 2), "the high gang bound", within=40)

    assert {p.metadata.name for p in pods} == {"w-0", "w-1"}, scheduler.log()
    assert history.disturbed() == {p["metadata"]["name"] for p in batch}
    assert_never_overcommitted(history)
    group = await api.get("podgroups", "batch", ns)
    assert isinstance(group, objects_pb2.PodGroup)
    target = next(c for c in group.status.conditions if c.type == "DisruptionTarget")
    assert (target.status, target.reason) == ("True", "PreemptionByScheduler")
    assert f"pod group {ns}/train" in target.message


async def test_a_running_gang_of_a_higher_podgroup_priority_is_not_touched(
    cluster: ApiServerProcess, scheduler: SchedulerProcess, api: Client, ns: str, tmp_path: Path
) -> None:
    # The same gang of low pods, but its PodGroup's class outranks the high gang: its pods count with
    # their group's priority, so none is a victim, and the high gang waits with preemption's reason.
    batch = [running(f"batch-{n}{i}", ns, f"node-{n}", "low", group="batch")
             for n in range(4) for i in range(2)]
    apply(cluster.address, tmp_path, gang_group("batch", ns, 8, "top", whole=True), *batch)
    await eventually(lambda: running_count(api, ns, 8), "the low gang running")

    async def reported() -> objects_pb2.PodCondition | None:
        pod = await api.get("pods", "w-0", ns)
        return next((c for c in pod.status.conditions  # type: ignore[attr-defined]
                     if c.type == "PodScheduled" and NOT_ENOUGH_ROOM in c.message), None)

    async with recording(api, ns) as history:
        apply(cluster.address, tmp_path, gang_group("train", ns, 2, "high"),
              *(member(f"w-{i}", ns, "train") for i in range(2)))
        condition = await eventually(reported, "the gang's message with preemption's reason", within=40)

    assert condition.message.startswith(f"pod group {ns}/train: 0/2 pods placeable, minCount 2"), condition
    assert history.disturbed() == set(), scheduler.log()
    for pod in await pods_in(api, ns):
        if pod.metadata.name.startswith("w-"):
            assert not pod.spec.node_name and not pod.status.nominated_node_name
