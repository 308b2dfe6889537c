"""CompositePodGroups with a real `podsched scheduler` process against a real API server process: a
CompositePodGroup constrained to topology.kubernetes.io/rack with two child gangs lands both children in
the one rack with room for the whole tree, in one group bind, and its CompositePodGroupInitiallyScheduled
condition turns True; a tree too big for any rack (though not for the cluster) waits whole, every pod
with the per-rack explanation, the composite's condition False.

The store is irrelevant to placements: the module runs on SQLite only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from google.protobuf import json_format

from cluster.api import kinds, objects_pb2
from cluster.client import Client
from cluster.launcher.process import ApiServerProcess, SchedulerProcess
from tests import builders
from tests.integration.conftest import own_apiserver_with
from tests.integration.test_scheduler import (
    all_bound,
    eventually,
    no_node_overcommitted,
    pods_in,
    running_scheduler,
)

RACK = "topology.kubernetes.io/rack"
#: rack r1: two nodes of 2 cpu (four 1-cpu pods); rack r2: one node of 3 cpu.
NODES = {"r1-a": "r1", "r1-b": "r1", "r2-a": "r2"}


def node(name: str, rack: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {RACK: rack}},
            "status": {"allocatable": {"cpu": "3" if rack == "r2" else "2", "memory": "8Gi", "pods": "110"}}}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    documents = [node(name, rack) for name, rack in NODES.items()]
    with own_apiserver_with("sqlite", tmp_path_factory.mktemp("composite-pod-groups"), *documents) as server:
        yield server


@pytest.fixture(scope="module")
def scheduler(cluster: ApiServerProcess) -> Iterator[SchedulerProcess]:
    with running_scheduler(cluster.address) as process:
        yield process


async def create_tree(api: Client, ns: str, pods_per_child: int) -> None:
    """Workload "job", its CompositePodGroup "job" (gang, minGroupCount 2, one rack) and two child gangs
    "a" and "b" of ``pods_per_child`` 1-cpu pods each."""
    child_templates = [{"name": name, "schedulingPolicy": {"gang": {"minCount": pods_per_child}}}
                       for name in ("a", "b")]
    workload = {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "Workload",
                "metadata": {"name": "job", "namespace": ns},
                "spec": {"compositePodGroupTemplates": [{
                    "name": "job", "schedulingPolicy": {"gang": {"minGroupCount": 2}},
                    "schedulingConstraints": {"topology": [{"key": RACK}]},
                    "podGroupTemplates": child_templates}]}}
    await api.create(json_format.ParseDict(workload, objects_pb2.Workload()))
    await api.create(builders.composite_pod_group("job", ns, spec={
        "workloadRef": {"workloadName": "job", "templateName": "job"},
        "schedulingPolicy": {"gang": {"minGroupCount": 2}},
        "schedulingConstraints": {"topology": [{"key": RACK}]},
    }))
    for name in ("a", "b"):
        group = builders.pod_group(name, ns, kind="PodGroup", min_count=pods_per_child)
        group.spec.workload_ref.workload_name = "job"
        group.spec.workload_ref.template_name = name
        group.spec.parent_composite_pod_group_name = "job"
        await api.create(group)
        for index in range(pods_per_child):
            member = builders.pod(f"{name}-{index}", ns, cpu="1", memory="1Gi", image=builders.IMAGE)
            member.spec.scheduling_group.pod_group_name = name
            await api.create(member)


async def composite_condition(api: Client, ns: str, status: str) -> objects_pb2.Condition | None:
    composite = await api.get(kinds.COMPOSITE_POD_GROUP, "job", ns)
    return next((c for c in composite.status.conditions  # type: ignore[attr-defined]
                 if c.type == "CompositePodGroupInitiallyScheduled" and c.status == status), None)


async def test_both_child_gangs_land_in_the_one_rack_with_room_for_the_tree(
    api: Client, ns: str, scheduler: SchedulerProcess
) -> None:
    await create_tree(api, ns, 2)
    pods = await eventually(lambda: all_bound(api, ns, 4), "the four pods of the tree bound")
    assert {NODES[p.spec.node_name] for p in pods} == {"r1"}  # r2 holds three pods: one child only
    assert len({p.metadata.resource_version for p in pods}) == 1  # one BindGroup transaction
    await no_node_overcommitted(api)
    condition = await eventually(lambda: composite_condition(api, ns, "True"),
                                 "the composite's CompositePodGroupInitiallyScheduled condition")
    assert condition.reason == "Scheduled"


async def test_a_tree_too_big_for_any_rack_waits_whole_with_the_reason_per_rack(
    api: Client, ns: str, scheduler: SchedulerProcess
) -> None:
    await create_tree(api, ns, 3)  # six pods: the cluster has room for seven, no rack for six
    reason = re.compile(
        rf"composite pod group {ns}/job: no placement fits: "
        rf"rack r1: 1/2 groups feasible, minGroupCount 2: pod group {ns}/b: 1/3 pods placeable, "
        rf"minCount 3: pod b-\d: 0/2 nodes are available: 2 Insufficient cpu\.; "
        rf"rack r2: 1/2 groups feasible, minGroupCount 2: pod group {ns}/b: 0/3 pods placeable, "
        rf"minCount 3: pod b-\d: 0/1 nodes are available: 1 Insufficient cpu\."
    )

    async def reported() -> list[objects_pb2.Pod] | None:
        tree = await pods_in(api, ns)
        conditions = [next((c for c in p.status.conditions if c.type == "PodScheduled"), None) for p in tree]
        if len(tree) == 6 and all(c is not None and reason.fullmatch(c.message) for c in conditions):
            return tree
        return None

    tree = await eventually(reported, "every pod's PodScheduled=False with the reason per rack")
    assert all(not p.spec.node_name for p in tree)
    condition = await eventually(lambda: composite_condition(api, ns, "False"),
                                 "the composite's condition False")
    assert condition.reason == "Unschedulable" and reason.fullmatch(condition.message), condition.message
    for name in ("a", "b"):
        group = await api.get(kinds.POD_GROUP, name, ns)
        (scheduled,) = group.status.conditions  # type: ignore[attr-defined]
        assert (scheduled.status, scheduled.reason) == ("False", "Unschedulable")
