"""The rules around calling extenders in preemption and binding (kube-scheduler's callExtenders and
extendersBinding); filter and prioritize are covered through schedule_pod in test_algorithm_extenders."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from scheduler.extender.calls import (
    bind_with_extenders,
    find_nodes_that_pass_extenders,
    preempt_with_extenders,
)
from scheduler.extender.interface import ExtenderError, Victims
from scheduler.framework import PodInfo, Status
from tests.unit.extender_fakes import FakeExtender
from tests.unit.framework_fakes import Snapshot, node, pod

VICTIM = PodInfo(pod("victim").pod)
CANDIDATES = {"n1": Victims((VICTIM,), 0), "n2": Victims((VICTIM,), 1)}
NODES = Snapshot([node("n1"), node("n2")])


def keep(*names: str) -> FakeExtender:
    return FakeExtender(name=f"http://keep-{'-'.join(names)}/x",
                        preempt=lambda victims: {n: v for n, v in victims.items() if n in names})


def emptied(victims: Mapping[str, Victims]) -> dict[str, Victims]:
    return {name: Victims((), 0) for name in victims}


async def test_each_preemption_extender_sees_what_the_previous_one_left() -> None:
    first, second = keep("n2"), keep("n1", "n2")
    kept = await preempt_with_extenders([first, second], pod("p").pod, dict(CANDIDATES), NODES)
    assert kept == {"n2": CANDIDATES["n2"]}
    assert second.calls == [("preempt", ["n2"])]


async def test_once_no_candidate_is_left_later_extenders_are_not_asked() -> None:
    later = keep("n1")
    assert await preempt_with_extenders([keep(), later], pod("p").pod, dict(CANDIDATES), NODES) == {}
    assert later.calls == []


async def test_extenders_without_preemption_or_not_interested_are_skipped() -> None:
    no_verb = FakeExtender()
    uninterested = FakeExtender(preempt=lambda victims: {}, interested=lambda p: False)
    kept = await preempt_with_extenders([no_verb, uninterested], pod("p").pod, dict(CANDIDATES), NODES)
    assert kept == CANDIDATES
    assert no_verb.calls == [] and uninterested.calls == []


async def test_a_failing_preemption_extender_is_skipped_only_when_ignorable() -> None:
    broken = FakeExtender(name="http://b/x", preempt=lambda victims: {}, error="code 500")
    with pytest.raises(ExtenderError, match="code 500"):
        await preempt_with_extenders([broken], pod("p").pod, dict(CANDIDATES), NODES)
    broken.ignorable = True
    kept = await preempt_with_extenders([broken, keep("n1")], pod("p").pod, dict(CANDIDATES), NODES)
    assert kept == {"n1": CANDIDATES["n1"]}


async def test_a_node_kept_without_victims_fails_preemption_unless_the_extender_is_ignorable() -> None:
    strict = FakeExtender(name="http://s/x", preempt=emptied)
    with pytest.raises(ExtenderError, match='expected at least one victim pod on node "n1"'):
        await preempt_with_extenders([strict], pod("p").pod, dict(CANDIDATES), NODES)
    lenient = FakeExtender(name="http://l/x", preempt=emptied, ignorable=True)
    assert await preempt_with_extenders([lenient], pod("p").pod, dict(CANDIDATES), NODES) == {}


async def test_the_first_interested_binder_binds() -> None:
    uninterested = FakeExtender(binds=True, interested=lambda p: False)
    binder = FakeExtender(binds=True)
    assert await bind_with_extenders([FakeExtender(), uninterested, binder], pod("p").pod, "n1")
    assert binder.bound == [("p", "n1")] and uninterested.calls == []


async def test_without_a_binder_for_the_pod_the_default_binder_binds() -> None:
    assert not await bind_with_extenders([FakeExtender()], pod("p").pod, "n1")


async def test_a_failing_binder_fails_the_binding_unless_ignorable() -> None:
    broken = FakeExtender(name="http://b/x", binds=True, error="code 503")
    with pytest.raises(ExtenderError, match="code 503"):
        await bind_with_extenders([broken], pod("p").pod, "n1")
    broken.ignorable = True
    assert not await bind_with_extenders([broken], pod("p").pod, "n1")


async def test_a_reason_added_to_a_shared_status_stays_on_its_node() -> None:
    """Filter plugins may give many nodes one Status object (NodeResourcesFit does, per verdict): an
    extender naming a node it was not sent adds its reason to that node's status alone."""
    shared = Status.unschedulable("Insufficient cpu").with_plugin("NodeResourcesFit")
    statuses = {"n1": shared, "n2": shared}
    extender = FakeExtender(failed={"n1": "no gpu"})
    feasible = await find_nodes_that_pass_extenders([extender], pod("web").pod, [node("n3")], statuses)
    assert [n.name for n in feasible] == ["n3"]
    assert statuses["n1"].reasons == ("Insufficient cpu", "no gpu (extender http://fake/ext)")
    assert statuses["n2"].reasons == ("Insufficient cpu",) and shared.reasons == ("Insufficient cpu",)
