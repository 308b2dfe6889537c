"""The dry run's fast path for nodes where only resource requests decide (requests_only.py) against its
reference, ``select_victims_on_node``: on generated clusters, the dry run with it and without it finds
the same candidates (nodes, victims in order, PDB violations), the same statuses for the other nodes and
the same chosen node. Nodes differ in CPU, memory and pod count; pods in requests, priority, start time
and PDB cover; some nodes are tainted (the fast path never sees them) and some have a pod nominated
(the fast path leaves them to the reference).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from cluster.api import objects_pb2
from scheduler.framework import Code, CycleState, PodInfo, Status
from scheduler.plugins.defaultpreemption import candidates, pick_one_node_for_preemption
from scheduler.plugins.defaultpreemption.candidates import DryRun, budgets, dry_run_preemption
from scheduler.plugins.defaultpreemption.requests_only import RequestsOnly
from scheduler.plugins.defaultpreemption.units import DisruptionUnits
from tests.builders import node, pod
from tests.unit.preemption_util import Cluster, pdb

TAINTED = st.integers(0, 5).map(lambda n: n == 0)
NODE = st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 6), TAINTED)
POD = st.tuples(st.integers(1, 3), st.integers(0, 2), st.integers(0, 4), st.integers(0, 3), st.booleans())


def _node(index: int, cpu: int, memory: int, pods: int, tainted: bool) -> objects_pb2.Node:
    taints = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}] if tainted else []
    return node(f"n{index}", allocatable={"cpu": str(cpu), "memory": f"{memory}Gi", "pods": str(pods)},
                taints=taints, labels={"kubernetes.io/hostname": f"n{index}"})


def _pod(name: str, cpu: int, memory: int, priority: int, *, node_name: str = "", start: int = 0,
         guarded: bool = False, nominated: str = "") -> objects_pb2.Pod:
    p = pod(name, uid=f"uid-{name}", cpu=f"{cpu * 500}m", memory=f"{memory}Gi" if memory else "",
            priority=priority, node_name=node_name, nominated=nominated,
            labels={"app": "db"} if guarded else None)
    if start:
        p.status.start_time.seconds = start
    return p


@st.composite
def clusters(draw: st.DrawFn) -> tuple[Cluster, objects_pb2.Pod]:
    """Up to 8 nodes of 1-4 CPUs, 1-4 GiB and 1-6 pods, one in six tainted; pods of 0.5-1.5 CPUs and
    0-2 GiB with priorities 0-4 filling each node up to what it has room for, starting at one of four
    times (ties included), some under a PDB; sometimes a pod nominated to a node; a preemptor of 0-1 GiB
    and, mostly, more CPU than any node has left but no more than the largest node has."""
    shapes = draw(st.lists(NODE, min_size=1, max_size=8))
    nodes = [_node(i, *shape) for i, shape in enumerate(shapes)]
    pods: list[objects_pb2.Pod] = []
    most_room = 0
    for at, (cpu_room, memory_room, room, _) in enumerate(shapes):
        cpu_room *= 2
        for cpu, memory, priority, start, guarded in draw(st.lists(POD, max_size=6)):
            if cpu > cpu_room or memory > memory_room or room < 1:
                continue
            cpu_room, memory_room, room = cpu_room - cpu, memory_room - memory, room - 1
            pods.append(_pod(f"p{len(pods)}", cpu, memory, priority, node_name=f"n{at}", start=1000 + start,
                             guarded=guarded))
        most_room = max(most_room, cpu_room)
    # Larger than the room any node has left, mostly: then it must preempt.
    cpu = min(most_room + draw(st.integers(-1, 3)), 2 * max(shape[0] for shape in shapes))
    preemptor = _pod("hi", max(cpu, 1), draw(st.integers(0, 1)), draw(st.integers(1, 5)))
    nominated: dict[str, list[objects_pb2.Pod]] = {}
    if draw(st.booleans()):
        at = draw(st.integers(0, len(nodes) - 1))
        nominated[f"n{at}"] = [_pod("waiting", draw(st.integers(1, 2)), 0, draw(st.integers(0, 6)),
                                    nominated=f"n{at}")]
    guard = pdb("db", {"app": "db"}, draw(st.integers(0, 2)))
    return Cluster(nodes, pods, pdbs=[guard], nominated=nominated), preemptor


def _dry_run(cluster: Cluster, state: CycleState, info: PodInfo, statuses: dict[str, Status],
             offset: int, fast: bool) -> tuple[DryRun, int]:
    """The dry run over the nodes Filter found Unschedulable, with the fast path or without it, and how
    many nodes the fast path answered for."""
    handle = cluster.handle
    potential = [n for n in handle.snapshot().node_infos().list()
                 if (s := statuses.get(n.name)) is not None and s.code is Code.UNSCHEDULABLE]
    units = DisruptionUnits(handle.snapshot().node_infos(), handle.pod_groups)
    answered = 0
    fast_path = None
    if fast:
        requests_only = RequestsOnly.of(handle, state, statuses)
        assert requests_only is not None, "the default profile's Filter for a plain pod is resources alone"

        def counted(*args: object) -> tuple[list[PodInfo], int, Status | None] | None:
            nonlocal answered
            found = requests_only.victims(*args)  # type: ignore[arg-type]
            answered += found is not None
            return found

        fast_path = counted
    dry_run = dry_run_preemption(
        handle, state, info, potential, budgets(cluster.pdbs), offset % max(len(potential), 1),
        max(1, len(potential) // 2), units.evictable_for(info.priority), None, units.importance, fast_path)
    return dry_run, answered


Summary = tuple[list[tuple[str, list[str], int]], dict[str, tuple[str, tuple[str, ...], str]]]


def _summary(dry_run: DryRun) -> Summary:
    found = [(c.node_name, [v.key for v in c.victims], c.num_pdb_violations) for c in dry_run.candidates]
    statuses = {name: (s.code.name, s.reasons, s.plugin) for name, s in dry_run.node_statuses.items()}
    return found, statuses


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.integers(0, 7))
def test_the_fast_path_finds_what_the_reference_finds(
    case: tuple[Cluster, objects_pb2.Pod], offset: int
) -> None:
    cluster, preemptor = case
    info = PodInfo(preemptor)
    try:
        state, statuses = asyncio.run(cluster.fit_error(info))
    except AssertionError:
        event("fits without preemption")
        return
    reference, _ = _dry_run(cluster, state, info, dict(statuses), offset, fast=False)
    fast, answered = _dry_run(cluster, state, info, dict(statuses), offset, fast=True)
    event(f"fast path answered for {min(answered, 3)}{'+' if answered >= 3 else ''} node(s)")
    assert _summary(fast) == _summary(reference)
    chosen = pick_one_node_for_preemption(fast.candidates)
    expected = pick_one_node_for_preemption(reference.candidates)
    assert (chosen and chosen.node_name) == (expected and expected.node_name)


HOST_PORT = {"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 80}],
                             "resources": {"requests": {"cpu": "3"}}}]}
ANTI_AFFINITY = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "3"}}}], "affinity": {
    "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}}}
TOLERATES_ALL = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "3"}}}],
                 "tolerations": [{"operator": "Exists"}]}


@pytest.mark.parametrize(("spec", "applies"), [
    (None, True),
    (TOLERATES_ALL, True),  # TaintToleration reads the node alone
    (HOST_PORT, False),  # NodePorts reads the node's pods
    (ANTI_AFFINITY, False),  # InterPodAffinity reads them too
])
def test_the_fast_path_stands_in_only_where_requests_alone_decide(
    spec: dict[str, object] | None, applies: bool
) -> None:
    cluster = Cluster([_node(0, 4, 4, 10, False)], [_pod("low", 6, 0, 0, node_name="n0", start=1000)])
    preemptor = pod("hi", spec=spec, priority=5) if spec is not None else _pod("hi", 6, 0, 5)
    state, statuses = asyncio.run(cluster.fit_error(PodInfo(preemptor)))
    assert (RequestsOnly.of(cluster.handle, state, statuses) is not None) is applies


def test_a_plugin_reading_pods_before_resources_keeps_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """A profile whose running Filter plugins are not node-only ones ahead of NodeResourcesFit: no fast
    path."""
    cluster = Cluster([_node(0, 4, 4, 10, False)], [_pod("low", 6, 0, 0, node_name="n0", start=1000)])
    state, statuses = asyncio.run(cluster.fit_error(PodInfo(_pod("hi", 6, 0, 5))))
    for running in (["NodeResourcesFit", "TaintToleration"], ["NodePorts", "NodeResourcesFit"], []):
        monkeypatch.setattr(cluster.framework, "running_filter_plugins",
                            lambda _state, running=running: list(running))
        assert RequestsOnly.of(cluster.handle, state, statuses) is None


def _keys(victims: Sequence[PodInfo]) -> list[str]:
    return [v.key for v in victims]


def test_reprieve_is_the_references_order() -> None:
    """The shared reprieve puts PDB-violating pods back first, then the others, most important first."""
    infos = [PodInfo(_pod(f"v{i}", 1, 0, p, node_name="n0", start=1000 + s, guarded=g))
             for i, (p, s, g) in enumerate([(1, 2, False), (2, 1, True), (1, 1, False), (2, 3, False)])]
    asked: list[str] = []

    def stays(info: PodInfo) -> bool:
        asked.append(info.key)
        return False

    victims, violations = candidates.reprieve(list(infos), budgets([pdb("db", {"app": "db"}, 0)]),
                                              candidates.importance, stays)
    assert asked == ["default/v1", "default/v3", "default/v2", "default/v0"]
    assert _keys(victims) == ["default/v1", "default/v3", "default/v2", "default/v0"]
    assert violations == 1
