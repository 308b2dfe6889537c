"""The whole-group cycle of a topology-constrained pod group (KEP-5732): placements per domain, each
simulated and undone, the best feasible one bound with one group bind, none feasible explained per domain
(upstream's schedule_one_podgroup_test.go placement cases and tas_test.go scenarios, in-process)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator

import pytest

from cluster.api import objects_pb2
from scheduler.binding import EXPLANATION_ANNOTATION
from scheduler.queue import ACTIVE, UNSCHEDULABLE
from tests import builders
from tests.builders import ROOMY
from tests.unit.binder_util import running_binder
from tests.unit.test_gang_scheduling import Rig, member, pod_group

RACK = "topology.kubernetes.io/rack"


def rack_node(name: str, rack: str | None, cpu: str = "1") -> objects_pb2.Node:
    labels = {"kubernetes.io/hostname": name}
    if rack is not None:
        labels[RACK] = rack
    return builders.node(name, labels=labels, allocatable={**ROOMY, "cpu": cpu})


def constrained(name: str, min_count: int | None, key: str = RACK) -> objects_pb2.PodGroup:
    """A gang (or, with ``min_count`` None, a basic group) whose pods must share a value of ``key``."""
    group = pod_group(name, min_count or 1)
    if min_count is None:
        group.spec.scheduling_policy.ClearField("gang")
        group.spec.scheduling_policy.basic.SetInParent()
    group.spec.scheduling_constraints.topology.add(key=key)
    return group


def add_racks(rig: Rig, racks: dict[str, int], cpu: str = "1") -> None:
    """``racks``: rack name -> how many 1-pod nodes it has (named r1-0, r1-1, ...)."""
    for rack, count in racks.items():
        for i in range(count):
            rig.handlers.node_handlers()["on_add"](rack_node(f"{rack}-{i}", rack, cpu))


def racks_of(rig: Rig) -> dict[str, str]:
    """Bound pod name -> the rack of its node."""
    return {name: node_name.rsplit("-", 1)[0] for bindings in rig.api.group_binds
            for _, name, node_name in bindings}


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    rig = Rig(nodes=0)
    async with running_binder(rig.binder):
        yield rig


async def test_a_rack_constrained_gang_lands_in_one_rack_with_one_group_bind(rig: Rig) -> None:
    add_racks(rig, {"r1": 3, "r2": 4, "r3": 2})
    rig.add_group(constrained("train", 4))
    rig.gang("train", 4)
    assert await rig.cycles() == 1
    (bindings,) = rig.api.group_binds
    assert {node_name.rsplit("-", 1)[0] for _, _, node_name in bindings} == {"r2"}  # the only rack it fits
    assert rig.api.bound == []
    assert rig.cache.pod_count() == 4  # the chosen placement's members, nothing of the others


async def test_simulations_of_the_other_placements_leave_nothing_behind(rig: Rig) -> None:
    add_racks(rig, {"r1": 4, "r2": 4})
    rig.add_group(constrained("train", 4))
    rig.gang("train", 4)
    await rig.cycles()
    assert len(set(racks_of(rig).values())) == 1
    rig.cache.update_snapshot(rig.snapshot)
    on_nodes = {info.name: len(info.pods) for info in rig.snapshot.node_infos().list()}
    assert sum(on_nodes.values()) == 4  # each member once: the other rack's simulation was undone


async def test_a_gang_too_big_for_every_rack_waits_whole_and_says_why_per_rack(rig: Rig) -> None:
    add_racks(rig, {"r1": 3, "r2": 2})
    rig.add_group(constrained("train", 4))
    rig.gang("train", 4)
    await rig.cycles()
    assert rig.api.group_binds == [] and rig.cache.pod_count() == 0
    names = [f"train-{i}" for i in range(4)]
    assert {rig.where(name) for name in names} == {UNSCHEDULABLE}
    assert {frozenset(rig.queued(name).unschedulable_plugins) for name in names} == {
        frozenset({"GangScheduling", "NodeResourcesFit"})}
    ((_, message, notes),) = rig.recorder.about("PodGroup", "FailedScheduling")
    assert re.fullmatch(r"pod group default/train: no placement fits: "
                        r"rack r1: 3/4 pods placeable, minCount 4: pod train-\d: 0/3 nodes are available: "
                        r"3 Insufficient cpu\.; "
                        r"rack r2: 2/4 pods placeable, minCount 4: pod train-\d: 0/2 nodes are available: "
                        r"2 Insufficient cpu\.", message), message
    assert sorted(json.loads(notes[EXPLANATION_ANNOTATION])["pods"]) == names
    (condition,) = rig.api.groups["default/train"].status.conditions
    assert (condition.status, condition.reason, condition.message) == ("False", "Unschedulable", message)
    for name in names:
        condition = rig.pod_condition(name)
        assert condition is not None and (condition.reason, condition.message) == ("Unschedulable", message)
    assert {m for _, m, _ in rig.recorder.about("Pod", "FailedScheduling")} == {message}

    # A rack that can take the whole gang is an event NodeResourcesFit registered: it goes back and fits.
    rig.clock.advance(20)
    add_racks(rig, {"r3": 4})
    assert {rig.where(name) for name in names} == {ACTIVE}
    await rig.cycles()
    assert set(racks_of(rig).values()) == {"r3"}


async def test_nodes_without_the_label_are_in_no_placement(rig: Rig) -> None:
    add_racks(rig, {"r1": 2})
    for i in range(4):
        rig.handlers.node_handlers()["on_add"](rack_node(f"free-{i}", None))
    rig.add_group(constrained("train", 3))
    rig.gang("train", 3)
    await rig.cycles()
    assert rig.api.group_binds == []
    (condition,) = rig.api.groups["default/train"].status.conditions
    assert condition.message.startswith(
        "pod group default/train: no placement fits: rack r1: 2/3 pods placeable")


async def test_no_node_with_the_label_means_no_placement_until_one_comes(rig: Rig) -> None:
    rig.handlers.node_handlers()["on_add"](rack_node("free-0", None))
    rig.add_group(constrained("train", 1))
    rig.gang("train", 1)
    await rig.cycles()
    assert rig.api.group_binds == []
    (condition,) = rig.api.groups["default/train"].status.conditions
    assert condition.message == "pod group default/train: no placement fits: no node offers one"

    # A node with the label is an event TopologyPlacementGenerator registered: the group goes back and fits.
    rig.clock.advance(20)
    add_racks(rig, {"r1": 1})
    assert rig.where("train-0") == ACTIVE
    await rig.cycles()
    assert racks_of(rig) == {"train-0": "r1"}


async def test_the_placement_holding_more_pods_wins(rig: Rig) -> None:
    # minCount 2 of 4 pods: both racks are feasible; r2 holds all four, r1 only two (PodGroupPodsCount).
    add_racks(rig, {"r1": 2, "r2": 4})
    rig.add_group(constrained("train", 2))
    rig.gang("train", 4)
    await rig.cycles()
    assert racks_of(rig) == {f"train-{i}": "r2" for i in range(4)}


async def test_members_the_chosen_placement_cannot_take_go_back_on_their_own(rig: Rig) -> None:
    add_racks(rig, {"r1": 3})
    rig.add_group(constrained("train", 2))
    rig.gang("train", 4)
    await rig.cycles()
    assert len(racks_of(rig)) == 3
    (unplaced,) = [f"train-{i}" for i in range(4) if f"train-{i}" not in racks_of(rig)]
    assert rig.where(unplaced) == UNSCHEDULABLE


async def test_later_pods_of_an_admitted_gang_join_the_rack_its_pods_are_in(rig: Rig) -> None:
    add_racks(rig, {"r1": 4, "r2": 5})
    rig.add_group(constrained("train", 2))
    rig.gang("train", 2)
    await rig.cycles()
    rig.confirm_bindings()
    (rack,) = set(racks_of(rig).values())
    rig.add_pods(member("train-2", "train"), member("train-3", "train"))
    await rig.cycles()
    rig.confirm_bindings()
    assert set(racks_of(rig).values()) == {rack}
    assert len(racks_of(rig)) == 4


async def test_a_later_pod_that_does_not_fit_the_gangs_rack_waits(rig: Rig) -> None:
    add_racks(rig, {"r1": 2, "r2": 1})
    rig.add_group(constrained("train", 2))
    rig.gang("train", 2)
    await rig.cycles()
    rig.confirm_bindings()
    assert set(racks_of(rig).values()) == {"r1"}
    rig.add_pods(member("train-2", "train"))
    await rig.cycles()
    assert rig.where("train-2") == UNSCHEDULABLE  # r2 has room, but the gang is in r1
    condition = rig.pod_condition("train-2")
    assert condition is not None and condition.message.startswith(
        "pod group default/train: no placement fits: rack r1: 2/3 pods placeable, minCount 2: pod train-2: ")


async def test_a_basic_group_with_a_constraint_is_placed_whole_in_one_rack(rig: Rig) -> None:
    add_racks(rig, {"r1": 2, "r2": 3})
    rig.add_group(constrained("web", None))
    rig.gang("web", 3)
    await rig.cycles()
    assert racks_of(rig) == {"web-0": "r2", "web-1": "r2", "web-2": "r2"}


async def test_a_basic_group_takes_the_rack_that_fits_most_of_it(rig: Rig) -> None:
    # No rack fits all four: a basic group needs one pod placed, and the bigger rack holds more.
    add_racks(rig, {"r1": 1, "r2": 3})
    rig.add_group(constrained("web", None))
    rig.gang("web", 4)
    await rig.cycles()
    assert set(racks_of(rig).values()) == {"r2"} and len(racks_of(rig)) == 3


async def test_a_group_without_a_constraint_is_placed_as_before(rig: Rig) -> None:
    add_racks(rig, {"r1": 2, "r2": 2})
    rig.add_group(pod_group("train", 4))
    rig.gang("train", 4)
    await rig.cycles()
    assert set(racks_of(rig).values()) == {"r1", "r2"}  # spread over both: nothing holds it to one


async def test_the_topology_key_is_any_node_label(rig: Rig) -> None:
    for i, zone in enumerate(["z1", "z1", "z2", "z2", "z2"]):
        node = rack_node(f"n{i}", None)
        node.metadata.labels["topology.kubernetes.io/zone"] = zone
        rig.handlers.node_handlers()["on_add"](node)
    rig.add_group(constrained("train", 3, key="topology.kubernetes.io/zone"))
    rig.gang("train", 3)
    await rig.cycles()
    (bindings,) = rig.api.group_binds
    assert sorted(node_name for _, _, node_name in bindings) == ["n2", "n3", "n4"]


async def test_a_group_already_split_across_racks_is_an_error_retried_after_backoff(rig: Rig) -> None:
    add_racks(rig, {"r1": 2, "r2": 2})
    rig.add_group(constrained("train", 2))
    split = [member("train-0", "train"), member("train-1", "train")]
    split[0].spec.node_name, split[1].spec.node_name = "r1-0", "r2-0"  # bound before the constraint held
    rig.add_pods(*split, member("train-2", "train"))
    await rig.cycles()
    assert rig.api.group_binds == [] and rig.api.bound == []
    condition = rig.pod_condition("train-2")
    assert condition is not None and condition.reason == "SchedulerError"
    assert "more than 1 domain found for pod group default/train: r1, r2" in condition.message
    assert rig.where("train-2") != ACTIVE  # backs off rather than spinning


async def test_a_placement_the_gang_can_no_longer_fit_is_given_up(rig: Rig) -> None:
    """kube-scheduler's early rejection: once a placement's remaining members cannot bring it to
    minCount, they are not tried there; the message still counts every member."""
    add_racks(rig, {"r1": 1, "r2": 2})
    rig.add_group(constrained("train", 4))
    tried: list[str] = []
    run_pre_filter = rig.framework.run_pre_filter

    def counting(state: object, pod: object) -> object:
        tried.append(pod.pod.metadata.name)  # type: ignore[attr-defined]
        return run_pre_filter(state, pod)  # type: ignore[arg-type]

    rig.framework.run_pre_filter = counting  # type: ignore[method-assign]
    rig.gang("train", 4)
    await rig.cycles()
    # r1: one placed, the second fails, two left cannot reach 4; r2: two placed, the third fails.
    assert len(tried) == 2 + 3
    condition = rig.pod_condition("train-0")
    assert condition is not None
    assert re.search(r"rack r1: 1/4 pods placeable, minCount 4: pod train-\d: ", condition.message)
    assert re.search(r"rack r2: 2/4 pods placeable, minCount 4: pod train-\d: ", condition.message)
