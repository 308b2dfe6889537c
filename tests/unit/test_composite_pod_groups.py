"""CompositePodGroups in the scheduler: the index of each PodGroup's parent and each composite's
children, GangScheduling's wait for the tree, and the whole-tree cycle (upstream's cpg_tas_test.go and
gangscheduling PlacementFeasible cases, in-process)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from cluster.api import objects_pb2
from scheduler.framework import PodInfo
from scheduler.framework.pod_groups import PodGroupIndex, composite_policy
from scheduler.queue import ACTIVE, BACKOFF, GATED, UNSCHEDULABLE
from tests import builders
from tests.unit.binder_util import running_binder
from tests.unit.test_gang_scheduling import Rig, member, pod_group
from tests.unit.test_topology_gang_cycle import RACK, add_racks, racks_of

ZONE = "topology.kubernetes.io/zone"


def composite(name: str, min_group_count: int | None, key: str = "",
              parent: str = "") -> objects_pb2.CompositePodGroup:
    """A gang composite (basic with ``min_group_count`` None), constrained to ``key`` when given."""
    spec: dict[str, Any] = {"schedulingPolicy": ({"gang": {"minGroupCount": min_group_count}}
                                                 if min_group_count is not None else {"basic": {}})}
    if key:
        spec["schedulingConstraints"] = {"topology": [{"key": key}]}
    if parent:
        spec["parentCompositePodGroupName"] = parent
    return builders.composite_pod_group(name, spec=spec)


def child(name: str, parent: str, min_count: int | None, key: str = "") -> objects_pb2.PodGroup:
    """A PodGroup of composite ``parent``: a gang, or basic with ``min_count`` None."""
    group = pod_group(name, min_count or 1)
    if min_count is None:
        group.spec.scheduling_policy.ClearField("gang")
        group.spec.scheduling_policy.basic.SetInParent()
    if key:
        group.spec.scheduling_constraints.topology.add(key=key)
    group.spec.parent_composite_pod_group_name = parent
    return group


def add_composite(rig: Rig, created: objects_pb2.CompositePodGroup) -> None:
    rig.api.composites[f"default/{created.metadata.name}"] = created
    rig.handlers.composite_pod_group_handlers()["on_add"](created)


def gate(rig: Rig, name: str) -> str:
    """What GangScheduling's PreEnqueue says of the pod now."""
    status = rig.framework.run_pre_enqueue(PodInfo(rig.api.pods[f"default/{name}"]))
    return "" if status is None else status.message()


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    rig = Rig(nodes=0)
    async with running_binder(rig.binder):
        yield rig


# ------------------------------------------------------------------------------------------- index


def test_the_index_knows_parents_children_and_roots_whatever_arrives_first() -> None:
    index = PodGroupIndex()
    index.set_group(child("a", "mid", 2))
    index.set_group(child("b", "mid", 2))
    index.set_group(pod_group("alone", 2))
    assert index.parent_of("default/a") == "default/mid"
    assert index.parent_of("default/alone") == ""
    assert index.composite_root("default/a") == ("default/mid", "default/mid")  # mid not seen yet
    index.set_composite(composite("mid", 2, parent="top"))
    assert index.composite_root("default/a") == ("default/top", "default/top")
    index.set_composite(composite("top", 1))
    assert index.composite_root("default/a") == ("default/top", "")
    assert index.composite_root("default/alone") == ("", "")
    assert index.composite_children("default/mid") == (["default/a", "default/b"], [])
    assert index.composite_children("default/top") == ([], ["default/mid"])
    assert index.tree_groups("default/top") == ["default/a", "default/b"]
    index.remove_group(child("b", "mid", 2))
    assert index.tree_groups("default/top") == ["default/a"]
    index.remove_composite(composite("mid", 2, parent="top"))
    assert index.composite_children("default/top") == ([], [])


