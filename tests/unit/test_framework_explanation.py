"""The scheduling explanation: grouped verdicts, top scores, a size bounded at any cluster size, JSON round
trip, text rendering."""

from __future__ import annotations

import asyncio
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.algorithm import ScheduleFitError, ScheduleResult, schedule_pod
from scheduler.framework import CycleState, Diagnosis, FitError, Status
from scheduler.framework.explanation import (
    MAX_EXAMPLE_NODES,
    MAX_REASON_GROUPS,
    MAX_TEXT,
    MAX_TOP_NODES,
    Explanation,
    NodeScores,
    ReasonGroup,
    explain,
    top_nodes,
)
from tests.unit.framework_fakes import NodeFilter, Scorer, Snapshot, build, node, pod

TAINT = "node(s) had untolerated taint {dedicated: gpu}"


def diagnosis(statuses: dict[str, Status]) -> Diagnosis:
    d = Diagnosis()
    d.node_to_status.update(statuses)
    return d


def test_verdicts_are_grouped_by_plugin_reason_and_code_with_a_few_examples() -> None:
    statuses = {
        f"n{i}": Status.unschedulable("Insufficient cpu", "Insufficient memory").with_plugin("Fit")
        for i in range(25)
    }
    statuses.update({f"t{i}": Status.unresolvable(TAINT).with_plugin("TaintToleration") for i in range(3)})
    result = explain(30, diagnosis(statuses), evaluated_nodes=28, feasible_nodes=0)
    assert result.filtered == [
        ReasonGroup(
            "Fit", "Insufficient cpu", "Unschedulable", 25, tuple(f"n{i}" for i in range(MAX_EXAMPLE_NODES))
        ),
        ReasonGroup(
            "Fit",
            "Insufficient memory",
            "Unschedulable",
            25,
            tuple(f"n{i}" for i in range(MAX_EXAMPLE_NODES)),
        ),
        ReasonGroup("TaintToleration", TAINT, "UnschedulableAndUnresolvable", 3, ("t0", "t1", "t2")),
    ]
    assert result.other_filtered == 0 and result.top_nodes == []


def test_only_the_largest_groups_are_kept_and_the_rest_counted() -> None:
    statuses = {f"n{i}": Status.unschedulable(f"reason {i % 40}").with_plugin("P") for i in range(400)}
    statuses["big"] = Status.unschedulable("reason 7").with_plugin("P")
    result = explain(401, diagnosis(statuses), evaluated_nodes=401, feasible_nodes=0)
    assert len(result.filtered) == MAX_REASON_GROUPS
    # The largest group first; its examples are the first nodes met, at most MAX_EXAMPLE_NODES.
    assert result.filtered[0] == ReasonGroup(
        "P", "reason 7", "Unschedulable", 11, tuple(f"n{i}" for i in range(7, 400, 40))
    )
    assert sum(g.count for g in result.filtered) + result.other_filtered == 401


