"""schedule_pod: kube-scheduler's schedulePod with fake plugins: how many nodes are filtered, where filtering
starts, the nominated node first, tie-breaking, and FitError messages."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.algorithm import (
    NoNodesAvailable,
    ScheduleFitError,
    SchedulingError,
    num_feasible_nodes_to_find,
    schedule_pod,
    select_host,
)
from scheduler.framework import Code, CycleState, FitError, NodeInfo, PodInfo, PreFilterResult, Status
from tests.unit.framework_fakes import NodeFilter, Nominator, Scorer, Snapshot, build, node, pod

TAINT = "node(s) had untolerated taint {dedicated: gpu}"


@pytest.mark.parametrize(
    ("nodes", "percentage", "expected"),
    [
        (0, None, 0),
        (50, None, 50),
        (99, None, 99),
        (99, 10, 99),
        (100, None, 100),  # 50% of 100 is 50, but never fewer than 100
        (1000, None, 420),  # 50 - 1000/125 = 42%
        (1000, 0, 420),  # 0 means the adaptive rule too
        (5000, None, 500),  # 50 - 40 = 10%
        (5999, None, 299),  # 50 - 47 = 3%, floored at 5%
        (20000, None, 1000),
        (1000, 30, 300),
        (1000, 5, 100),
        (1000, 100, 1000),
    ],
    ids=lambda v: str(v),
)
def test_num_feasible_nodes_to_find(nodes: int, percentage: int | None, expected: int) -> None:
    assert num_feasible_nodes_to_find(nodes, percentage) == expected


def run(
    fw: Any,
    snapshot: Snapshot,
    incoming: Any = None,
    *,
    start: int = 0,
    seed: int = 0,
    percentage: int | None = None,
) -> Any:
    return asyncio.run(schedule_pod(
        fw,
        CycleState(),
        incoming or pod("p"),
        snapshot,
        percentage_of_nodes_to_score=percentage,
        rng=random.Random(seed),
        start_index=start,
    ))


def cluster(count: int) -> Snapshot:
    return Snapshot([node(f"n{i}") for i in range(count)])


def test_no_nodes_is_its_own_error() -> None:
    with pytest.raises(NoNodesAvailable, match=r"^no nodes available to schedule pods$"):
        run(build(NodeFilter()), Snapshot([]))


def test_filtering_starts_where_the_last_attempt_stopped_and_stops_when_enough_fit() -> None:
    snap = cluster(200)
    filt = NodeFilter(reject={"n160": Status.unschedulable("Too many pods")})
    fw = build(filt, Scorer("S", {}), snapshot=snap)
    result = run(fw, snap, start=150)
    # 200 nodes: 49% is 98, raised to 100 feasible nodes; one failure on the way makes 101 evaluated.
    assert filt.filtered == [f"n{i}" for i in [*range(150, 200), *range(0, 51)]]
    assert (result.feasible_nodes, result.evaluated_nodes) == (100, 101)
    assert result.next_start_index == (150 + 101) % 200


def test_an_explicit_percentage_is_used_and_a_small_cluster_is_filtered_whole() -> None:
    snap = cluster(1000)
    filt = NodeFilter()
    result = run(build(filt, Scorer("S", {}), snapshot=snap), snap, percentage=30, start=999)
    assert len(filt.filtered) == 300 and filt.filtered[:2] == ["n999", "n0"]
    assert result.next_start_index == (999 + 300) % 1000
    snap = cluster(20)
    filt = NodeFilter()
    result = run(build(filt, Scorer("S", {}), snapshot=snap), snap, percentage=10, start=7)
    assert len(filt.filtered) == 20 and result.next_start_index == 7


def test_a_start_index_beyond_a_shrunk_cluster_wraps() -> None:
    snap = cluster(3)
    filt = NodeFilter()
    run(build(filt, Scorer("S", {}), snapshot=snap), snap, start=7)
    assert filt.filtered == ["n1", "n2", "n0"]


def test_without_score_plugins_the_first_node_that_fits_is_taken() -> None:
    snap = cluster(10)
    filt = NodeFilter(reject={"n4": Status.unschedulable("Too many pods")})
    result = run(build(filt, snapshot=snap), snap, start=4)
    assert filt.filtered == ["n4", "n5"]
    assert (result.suggested_host, result.evaluated_nodes, result.next_start_index) == ("n5", 2, 6)


def test_the_nominated_node_is_tried_first_and_taken_if_it_fits() -> None:
    snap = cluster(10)
    filt = NodeFilter()
    scorer = Scorer("S", {"n1": 100})
    result = run(build(filt, scorer, snapshot=snap), snap, pod("p", nominated="n7"), start=3)
    assert result.suggested_host == "n7"
    assert filt.filtered == ["n7"] and scorer.scored == []
    assert (result.evaluated_nodes, result.feasible_nodes, result.next_start_index) == (1, 1, 3)


@pytest.mark.parametrize(
    "nominated", ["n7", "gone"], ids=["nominated-node-does-not-fit", "nominated-node-gone"]
)
def test_otherwise_every_node_is_searched(nominated: str) -> None:
    snap = cluster(10)
    filt = NodeFilter(reject={"n7": Status.unschedulable("Insufficient cpu")})
    result = run(build(filt, Scorer("S", {"n2": 100}), snapshot=snap), snap, pod("p", nominated=nominated))
    assert result.suggested_host == "n2"
    assert filt.filtered.count("n7") == (2 if nominated == "n7" else 1)


def test_filter_runs_with_nominated_pods() -> None:
    class NoNominees(NodeFilter):
        def filter(self, state: Any, p: Any, node_info: Any) -> Status | None:
            return Status.unschedulable("Too many pods") if node_info.pods else None

    snap = cluster(3)
    fw = build(
        NoNominees(),
        Scorer("S", {}),
        snapshot=snap,
        nominator=Nominator({"n0": [pod("big", priority=100)], "n1": [pod("small", priority=-1)]}),
    )
    result = run(fw, snap, pod("p", priority=10))
    assert result.feasible_nodes == 2 and result.suggested_host in ("n1", "n2")


def test_one_feasible_node_is_chosen_without_scoring() -> None:
    snap = cluster(3)
    scorer = Scorer("S", {})
    filt = NodeFilter(
        reject={"n0": Status.unschedulable("Insufficient cpu"), "n2": Status.unschedulable("x")}
    )
    result = run(build(filt, scorer, snapshot=snap), snap)
    assert (result.suggested_host, result.feasible_nodes, result.evaluated_nodes) == ("n1", 1, 3)
    assert scorer.scored == []


def test_the_highest_total_wins() -> None:
    snap = cluster(4)
    fw = build(
        NodeFilter(),
        Scorer("A", {"n0": 10, "n3": 50}),
        Scorer("B", {"n0": 60, "n2": 90}),
        weights={"A": 2, "B": 1},
        snapshot=snap,
    )
    result = run(fw, snap)
    # n0: 10*2 + 60 = 80; n2: 90; n3: 50*2 = 100.
    assert result.suggested_host == "n3"
    top = result.explanation.value.top_nodes
    assert [(n.node, n.total, dict(n.plugins)) for n in top[:2]] == [
        ("n3", 100, {"A": 100, "B": 0}),
        ("n2", 90, {"A": 0, "B": 90}),
    ]


def test_ties_are_broken_at_random_with_the_seeded_rng() -> None:
    snap = cluster(4)
    fw = build(NodeFilter(), Scorer("S", {"n0": 5, "n1": 7, "n2": 7, "n3": 7}), snapshot=snap)
    chosen = Counter(run(fw, snap, seed=seed).suggested_host for seed in range(300))
    assert set(chosen) == {"n1", "n2", "n3"}
    assert all(70 <= count <= 130 for count in chosen.values()), chosen
    assert run(fw, snap, seed=42).suggested_host == run(fw, snap, seed=42).suggested_host


def test_select_host_is_reservoir_sampling_over_the_best() -> None:
    names, totals = ["a", "b", "c", "d"], [1, 9, 3, 9]
    # The second tie replaces the candidate when randrange(2) == 0.
    rng = random.Random()
    rng.randrange = lambda n: 0  # type: ignore[method-assign]
    assert select_host(names, totals, rng) == "d"
    rng.randrange = lambda n: n - 1  # type: ignore[method-assign]
    assert select_host(names, totals, rng) == "b"
    assert select_host(["only"], [0], rng) == "only"


def reservoir_winner(names: Sequence[str], totals: Sequence[int], rng: random.Random) -> str:
    """``select_host`` node by node with ``rng.randrange``, as kube-scheduler's selectHost: the reference."""
    best, selected, ties = totals[0], 0, 1
    for i in range(1, len(totals)):
        if totals[i] > best:
            best, selected, ties = totals[i], i, 1
        elif totals[i] == best:
            ties += 1
            if rng.randrange(ties) == 0:
                selected = i
    return names[selected]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=300), st.integers(0, 2**32))