def test_a_composite_policy_is_its_min_group_count_or_one_for_basic_and_its_key() -> None:
    gang = composite_policy(composite("c", 3, RACK))
    assert (gang.min_group_count, gang.topology_key, gang.count_field) == (3, RACK, "minGroupCount")
    basic = composite_policy(composite("c", None))
    assert (basic.min_group_count, basic.topology_key, basic.count_field) == (1, "", "")


# ------------------------------------------------------------------------------------------ gating


async def test_pods_of_a_tree_wait_for_every_composite_above_them_and_for_its_quorum(rig: Rig) -> None:
    add_racks(rig, {"r1": 4})
    rig.add_group(child("pg1", "root", 2))
    rig.add_group(child("pg2", "root", 2))
    rig.add_pods(*(member(f"p{i}", "pg1") for i in (1, 2)))
    assert rig.queue.pending_counts()[GATED] == 2
    assert gate(rig, "p1") == "waiting for CompositePodGroup default/root to be created"
    add_composite(rig, composite("root", 2, RACK))
    assert rig.queue.pending_counts()[GATED] == 2  # pg2 has no pod yet: 1 of 2 children ready
    assert gate(rig, "p1") == "waiting for composite pod group default/root tree to meet quorum"
    rig.add_pods(member("p3", "pg2"), member("p4", "pg2"))
    assert await rig.cycles() == 1
    assert sorted(racks_of(rig)) == ["p1", "p2", "p3", "p4"]


async def test_a_queued_pod_whose_composite_is_deleted_is_not_placed_alone(rig: Rig) -> None:
    add_racks(rig, {"r1": 4})
    root = composite("root", 1)
    add_composite(rig, root)
    rig.add_group(child("pg1", "root", 1))
    rig.add_pods(member("p1", "pg1"))
    rig.handlers.composite_pod_group_handlers()["on_delete"](root)  # after the pod passed the door
    await rig.cycles()
    assert rig.api.group_binds == [] and rig.api.bound == []
    condition = rig.pod_condition("p1")
    assert condition is not None
    assert condition.message == "waiting for CompositePodGroup default/root to be created"
    rig.clock.advance(20)  # past the backoff
    add_composite(rig, root)  # back: the pod is asked again and placed with its tree
    await rig.cycles()
    assert racks_of(rig) == {"p1": "r1"}


async def test_a_child_pod_group_added_last_asks_its_waiting_siblings_again(rig: Rig) -> None:
    add_racks(rig, {"r1": 4})
    add_composite(rig, composite("root", 2))
    rig.add_group(child("pg1", "root", 1))
    rig.add_pods(member("p1", "pg1"), member("p2", "pg2"))  # pg2's pod comes before its PodGroup
    assert rig.queue.pending_counts()[GATED] == 2
    rig.add_group(child("pg2", "root", 1))  # the tree is ready now: p1 too is asked again
    assert await rig.cycles() == 1
    assert sorted(racks_of(rig)) == ["p1", "p2"]


# ------------------------------------------------------------------------------------- tree cycle


async def test_a_rack_constrained_composite_lands_both_child_gangs_in_one_rack(rig: Rig) -> None:
    # Upstream: parent CPG has topology constraints, children do not; schedules on a single rack.
    add_racks(rig, {"r1": 4, "r2": 2})
    add_composite(rig, composite("root", 2, RACK))
    rig.add_group(child("pg1", "root", 2))
    rig.add_group(child("pg2", "root", 2))
    rig.add_pods(*(member(f"p{i}", "pg1" if i <= 2 else "pg2") for i in range(1, 5)))
    assert await rig.cycles() == 1
    (bindings,) = rig.api.group_binds
    assert len(bindings) == 4
    assert set(racks_of(rig).values()) == {"r1"}
    for group in ("pg1", "pg2"):
        (condition,) = rig.api.groups[f"default/{group}"].status.conditions
        assert (condition.status, condition.reason) == ("True", "Scheduled")
    (condition,) = rig.api.composites["default/root"].status.conditions
    assert (condition.type, condition.status, condition.reason) == (
        "CompositePodGroupInitiallyScheduled", "True", "Scheduled")
    assert [name for name, _, _ in rig.recorder.about("CompositePodGroup", "Scheduled")] == ["root"]