def test_top_nodes_put_the_chosen_one_first_among_equals_and_weight_plugin_scores() -> None:
    totals = [10, 50, 30, 50, 20, 40, 50]
    per_plugin = {"A": [score // 2 for score in totals], "B": [0] * len(totals)}
    result = explain(
        7,
        Diagnosis(),
        evaluated_nodes=7,
        feasible_nodes=7,
        chosen_node="n3",
        node_names=[f"n{i}" for i in range(len(totals))],
        totals=totals,
        per_plugin=per_plugin,
        score_weights={"A": 2, "B": 1},
    )
    assert [n.node for n in result.top_nodes] == ["n3", "n1", "n6", "n5", "n2"]
    assert len(result.top_nodes) == MAX_TOP_NODES
    assert result.top_nodes[0] == NodeScores("n3", 50, {"A": 50, "B": 0})
    assert result.score_weights == {"A": 2, "B": 1}


@pytest.mark.parametrize("seed", range(5))
def test_top_nodes_equal_a_full_sort_on_random_ties(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(50):
        count = rng.randrange(1, 40)
        names = [f"n{i}" for i in range(count)]
        totals = [rng.choice([0, 50, 100, 150, 300]) for _ in range(count)]
        chosen = rng.choice([*names, ""])
        expected = sorted(range(count), key=lambda i: (-totals[i], names[i] != chosen, i))[:MAX_TOP_NODES]
        assert top_nodes(names, totals, chosen) == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([0, 90, 100]), min_size=1, max_size=60), st.integers(0, 70))
def test_top_nodes_among_many_ties_equal_a_full_sort(totals: list[int], chosen: int) -> None:
    names = [f"n{i}" for i in range(len(totals))]
    chosen_node = names[chosen] if chosen < len(names) else ""
    expected = sorted(range(len(totals)), key=lambda i: (-totals[i], names[i] != chosen_node, i))
    assert top_nodes(names, totals, chosen_node) == expected[:MAX_TOP_NODES]


def test_long_texts_are_cut() -> None:
    long_reason = "x" * 1000
    result = explain(
        1,
        diagnosis({"n": Status.unschedulable(long_reason).with_plugin("P")}),
        evaluated_nodes=1,
        feasible_nodes=0,
    )
    assert len(result.filtered[0].reason) == MAX_TEXT and result.filtered[0].reason.endswith("...")


def big_cluster_attempt(count: int, *, fits: bool) -> Explanation:
    """A real attempt on ``count`` nodes, each failing node with a node-specific reason (the worst case)."""
    nodes = [node(f"node-{i:05d}.zone-{i % 3}.example.com") for i in range(count)]
    snap = Snapshot(nodes)
    reject = {
        n.name: Status.unschedulable(f"node(s) had untolerated taint {{team: t{i}}}")
        for i, n in enumerate(nodes)
        if not fits or i % 2
    }
    plugins = [NodeFilter("TaintToleration", reject=reject)] + [
        Scorer(f"Score{k}", {n.name: (i * 7 + k) % 101 for i, n in enumerate(nodes)}) for k in range(6)
    ]
    fw = build(*plugins, snapshot=snap)

    def run() -> ScheduleResult:
        return asyncio.run(schedule_pod(
            fw,
            CycleState(),
            pod("p"),
            snap,
            percentage_of_nodes_to_score=None,
            rng=random.Random(1),
            start_index=0,
        ))

    if fits:
        return run().explanation.value
    with pytest.raises(ScheduleFitError) as caught:
        run()
    return caught.value.explanation.value


@pytest.mark.parametrize("fits", [False, True], ids=["unschedulable", "scheduled"])
def test_the_record_stays_small_at_5000_nodes(fits: bool) -> None:
    small = big_cluster_attempt(50, fits=fits)
    large = big_cluster_attempt(5000, fits=fits)
    assert len(large.to_json()) < 8 * 1024
    # Bounded, not proportional: 100 times the nodes, about the same size.
    assert len(large.to_json()) < 2 * len(small.to_json())
    assert large.num_all_nodes == 5000
    if fits:
        assert large.feasible_nodes == 500 and len(large.top_nodes) == MAX_TOP_NODES
        assert large.top_nodes[0].node == large.chosen_node
    else:
        assert large.other_filtered == 5000 - MAX_REASON_GROUPS


def test_json_round_trip() -> None:
    original = big_cluster_attempt(300, fits=True)
    assert Explanation.from_json(original.to_json()) == original
    failed = big_cluster_attempt(30, fits=False)
    assert Explanation.from_json(failed.to_json()) == failed


@pytest.mark.parametrize(
    "text",
    ["", "[]", '{"v": 99}', '{"v": 1, "nodes": 3}', '{"v": 1, "nodes": "x"}'],
    ids=["empty", "list", "version", "missing-fields", "bad-number"],
)
def test_anything_else_is_not_an_explanation(text: str) -> None:
    with pytest.raises(ValueError, match="not a scheduling explanation"):
        Explanation.from_json(text)


def test_render_for_describe() -> None:
    statuses = {
        f"n{i}": Status.unschedulable("Insufficient cpu").with_plugin("NodeResourcesFit") for i in range(12)
    }
    statuses["g1"] = Status.unresolvable(TAINT).with_plugin("TaintToleration")
    per_plugin = {"TaintToleration": [100, 70]}
    result = explain(
        15,
        diagnosis(statuses),
        evaluated_nodes=15,
        feasible_nodes=2,
        chosen_node="a",
        node_names=["a", "b"],
        totals=[300, 210],
        per_plugin=per_plugin,
        score_weights={"TaintToleration": 3},
    )
    assert result.render().splitlines() == [
        "Nodes: 15 in the cluster, 15 evaluated, 2 feasible; chosen: a",
        "Filtered out:",
        "  12 NodeResourcesFit: Insufficient cpu [n0, n1, n2, n3, n4, n5, n6, n7, n8, n9, +2 more]",
        f"   1 TaintToleration: {TAINT} (preemption cannot help) [g1]",
        "Top nodes by score (weights: TaintToleration x3):",
        "  a   300  (TaintToleration 300)",
        "  b   210  (TaintToleration 210)",
    ]


def test_render_of_a_pre_filter_rejection() -> None:
    d = diagnosis({"n0": Status.unresolvable("no").with_plugin("P")})
    d.pre_filter_message = "node(s) didn't satisfy plugin(s) [A B] simultaneously"
    text = explain(1, d, evaluated_nodes=0, feasible_nodes=0).render()
    assert text.splitlines()[:2] == [
        "Nodes: 1 in the cluster, 0 evaluated, 0 feasible; no node fits",
        "Rejected before filtering: node(s) didn't satisfy plugin(s) [A B] simultaneously",
    ]


# ------------------------------------------------- grouping by Status object equals grouping by node


def reference_groups(statuses: dict[str, Status]) -> list[ReasonGroup]:
    """The grouping node by node, as explain did before it grouped Status objects first."""
    groups: dict[tuple[str, str, str], list[object]] = {}
    for node_name, status in statuses.items():
        for reason in status.reasons or ("",):
            key = (status.plugin, reason.removesuffix(f" ({status.plugin})"), status.code.value)
            group = groups.setdefault(key, [0, []])
            group[0] += 1  # type: ignore[operator]
            if len(group[1]) < MAX_EXAMPLE_NODES:  # type: ignore[arg-type]
                group[1].append(node_name)  # type: ignore[union-attr]
    ordered = sorted(groups.items(), key=lambda item: (-item[1][0], item[0]))  # type: ignore[operator]
    return [ReasonGroup(plugin, reason, code, count, tuple(examples))  # type: ignore[arg-type]
            for (plugin, reason, code), (count, examples) in ordered[:MAX_REASON_GROUPS]]


def reference_message_counts(statuses: dict[str, Status]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for status in statuses.values():
        for reason in status.reasons:
            counts[reason] = counts.get(reason, 0) + 1
    return counts


@pytest.mark.parametrize("seed", range(40))
def test_grouping_shared_statuses_equals_grouping_node_by_node(seed: int) -> None:
    """Random node counts, with Status objects shared by many nodes (as NodeResourcesFit hands them
    out) or made per node, equal reasons in different objects, duplicate and empty reasons."""
    rng = random.Random(seed)
    reasons = ["Insufficient cpu", "Insufficient memory", TAINT, "node(s) were unschedulable"]
    plugins = ["NodeResourcesFit", "TaintToleration", "NodeUnschedulable"]

    def make() -> Status:
        picked = tuple(rng.choice(reasons) for _ in range(rng.randrange(0, 3)))
        make_status = rng.choice((Status.unschedulable, Status.unresolvable))
        return make_status(*picked).with_plugin(rng.choice(plugins))

    shared = [make() for _ in range(rng.randrange(1, 5))]
    statuses = {f"n{i:04d}": rng.choice(shared) if rng.random() < 0.8 else make()
                for i in range(rng.randrange(1, 400))}
    d = diagnosis(statuses)
    got = explain(len(statuses), d, evaluated_nodes=len(statuses), feasible_nodes=0)
    assert got.filtered == reference_groups(statuses)
    counts = reference_message_counts(statuses)
    expected = ", ".join(sorted(f"{n} {reason}" for reason, n in counts.items()))
    message = FitError(pod("p").pod, len(statuses), d).message()
    assert message == f"0/{len(statuses)} nodes are available: {expected}."