def test_select_host_draws_as_the_node_by_node_reference(totals: list[int], seed: int) -> None:
    names = [f"n{i}" for i in range(len(totals))]
    fast, reference = random.Random(seed), random.Random(seed)
    assert select_host(names, totals, fast) == reservoir_winner(names, totals, reference)
    assert fast.getstate() == reference.getstate()  # the same draws: the next cycles see the same stream


def test_a_tie_order_gives_ties_to_the_node_placed_first_and_never_draws() -> None:
    names, totals = ["a", "b", "c", "d", "e"], [1, 9, 3, 9, 9]
    rng = random.Random()
    rng.randrange = None  # type: ignore[assignment,method-assign]  # a draw would fail
    assert select_host(names, totals, rng, {"d": 0, "b": 1, "e": 2, "a": 3}) == "d"
    assert select_host(names, totals, rng, {"b": 5, "e": 2, "a": 0}) == "e"
    # Nodes the order does not place come after the placed ones, by name.
    assert select_host(names, totals, rng, {"a": 0}) == "b"
    assert select_host(names, totals, rng, {}) == "b"
    # A lower total never wins, however early it is placed.
    assert select_host(names, totals, rng, {"a": 0, "c": 1}) == "b"


def tie_order_winner(names: Sequence[str], totals: Sequence[int], tie_order: dict[str, int]) -> str:
    """``select_host`` with a tie order, node by node: the reference."""
    best = max(totals)
    return min((name for name, total in zip(names, totals, strict=True) if total == best),
               key=lambda name: (tie_order.get(name, len(tie_order)), name))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.one_of(st.none(), st.integers(0, 9))), min_size=1,
                max_size=12))