async def test_a_tree_too_big_for_any_rack_waits_whole_with_a_per_rack_explanation(rig: Rig) -> None:
    add_racks(rig, {"r1": 3, "r2": 2})
    add_composite(rig, composite("root", 2, RACK))
    rig.add_group(child("pg1", "root", 2))
    rig.add_group(child("pg2", "root", 2))
    rig.add_pods(*(member(f"p{i}", "pg1" if i <= 2 else "pg2") for i in range(1, 5)))
    await rig.cycles()
    assert rig.api.group_binds == [] and rig.api.bound == []
    assert rig.cache.pod_count() == 0  # every simulation undone
    for name in ("p1", "p2", "p3", "p4"):
        assert rig.where(name) == UNSCHEDULABLE
    condition = rig.pod_condition("p3")
    assert condition is not None
    message = condition.message
    assert message.startswith("composite pod group default/root: no placement fits: rack r1: 1/2 groups "
                              "feasible, minGroupCount 2: pod group default/pg2: 1/2 pods placeable")
    assert "; rack r2: 1/2 groups feasible" in message
    for group in ("pg1", "pg2"):
        (condition,) = rig.api.groups[f"default/{group}"].status.conditions
        assert (condition.status, condition.reason, condition.message) == ("False", "Unschedulable", message)
    (condition,) = rig.api.composites["default/root"].status.conditions
    assert (condition.type, condition.status, condition.reason, condition.message) == (
        "CompositePodGroupInitiallyScheduled", "False", "Unschedulable", message)
    assert rig.recorder.about("CompositePodGroup", "FailedScheduling") == [("root", message, {})]
    assert {m for _, m, _ in rig.recorder.about("Pod", "FailedScheduling")} == {message}

    # A rack with room for the tree is an event NodeResourcesFit registered: the tree goes back and fits.
    assert {frozenset(rig.queued(f"p{i}").unschedulable_plugins) for i in range(1, 5)} == {
        frozenset({"GangScheduling", "NodeResourcesFit"})}
    rig.clock.advance(20)
    add_racks(rig, {"r3": 4})
    assert {rig.where(f"p{i}") for i in range(1, 5)} == {ACTIVE}
    await rig.cycles()
    assert set(racks_of(rig).values()) == {"r3"}


async def test_basic_children_that_no_single_rack_fits_together_stay_pending(rig: Rig) -> None:
    # Upstream: remains pending when no single rack can fit all children (basic PodGroups).
    add_racks(rig, {"r1": 1, "r2": 1})
    add_composite(rig, composite("root", 2, RACK))
    rig.add_group(child("pg1", "root", None))
    rig.add_group(child("pg2", "root", None))
    rig.add_pods(member("p1", "pg1"), member("p2", "pg2"))
    await rig.cycles()
    assert rig.api.group_binds == [] and rig.api.bound == []
    assert rig.where("p1") == rig.where("p2") == UNSCHEDULABLE


async def test_a_placed_pod_of_the_tree_decides_its_rack(rig: Rig) -> None:
    # Upstream: preexisting pod belonging to the hierarchy determines the topology.
    add_racks(rig, {"r1": 4, "r2": 4})
    add_composite(rig, composite("root", 2, RACK))
    rig.add_group(child("pg1", "root", 2))
    rig.add_group(child("pg2", "root", 2))
    existing = member("existing", "pg1")
    existing.spec.node_name = "r2-3"
    rig.add_pods(existing)
    rig.add_pods(member("p1", "pg1"), member("p2", "pg2"), member("p3", "pg2"))
    assert await rig.cycles() == 1
    assert racks_of(rig) == {"p1": "r2", "p2": "r2", "p3": "r2"}


