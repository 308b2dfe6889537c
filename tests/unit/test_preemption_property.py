"""Properties of DefaultPreemption over random small clusters (the seed's model: a preemption removes a
subset of the lower-priority pods bound to one node such that the pod becomes feasible there).

Whatever node is chosen: every victim has a lower priority than the preemptor; without the victims the
preemptor fits; with any single victim back it does not (the victim set is minimal). And when no node is
chosen, no node would have taken the preemptor even with all its lower-priority pods gone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from cluster.api import objects_pb2
from scheduler.framework import CycleState, PodInfo, PostFilterResult
from tests.unit.preemption_util import Cluster, cpu_node, cpu_pod, pdb

POD = st.tuples(st.integers(0, 4), st.integers(1, 2), st.integers(0, 4), st.booleans())


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[objects_pb2.Node], list[objects_pb2.Pod], objects_pb2.Pod, int]:
    """Nodes of 1-3 cpus; pods of 1-2 cpus with priorities 0-4 bound where they fit (some labelled
    app=db, under a PDB); a preemptor of 1-3 cpus with priority 1-5."""
    capacities = draw(st.lists(st.integers(1, 3), min_size=1, max_size=5))
    nodes = [cpu_node(f"n{i}", str(c)) for i, c in enumerate(capacities)]
    free = list(capacities)
    pods: list[objects_pb2.Pod] = []
    for index, (node, cpu, priority, guarded) in enumerate(draw(st.lists(POD, min_size=4, max_size=12))):
        node %= len(nodes)
        if cpu > free[node]:
            continue
        free[node] -= cpu
        pods.append(cpu_pod(f"p{index}", str(cpu), priority, node_name=f"n{node}", start=1000 + index,
                            labels={"app": "db"} if guarded else None))
    preemptor = cpu_pod("hi", str(draw(st.integers(1, 3))), draw(st.integers(1, 5)))
    return nodes, pods, preemptor, draw(st.integers(0, 2))


def fits_on(nodes: Sequence[objects_pb2.Node], pods: Sequence[objects_pb2.Pod], preemptor: objects_pb2.Pod,
            node_name: str) -> bool:
    """Whether the preemptor passes PreFilter and Filter on ``node_name`` of a cluster of ``pods``."""
    cluster = Cluster(list(nodes), list(pods))
    state = CycleState()
    info = PodInfo(preemptor)
    _, status = cluster.framework.run_pre_filter(state, info)
    if status is not None and not status.is_success:
        return False
    status = cluster.framework.run_filter_with_nominated_pods(state, info, cluster.snapshot.get(node_name))
    return status is None or status.is_success


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_victims_are_lower_priority_sufficient_and_minimal(
    case: tuple[list[objects_pb2.Node], list[objects_pb2.Pod], objects_pb2.Pod, int]
) -> None:
    nodes, pods, preemptor, allowed = case
    if any(fits_on(nodes, pods, preemptor, n.metadata.name) for n in nodes):
        event("fits without preemption")
        return  # no FitError: PostFilter never runs
    cluster = Cluster(nodes, pods, pdbs=[pdb("db", {"app": "db"}, allowed)])
    result, status = asyncio.run(cluster.preempt(preemptor))
    priority = preemptor.spec.priority
    by_name = {p.metadata.name: p for p in pods}

    if result is None or not result.nominated_node_name:
        event("no candidate")
        assert result == PostFilterResult("")
        assert status is not None and status.message().startswith("preemption: 0/")
        for node in nodes:
            lower_gone = [p for p in pods
                          if p.spec.node_name != node.metadata.name or p.spec.priority >= priority]
            assert not fits_on(nodes, lower_gone, preemptor, node.metadata.name)
        return

    count = len(cluster.client.deleted)
    event(f"preempted {count if count < 3 else '3 or more'} pod(s)")  # coverage: --hypothesis-show-statistics
    assert status is None
    chosen = result.nominated_node_name
    victims = {name for _, _, name, _ in cluster.client.deleted}
    assert victims
    for name in victims:
        assert by_name[name].spec.priority < priority
        assert by_name[name].spec.node_name == chosen
    remaining = [p for p in pods if p.metadata.name not in victims]
    assert fits_on(nodes, remaining, preemptor, chosen)
    for name in victims:
        assert not fits_on(nodes, [*remaining, by_name[name]], preemptor, chosen), f"{name} need not go"