def test_a_tie_order_picks_as_node_by_node(nodes: list[tuple[int, int | None]]) -> None:
    names = [f"n{i:02d}" for i in range(len(nodes))][::-1]
    totals = [total for total, _ in nodes]
    tie_order = {name: place for name, (_, place) in zip(names, nodes, strict=True) if place is not None}
    expected = tie_order_winner(names, totals, tie_order)
    assert select_host(names, totals, random.Random(0), tie_order) == expected


def test_fit_error_reads_like_kube_scheduler() -> None:
    snap = cluster(5)
    filt = NodeFilter(
        "TaintToleration", reject={"n0": Status.unresolvable(TAINT), "n3": Status.unresolvable(TAINT)}
    )
    fit = NodeFilter(
        "NodeResourcesFit", reject={n: Status.unschedulable("Insufficient cpu") for n in ("n1", "n2", "n4")}
    )
    with pytest.raises(FitError) as caught:
        run(build(filt, fit, Scorer("S", {}), snapshot=snap), snap, start=2)
    error = caught.value
    assert isinstance(error, ScheduleFitError)
    assert (
        str(error)
        == error.message()
        == ("0/5 nodes are available: 2 node(s) had untolerated taint {dedicated: gpu}, 3 Insufficient cpu.")
    )
    assert error.diagnosis.unschedulable_plugins == {"TaintToleration", "NodeResourcesFit"}
    assert set(error.diagnosis.node_to_status) == {f"n{i}" for i in range(5)}
    assert error.diagnosis.node_to_status["n0"].plugin == "TaintToleration"
    assert error.next_start_index == 2  # every node was visited: a full turn
    assert error.explanation.value.evaluated_nodes == 5 and error.explanation.value.feasible_nodes == 0