async def test_each_child_keeps_its_own_key_inside_the_composites_domain(rig: Rig) -> None:
    # Upstream: parent CPG and child PGs both have topology constraints (zone and rack).
    for name, zone, rack in (("z1a-0", "z1", "a"), ("z1b-0", "z1", "b"), ("z2a-0", "z2", "a"),
                             ("z2a-1", "z2", "a")):
        rig.handlers.node_handlers()["on_add"](builders.node(
            name, labels={"kubernetes.io/hostname": name, ZONE: zone, RACK: f"{zone}{rack}"},
            allocatable={**builders.ROOMY, "cpu": "2"}))
    existing = builders.pod("existing", node_name="z2a-0", cpu="1")
    rig.add_pods(existing)  # zone z2 fits 3 pods, not 4
    add_composite(rig, composite("root", 2, ZONE))
    rig.add_group(child("pg1", "root", 2, RACK))
    rig.add_group(child("pg2", "root", 2, RACK))
    rig.add_pods(*(member(f"p{i}", "pg1" if i <= 2 else "pg2") for i in range(1, 5)))
    assert await rig.cycles() == 1
    (bindings,) = rig.api.group_binds
    nodes = {name: node for _, name, node in bindings}
    assert set(nodes.values()) <= {"z1a-0", "z1b-0"}
    assert nodes["p1"] == nodes["p2"] and nodes["p3"] == nodes["p4"]  # each child in one rack


def zone_node(name: str, zone: str, rack: str, *, tainted: bool = False) -> objects_pb2.Node:
    """A 2-cpu node of ``zone`` and ``rack`` (rack names repeat across zones, as upstream's tests)."""
    return builders.node(name, labels={"kubernetes.io/hostname": name, ZONE: zone, RACK: rack},
                         allocatable={**builders.ROOMY, "cpu": "2"},
                         taints=[{"key": "taint", "effect": "NoSchedule"}] if tainted else ())


async def test_a_child_without_a_key_uses_the_composites_domain_and_its_preference_does_not_win(
        rig: Rig) -> None:
    # Upstream: parent CPG and only one child PG has topology constraints; the other child uses the
    # parent's topology. pg1 must take node1 (tainted, tolerated by pg1 only) for the tree to fit.
    for created in (zone_node("node1", "z1", "r1", tainted=True), zone_node("node2", "z1", "r2"),
                    zone_node("node3", "z1", "r3"), zone_node("node4", "z2", "r1"),
                    zone_node("node5", "z2", "r2")):
        rig.handlers.node_handlers()["on_add"](created)
    rig.add_pods(*(builders.pod(f"existing-{n}", node_name=n, cpu="1") for n in ("node2", "node3", "node5")))
    add_composite(rig, composite("root", 2, ZONE))
    rig.add_group(child("pg1", "root", 2, RACK))
    rig.add_group(child("pg2", "root", 2))
    tolerating = [member(f"p{i}", "pg1") for i in (1, 2)]
    for created in tolerating:
        created.spec.tolerations.add(key="taint")
    preferring = [member(f"p{i}", "pg2") for i in (3, 4)]
    for created in preferring:
        term = created.spec.affinity.node_affinity.preferred_during_scheduling_ignored_during_execution.add(
            weight=100)
        term.preference.match_fields.add(key="metadata.name", operator="In", values=["node4"])
    rig.add_pods(*tolerating, *preferring)
    assert await rig.cycles() == 1
    (bindings,) = rig.api.group_binds
    nodes = {name: node for _, name, node in bindings}
    assert nodes["p1"] == nodes["p2"] == "node1"
    assert {nodes["p3"], nodes["p4"]} == {"node2", "node3"}  # zone z1, not the preferred node4


