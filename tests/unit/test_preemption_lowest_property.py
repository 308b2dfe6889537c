"""Preemption's whole-list shortcuts decide as the plain per-node definitions: the dry run told which nodes
hold no pod of lower priority (``lower``, from the LowestPodPriority node data) finds exactly what it
finds looking at every node's pods (the same candidates, victims and statuses, in the same order, on
random clusters, from random offsets); the potential nodes are those Filter found Unschedulable."""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cluster.api import objects_pb2
from scheduler.framework import Code, NodeInfo, PodInfo, Status
from scheduler.plugins.defaultpreemption import dry_run_preemption
from scheduler.plugins.defaultpreemption.candidates import DryRun, budgets
from scheduler.plugins.defaultpreemption.lowest import NO_PODS, LowestPodPriority
from scheduler.plugins.defaultpreemption.plugin import _unschedulable
from tests.unit.preemption_util import Cluster, cpu_node, cpu_pod, pdb
from tests.unit.test_preemption_property import clusters


def _summary(run: DryRun) -> tuple[list[tuple[str, list[str], int]], list[tuple[str, str, str]]]:
    return ([(c.node_name, [v.key for v in c.victims], c.num_pdb_violations) for c in run.candidates],
            [(name, status.code.name, status.message()) for name, status in run.node_statuses.items()])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.integers(0, 40), st.integers(1, 4))
def test_ruling_out_nodes_without_lower_priority_pods_changes_nothing(
    case: tuple[list[objects_pb2.Node], list[objects_pb2.Pod], objects_pb2.Pod, int], offset: int,
    wanted: int,
) -> None:
    nodes, pods, preemptor, allowed = case
    cluster = Cluster(nodes, pods, pdbs=[pdb("db", {"app": "db"}, allowed)])
    info = PodInfo(preemptor)
    try:
        state, _ = asyncio.run(cluster.fit_error(info))
    except AssertionError:
        return  # it fits: no dry run
    potential = list(cluster.snapshot.list())
    offset %= len(potential)
    found = cluster.snapshot.rotated(0).node_data(LowestPodPriority)
    assert found is not None
    lowest, rows = found
    lower = (lowest.values[rows] < info.priority).tolist()
    pdbs = budgets(cluster.pdbs)
    looked = dry_run_preemption(cluster.framework, state, info, potential, pdbs, offset, wanted)
    told = dry_run_preemption(cluster.framework, state, info, potential, pdbs, offset, wanted, lower=lower)
    assert _summary(told) == _summary(looked)


def test_the_lowest_priority_follows_the_pods_of_a_node() -> None:
    empty, busy = NodeInfo(cpu_node("a")), NodeInfo(cpu_node("b"))
    for name, priority in (("p1", 7), ("p2", -3), ("p3", 100)):
        busy.add_pod(PodInfo(cpu_pod(name, "100m", priority, node_name="b")))
    lowest = LowestPodPriority([empty, busy])
    assert lowest.values.tolist() == [NO_PODS, -3]
    busy.remove_pod("default/p2")
    lowest.set_row(1, busy)
    empty.add_pod(PodInfo(cpu_pod("p4", "100m", 0, node_name="a")))
    lowest.set_row(0, empty)
    assert lowest.values.tolist() == [0, 7]


STATUS = st.sampled_from([Status.unschedulable("Insufficient cpu"), Status.unschedulable("Too many pods"),
                          Status.unresolvable("node(s) didn't match Pod's node affinity/selector")])


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 8).flatmap(lambda n: st.tuples(st.just(n), st.lists(st.one_of(st.none(), STATUS),
                                                                           min_size=n, max_size=n))))
def test_the_nodes_where_preemption_might_help_are_those_filter_found_unschedulable(
    case: tuple[int, list[Status | None]],
) -> None:
    n, given_statuses = case
    nodes = [NodeInfo(cpu_node(f"n{i}")) for i in range(n)]
    node_to_status = {f"n{i}": status for i, status in enumerate(given_statuses) if status is not None}
    expected = [(status := node_to_status.get(info.name)) is not None and status.code is Code.UNSCHEDULABLE
                for info in nodes]
    assert _unschedulable(nodes, node_to_status) == expected


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.integers(0, 2**16))
def test_counting_when_no_node_holds_a_lower_priority_pod_finds_what_the_dry_run_finds(
    case: tuple[list[objects_pb2.Node], list[objects_pb2.Pod], objects_pb2.Pod, int], seed: int,
) -> None:
    nodes, pods, preemptor, allowed = case
    preemptor.spec.priority = min((p.spec.priority for p in pods), default=0)  # nobody to evict
    cluster = Cluster(nodes, pods, pdbs=[pdb("db", {"app": "db"}, allowed)])
    info = PodInfo(preemptor)
    try:
        state, statuses = asyncio.run(cluster.fit_error(info))
    except AssertionError:
        return  # it fits: no PostFilter
    all_nodes = cluster.snapshot.list()
    counted = cluster.plugin(seed=seed)._nothing_to_evict(len(all_nodes), statuses)
    draw_after_counting = cluster.rng.random()
    dry_run = asyncio.run(cluster.plugin(seed=seed)._preempt_with_dry_run(
        state, info, cluster.snapshot, all_nodes, statuses, None))
    assert counted == dry_run
    assert cluster.rng.random() == draw_after_counting  # the same random draws were made
