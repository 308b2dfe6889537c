"""The choice of the node to preempt on, each of kube-scheduler's tie-breaks on its own, and how many
candidates the dry run looks for, from where."""

from __future__ import annotations

import asyncio
import random

import pytest

from scheduler.framework import CycleState, NodeInfo, PodInfo
from scheduler.plugins.defaultpreemption import (
    Candidate,
    DefaultPreemptionArgs,
    dry_run_preemption,
    new,
    num_candidates,
    pick_one_node_for_preemption,
)
from scheduler.plugins.defaultpreemption.candidates import budgets
from tests.unit.preemption_util import Cluster, cpu_node, cpu_pod, pdb


def victim(priority: int, start: int = 0, name: str = "") -> PodInfo:
    return PodInfo(cpu_pod(name or f"v{priority}-{start}", "1", priority, node_name="x", start=start))


def candidate(node: str, *victims: PodInfo, violations: int = 0) -> Candidate:
    ordered = sorted(victims, key=lambda v: (-v.priority, v.pod.status.start_time.seconds or float("inf")))
    return Candidate(node, ordered, violations)


@pytest.mark.parametrize(
    ("candidates", "chosen"),
    [
        ([candidate("a", victim(1), violations=2), candidate("b", victim(9), violations=1)], "b"),
        ([candidate("a", victim(5), victim(1)), candidate("b", victim(4), victim(4))], "b"),
        ([candidate("a", victim(5), victim(3)), candidate("b", victim(5), victim(1))], "b"),
        # Negative priorities: without kube-scheduler's 2^31 shift, two victims at -10 would "sum" below
        # one victim at -10 and win; shifted, they cost more.
        ([candidate("a", victim(-10), victim(-10)), candidate("b", victim(-10), victim(-20))], "b"),
        ([candidate("a", victim(-10), victim(-10)), candidate("b", victim(-10))], "b"),
        ([candidate("a", victim(3), victim(2)), candidate("b", victim(5))], "a"),
        ([candidate("a", victim(3, start=100)), candidate("b", victim(3, start=200))], "b"),
        ([candidate("a", victim(3, start=100)), candidate("b", victim(3))], "b"),
        ([candidate("a", victim(3, 300), victim(1, 900)),
          candidate("b", victim(3, 200), victim(1, 999))], "a"),
        ([candidate("a", victim(3, start=100)), candidate("b", victim(3, start=100))], "a"),
        ([candidate("only", victim(7))], "only"),
    ],
    ids=[
        "fewest-pdb-violations-beats-priority",
        "lowest-highest-priority-victim",
        "smallest-priority-sum",
        "sum-with-negative-priorities",
        "more-negative-victims-cost-more",
        "fewest-victims",
        "latest-start-of-top-victims",
        "not-started-counts-as-latest",
        "start-time-only-of-highest-priority-victims",
        "first-on-full-tie",
        "single",
    ],
)
def test_pick_one_node_for_preemption(candidates: list[Candidate], chosen: str) -> None:
    best = pick_one_node_for_preemption(candidates)
    assert best is not None and best.node_name == chosen


def test_no_candidates_no_choice() -> None:
    assert pick_one_node_for_preemption([]) is None


@pytest.mark.parametrize(
    ("nodes", "percentage", "absolute", "expected"),
    [(10, 10, 100, 10), (1000, 10, 100, 100), (5000, 10, 100, 500), (50, 50, 0, 25), (3, 0, 1, 1),
     (0, 10, 100, 0), (250, 100, 0, 250)],
    ids=["small-cluster-all", "absolute-floor", "percentage", "percentage-only", "absolute-only",
         "no-nodes", "all-by-percentage"],
)
def test_num_candidates(nodes: int, percentage: int, absolute: int, expected: int) -> None:
    assert num_candidates(nodes, percentage, absolute) == expected


def test_the_offset_is_random_within_the_potential_nodes_and_seeded() -> None:
    cluster = Cluster([cpu_node("n1")])
    args = DefaultPreemptionArgs(10, 2)
    offsets = {cluster.plugin(args, seed=seed).offset_and_num_candidates(7)[0] for seed in range(50)}
    assert offsets <= set(range(7)) and len(offsets) > 1
    assert cluster.plugin(args, seed=3).offset_and_num_candidates(7) == cluster.plugin(
        args, seed=3).offset_and_num_candidates(7)
    assert cluster.plugin(args).offset_and_num_candidates(7)[1] == 2


def _full_cluster(
    n: int, guarded: frozenset[int] = frozenset()
) -> tuple[Cluster, PodInfo, CycleState, list[NodeInfo]]:
    """``n`` one-cpu nodes, each full with one priority-0 pod (those in ``guarded`` under a PDB that
    allows no disruption), and a one-cpu preemptor that fits nowhere."""
    nodes = [cpu_node(f"n{i}", "1") for i in range(n)]
    pods = [cpu_pod(f"p{i}", "1", 0, node_name=f"n{i}", labels={"app": "db"} if i in guarded else None)
            for i in range(n)]
    cluster = Cluster(nodes, pods, pdbs=[pdb("db", {"app": "db"}, 0)])
    preemptor = PodInfo(cpu_pod("hi", "1", 100))
    state, _ = asyncio.run(cluster.fit_error(preemptor))
    return cluster, preemptor, state, [cluster.snapshot.get(f"n{i}") for i in range(n)]


def test_the_dry_run_stops_once_it_has_enough_candidates_from_the_offset() -> None:
    cluster, preemptor, state, nodes = _full_cluster(6)
    run = dry_run_preemption(cluster.framework, state, preemptor, nodes, [], offset=4, wanted=3)
    assert [c.node_name for c in run.candidates] == ["n4", "n5", "n0"]
    assert run.node_statuses == {}


def test_the_dry_run_goes_on_past_pdb_violating_candidates_until_one_violates_nothing() -> None:
    cluster, preemptor, state, nodes = _full_cluster(5, guarded=frozenset({0, 1, 2}))
    run = dry_run_preemption(cluster.framework, state, preemptor, nodes, budgets(cluster.pdbs), offset=0,
                             wanted=2)
    # Each list holds at most 2; violating candidates are listed after the non-violating ones.
    assert [(c.node_name, c.num_pdb_violations) for c in run.candidates] == [("n3", 0), ("n0", 1), ("n1", 1)]


def test_the_dry_run_leaves_the_snapshot_and_state_alone() -> None:
    cluster, preemptor, state, nodes = _full_cluster(2)
    before = [(n.generation, sorted(n.pods)) for n in nodes]
    dry_run_preemption(cluster.framework, state, preemptor, nodes, [], offset=0, wanted=2)
    assert [(n.generation, sorted(n.pods)) for n in nodes] == before


def test_the_offset_comes_from_the_handle_rng() -> None:
    cluster = Cluster([cpu_node("n1")])
    plugin = new(None, cluster.handle)
    cluster.rng.seed(7)
    expected = random.Random(7).randrange(1000)
    assert plugin.offset_and_num_candidates(1000) == (expected, 100)