def test_reasons_of_one_node_count_separately_and_sort_as_strings() -> None:
    snap = cluster(12)
    fit = NodeFilter(
        "NodeResourcesFit",
        reject={
            **{f"n{i}": Status.unschedulable("Insufficient cpu", "Insufficient memory") for i in range(10)},
            "n10": Status.unschedulable("Insufficient memory"),
            "n11": Status.unschedulable("Too many pods"),
        },
    )
    with pytest.raises(
        FitError,
        match=r"^0/12 nodes are available: 1 Too many pods, 10 Insufficient cpu, "
        r"11 Insufficient memory\.$",
    ):
        run(build(fit, snapshot=snap), snap)


def test_a_pre_filter_rejection_marks_every_node() -> None:
    snap = cluster(3)
    message = "node(s) didn't match pod affinity rules"
    fw = build(NodeFilter("InterPodAffinity", pre_status=Status.unresolvable(message)), snapshot=snap)
    with pytest.raises(ScheduleFitError) as caught:
        run(fw, snap, start=1)
    error = caught.value
    assert error.message() == f"0/3 nodes are available: {message}."
    assert error.diagnosis.pre_filter_message == message
    assert {n: s.plugin for n, s in error.diagnosis.node_to_status.items()} == {
        "n0": "InterPodAffinity",
        "n1": "InterPodAffinity",
        "n2": "InterPodAffinity",
    }
    assert error.diagnosis.unschedulable_plugins == {"InterPodAffinity"}
    assert error.next_start_index == 1 and error.explanation.value.pre_filter_message == message


def test_pre_filter_narrowing_filters_only_the_nodes_left() -> None:
    snap = cluster(5)
    narrow = NodeFilter("NodeName", result=PreFilterResult(frozenset({"n3", "n1", "ghost"})))
    result = run(build(narrow, Scorer("S", {"n3": 9}), snapshot=snap), snap)
    assert narrow.filtered == ["n1", "n3"] and result.suggested_host == "n3"