async def test_of_several_feasible_domains_the_one_holding_more_of_the_tree_wins(rig: Rig) -> None:
    # PodGroupPodsCount on the tree's proposed assignments (findBestCompositePodGroupPlacement).
    add_racks(rig, {"r1": 2, "r2": 4})
    add_composite(rig, composite("root", 1, RACK))
    rig.add_group(child("pg1", "root", 2))
    rig.add_group(child("pg2", "root", 2))
    rig.add_pods(*(member(f"p{i}", "pg1" if i <= 2 else "pg2") for i in range(1, 5)))
    assert await rig.cycles() == 1
    assert racks_of(rig) == dict.fromkeys(("p1", "p2", "p3", "p4"), "r2")


async def test_a_gang_composite_binds_the_feasible_children_when_min_group_count_is_met(rig: Rig) -> None:
    # GangScheduling's PlacementFeasible: minGroupCount 1 of 2; pg2 (3 pods, 2 nodes left) cannot fit.
    add_racks(rig, {"r1": 4})
    add_composite(rig, composite("root", 1))
    rig.add_group(child("pg1", "root", 2))
    rig.add_group(child("pg2", "root", 3))
    rig.add_pods(member("a1", "pg1"), member("a2", "pg1"),
                 *(member(f"b{i}", "pg2") for i in range(3)))
    await rig.cycles()
    assert sorted(racks_of(rig)) == ["a1", "a2"]
    assert {rig.where(f"b{i}") for i in range(3)} == {UNSCHEDULABLE}
    # b0 and b1 were placed, then let go with their group; b2 found no node: room asks them all again.
    assert [sorted(rig.queued(f"b{i}").unschedulable_plugins) for i in range(3)] == [
        ["GangScheduling", "NodeResourcesFit"], ["GangScheduling", "NodeResourcesFit"], ["NodeResourcesFit"]]


async def test_a_nested_composite_is_placed_inside_its_parents_rack(rig: Rig) -> None:
    # A tree of depth 2: root (rack) -> mid (basic) -> pg1, and root -> pg2 directly.
    add_racks(rig, {"r1": 3, "r2": 4})
    add_composite(rig, composite("root", 2, RACK))
    add_composite(rig, composite("mid", None, parent="root"))
    rig.add_group(child("pg1", "mid", 2))
    rig.add_group(child("pg2", "root", 2))
    rig.add_pods(*(member(f"p{i}", "pg1" if i <= 2 else "pg2") for i in range(1, 5)))
    assert await rig.cycles() == 1
    (bindings,) = rig.api.group_binds
    assert len(bindings) == 4 and set(racks_of(rig).values()) == {"r2"}
    assert {c.type: c.status for name in ("root", "mid")
            for c in rig.api.composites[f"default/{name}"].status.conditions} == {
        "CompositePodGroupInitiallyScheduled": "True"}


async def test_a_loop_of_parents_is_an_error_not_an_endless_descent(rig: Rig) -> None:
    add_racks(rig, {"r1": 2})
    add_composite(rig, composite("a", 1, parent="b"))
    add_composite(rig, composite("b", 1, parent="a"))
    rig.add_group(child("pg1", "a", 1))
    rig.add_pods(member("p1", "pg1"))
    assert rig.where("p1") == ACTIVE  # the tree's quorum is met: pg1 under "a"
    await rig.loop.schedule_one()
    assert rig.api.group_binds == [] and rig.where("p1") == BACKOFF  # an error, retried after backoff
    condition = rig.pod_condition("p1")
    assert condition is not None and "is its own ancestor" in condition.message, condition


async def test_pods_of_groups_without_a_composite_are_placed_as_before(rig: Rig) -> None:
    add_racks(rig, {"r1": 2})
    rig.add_group(pod_group("plain", 2))
    rig.gang("plain", 2)
    assert await rig.cycles() == 1
    assert len(rig.api.group_binds) == 1
