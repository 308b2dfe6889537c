"""schedule_pod with extenders: they filter after the plugins, add their weighted scores, and their
failures fail the attempt unless ignorable (kube-scheduler's findNodesThatPassExtenders and
prioritizeNodes)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduler.algorithm import ScheduleFitError, ScheduleResult, SchedulingError, schedule_pod
from scheduler.framework import Code, CycleState, Status
from tests.unit.extender_fakes import FakeExtender
from tests.unit.framework_fakes import NodeFilter, Scorer, Snapshot, build, node, pod

URL = "http://127.0.0.1:1/gpu"


async def run(
    fw: Any, snapshot: Snapshot, extenders: list[FakeExtender], incoming: Any = None
) -> ScheduleResult:
    return await schedule_pod(fw, CycleState(), incoming or pod("p"), snapshot,
                              percentage_of_nodes_to_score=None, rng=random.Random(0), start_index=0,
                              extenders=extenders)


def cluster(count: int) -> Snapshot:
    return Snapshot([node(f"n{i}") for i in range(count)])


async def test_extenders_see_only_the_nodes_the_plugins_left() -> None:
    snap = cluster(4)
    plugins = build(NodeFilter(reject={"n0": Status.unschedulable("Insufficient cpu")}), snapshot=snap)
    first = FakeExtender(name=URL, failed={"n1": "no GPU"})
    second = FakeExtender(name="http://other/x")
    result = await run(plugins, snap, [first, second])
    assert first.calls == [("filter", ["n1", "n2", "n3"])]
    assert second.calls == [("filter", ["n2", "n3"])]
    assert result.suggested_host in ("n2", "n3") and result.feasible_nodes == 2


async def test_without_score_plugins_an_extender_filter_still_sees_every_feasible_node() -> None:
    # The first node that fits would do only if nobody could veto it afterwards.
    snap = cluster(3)
    extender = FakeExtender(failed={"n0": "no", "n1": "no"})
    result = await run(build(NodeFilter(), snapshot=snap), snap, [extender])
    assert extender.calls == [("filter", ["n0", "n1", "n2"])]
    assert result.suggested_host == "n2"


async def test_the_fit_error_names_the_extender_and_keeps_unresolvable_nodes_apart() -> None:
    snap = cluster(3)
    plugins = build(NodeFilter(reject={"n0": Status.unschedulable("Insufficient cpu")}), snapshot=snap)
    extender = FakeExtender(name=URL, failed={"n1": "node has no GPU", "n2": "overridden"},
                            unresolvable={"n2": "GPU driver missing"})
    with pytest.raises(ScheduleFitError) as caught:
        await run(plugins, snap, [extender])
    assert caught.value.message() == (
        "0/3 nodes are available: 1 GPU driver missing (extender http://127.0.0.1:1/gpu), "
        "1 Insufficient cpu, 1 node has no GPU (extender http://127.0.0.1:1/gpu)."
    )
    statuses = caught.value.diagnosis.node_to_status
    assert statuses["n1"].code is Code.UNSCHEDULABLE
    assert statuses["n2"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert statuses["n2"].plugin == f"extender {URL}"
    # The explanation groups by who said no: the reason does not name the extender a second time.
    groups = {(g.plugin, g.reason) for g in caught.value.explanation.value.filtered}
    assert (f"extender {URL}", "node has no GPU") in groups
    # Only plugins' events requeue a pod; an extender registers none.
    assert caught.value.diagnosis.unschedulable_plugins == {"NodeFilter"}


async def test_a_failing_extender_fails_the_attempt_unless_it_is_ignorable() -> None:
    snap = cluster(2)
    broken = FakeExtender(name=URL, error="connection refused")
    with pytest.raises(SchedulingError) as caught:
        await run(build(NodeFilter(), snapshot=snap), snap, [broken])
    assert caught.value.status.code is Code.ERROR
    assert caught.value.status.message() == f"extender {URL}: filter failed: connection refused"

    ignorable = FakeExtender(name=URL, error="connection refused", ignorable=True)
    after = FakeExtender(name="http://after/x", failed={"n0": "no"})
    result = await run(build(NodeFilter(), snapshot=snap), snap, [ignorable, after])
    assert result.suggested_host == "n1"
    assert after.calls == [("filter", ["n0", "n1"])]


async def test_pods_an_extender_is_not_interested_in_never_reach_it() -> None:
    snap = cluster(2)
    extender = FakeExtender(failed={"n0": "no"}, scores={"n0": 10}, interested=lambda p: False)
    result = await run(build(NodeFilter(), Scorer("S", {"n0": 50}), snapshot=snap), snap, [extender])
    assert extender.calls == []
    assert result.suggested_host == "n0"


async def test_extender_scores_are_scaled_weighted_and_added_to_the_plugins() -> None:
    snap = cluster(3)
    # The plugin prefers n0 by 30 points; the extender's 4 x 10 (scale) x 2 (weight) = 80 for n2 wins.
    scorer = Scorer("S", {"n0": 30, "n1": 0, "n2": 0})
    extender = FakeExtender(name=URL, filters=False, scores={"n2": 4, "n1": 1}, weight=2)
    result = await run(build(scorer, snapshot=snap), snap, [extender])
    assert result.suggested_host == "n2"
    assert extender.calls == [("prioritize", ["n0", "n1", "n2"])]
    best = result.explanation.value.top_nodes[0]
    assert (best.node, best.total) == ("n2", 80)
    assert best.plugins[f"extender {URL}"] == 80
    assert result.explanation.value.score_weights[f"extender {URL}"] == 2


async def test_a_failing_prioritizer_is_ignored() -> None:
    snap = cluster(2)
    broken = FakeExtender(name=URL, filters=False, scores={"n1": 10}, error="timed out after 1s")
    working = FakeExtender(name="http://ok/x", filters=False, scores={"n1": 1})
    result = await run(build(Scorer("S", {"n0": 5}), snapshot=snap), snap, [broken, working])
    assert [verb for verb, _ in broken.calls] == ["prioritize"]
    assert result.suggested_host == "n1"  # 5 for n0 against 1 x 10 x 1 for n1


async def test_an_extender_can_turn_down_the_nominated_node() -> None:
    snap = cluster(3)
    extender = FakeExtender(failed={"n1": "reserved"})
    result = await run(build(NodeFilter(), snapshot=snap), snap, [extender], pod("p", nominated="n1"))
    assert extender.calls[0] == ("filter", ["n1"])
    assert extender.calls[1] == ("filter", ["n0", "n1", "n2"])
    assert result.suggested_host in ("n0", "n2")