def test_nodes_left_out_by_pre_filter_are_unresolvable_in_the_fit_error() -> None:
    snap = cluster(5)
    narrow = NodeFilter(
        "NodeAffinity",
        result=PreFilterResult(frozenset({"n3"})),
        reject={"n3": Status.unschedulable("Insufficient cpu")},
    )
    with pytest.raises(ScheduleFitError) as caught:
        run(build(narrow, snapshot=snap), snap)
    error = caught.value
    assert error.message() == (
        "0/5 nodes are available: 1 Insufficient cpu, 4 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )
    assert error.diagnosis.node_to_status["n0"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert error.diagnosis.unschedulable_plugins == {"NodeAffinity"}


class BatchNodeFilter(NodeFilter):
    """A NodeFilter that also filters many nodes in one call."""

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        return [self.filter(state, pod, node_info) for node_info in nodes]


@pytest.mark.parametrize("plugin", [NodeFilter, BatchNodeFilter], ids=["node-by-node", "batch"])
def test_pre_filter_leaving_only_nodes_the_snapshot_lacks_fails_every_node(plugin: type[NodeFilter]) -> None:
    snap = cluster(3)
    narrow = plugin("NodeName", result=PreFilterResult(frozenset({"ghost"})))
    with pytest.raises(ScheduleFitError) as caught:
        run(build(narrow, snapshot=snap), snap, start=2)
    assert caught.value.message() == "0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) [NodeName]."
    assert narrow.filtered == []


def test_pending_plugins_are_recorded() -> None:
    snap = cluster(1)
    waiting = NodeFilter("Claims", reject={"n0": Status(Code.PENDING, ("waiting for claim",))})
    with pytest.raises(ScheduleFitError) as caught:
        run(build(waiting, snapshot=snap), snap)
    assert caught.value.diagnosis.pending_plugins == {"Claims"}


def test_a_filter_error_fails_the_attempt_blaming_the_plugin() -> None:
    snap = cluster(10)
    broken = NodeFilter("Broken", reject={"n2": Status.unschedulable("no"), "n3": Status.as_error("lost")})
    with pytest.raises(SchedulingError) as caught:
        run(build(broken, Scorer("S", {}), snapshot=snap), snap, start=1)
    assert caught.value.status.plugin == "Broken" and caught.value.status.code is Code.ERROR
    assert str(caught.value) == 'running "Broken" filter plugin: lost'
    # n1 fit and n2 did not before n3 failed: two nodes visited.
    assert caught.value.next_start_index == 3


@pytest.mark.parametrize(
    ("plugins", "message"),
    [
        ([NodeFilter("Pre", pre_status=Status.as_error("boom"))], 'running PreFilter plugin "Pre": boom'),
        (
            [NodeFilter(), Scorer("S", {}, pre_status=Status.as_error("boom"))],
            'running PreScore plugin "S": boom',
        ),
        ([NodeFilter(), Scorer("S", {"n0": 1000})], 'plugin "S" returns an invalid score 1000'),
    ],
    ids=["pre-filter", "pre-score", "score"],
)
def test_other_plugin_errors_fail_the_attempt(plugins: list[Any], message: str) -> None:
    snap = cluster(3)
    with pytest.raises(SchedulingError, match=message):
        run(build(*plugins, snapshot=snap), snap)


def within(fw: Any, snapshot: Snapshot, names: Sequence[str], incoming: Any = None) -> Any:
    """schedule_pod restricted to the nodes ``names`` (a pod group's placement)."""
    return asyncio.run(schedule_pod(
        fw, CycleState(), incoming or pod("p"), snapshot, percentage_of_nodes_to_score=None,
        rng=random.Random(0), start_index=0, nodes_within=[snapshot.get(name) for name in names],
    ))


def test_a_placement_restricts_filter_and_score_to_its_nodes() -> None:
    snap = cluster(10)
    filt = NodeFilter()
    scorer = Scorer("S", {"n1": 100, "n5": 50})
    result = within(build(filt, scorer, snapshot=snap), snap, ["n4", "n5", "n6"])
    assert result.suggested_host == "n5"  # n1 scores higher but is not in the placement
    assert sorted(filt.filtered) == ["n4", "n5", "n6"]


def test_a_nomination_outside_the_placement_is_not_tried() -> None:
    snap = cluster(10)
    filt = NodeFilter()
    result = within(build(filt, Scorer("S", {"n4": 100}), snapshot=snap), snap, ["n4", "n5"],
                    pod("p", nominated="n7"))
    assert result.suggested_host == "n4"
    assert "n7" not in filt.filtered


def test_a_placement_keeps_only_its_nodes_of_a_pre_filter_result() -> None:
    snap = cluster(10)
    narrow = NodeFilter("NodeName", result=PreFilterResult(frozenset({"n1", "n5"})))
    result = within(build(narrow, snapshot=snap), snap, ["n4", "n5", "n6"])
    assert result.suggested_host == "n5"
    assert narrow.filtered == ["n5"]


def test_a_placement_nobody_fits_fails_over_its_own_nodes() -> None:
    snap = cluster(10)
    filt = NodeFilter(reject={name: Status.unschedulable("Insufficient cpu") for name in ("n4", "n5")})
    with pytest.raises(ScheduleFitError) as caught:
        within(build(filt, snapshot=snap), snap, ["n4", "n5"])
    assert caught.value.message() == "0/2 nodes are available: 2 Insufficient cpu."
