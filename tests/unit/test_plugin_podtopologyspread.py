"""PodTopologySpread PreFilter / Filter / AddPod / RemovePod, table-driven from kube-scheduler's
filtering_test.go cases, plus the cross-cycle counts checked against a from-scratch computation."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster.api import objects_pb2
from scheduler.cache import Cache, Snapshot, snapshot_of
from scheduler.clock import FakeClock
from scheduler.framework import (
    Code,
    CycleState,
    EnqueueExtensions,
    FilterPlugin,
    NodeInfo,
    PodInfo,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    Status,
)
from scheduler.plugins import podtopologyspread
from scheduler.plugins.podtopologyspread import REASON_CONSTRAINTS_NOT_MATCH, REASON_NODE_LABEL_NOT_MATCH
from scheduler.plugins.podtopologyspread.filtering import _distinct
from tests.builders import node, pod
from tests.unit.framework_fakes import fake_handle

FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}


def spread(
    max_skew: int, key: str, when: str = "DoNotSchedule", selector: dict | None = FOO, **extra: Any
) -> dict:
    constraint: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when, **extra}
    if selector is not None:
        constraint["labelSelector"] = selector
    return constraint


def incoming(
    *constraints: dict, labels: dict | None = None, namespace: str = "default", **spec: Any
) -> objects_pb2.Pod:
    return pod(
        spec={"topologySpreadConstraints": list(constraints), **spec},
        name="p",
        namespace=namespace,
        labels={"foo": ""} if labels is None else labels,
    )


def placed(
    name: str, node_name: str, labels: dict | None = None, namespace: str = "default"
) -> objects_pb2.Pod:
    return pod(
        name=name, node_name=node_name, namespace=namespace, labels={"foo": ""} if labels is None else labels
    )


def spread_out(counts: dict[str, int], labels: dict | None = None) -> list[objects_pb2.Pod]:
    """``counts[node]`` matching pods on each node."""
    return [placed(f"p-{n}{i}", n, labels) for n, count in counts.items() for i in range(count)]


def zoned(name: str, zone: str | None, **extra: Any) -> objects_pb2.Node:
    labels = {"node": name, **({"zone": zone} if zone else {})}
    return node(name, labels=labels, **extra)


NODES = [
    zoned("node-a", "zone1"),
    zoned("node-b", "zone1"),
    zoned("node-x", "zone2"),
    zoned("node-y", "zone2"),
]
UNSCHEDULABLE = Status(Code.UNSCHEDULABLE, (REASON_CONSTRAINTS_NOT_MATCH,))
MISSING_LABEL = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (REASON_NODE_LABEL_NOT_MATCH,))
U, M = UNSCHEDULABLE, MISSING_LABEL
TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


def run_filter(
    incoming_pod: objects_pb2.Pod, nodes: Sequence[objects_pb2.Node], pods: Sequence[objects_pb2.Pod]
) -> list[Status | None]:
    snap = snapshot_of(nodes, pods)
    plugin = podtopologyspread.new(None, fake_handle(snap))
    state, pod_info = CycleState(), PodInfo(incoming_pod)
    _, status = plugin.pre_filter(state, pod_info, snap.list())
    assert status is None
    return [plugin.filter(state, pod_info, snap.get(n.metadata.name)) for n in nodes]


CASES = [
    ("no existing pods", incoming(spread(1, "zone")), NODES, [], [None] * 4),
    (
        "no existing pods, the pod does not match itself",
        incoming(spread(1, "zone"), labels={}),
        NODES,
        [],
        [None] * 4,
    ),
    (
        "pods of other namespaces do not count",
        incoming(spread(1, "zone")),
        NODES,
        [placed("a1", "node-a"), placed("x1", "node-x", namespace="other")],
        [U, U, None, None],
    ),
    (
        "zones at 3/3: every node fits",
        incoming(spread(1, "zone")),
        NODES,
        spread_out({"node-a": 2, "node-b": 1, "node-x": 1, "node-y": 2}),
        [None] * 4,
    ),
    (
        "zones at 1/2 because node-b has no zone label",
        incoming(spread(1, "zone")),
        [NODES[0], zoned("node-b", None), NODES[2], NODES[3]],
        spread_out({"node-a": 1, "node-b": 1, "node-x": 1, "node-y": 1}),
        [None, M, U, U],
    ),
    ("no node has the topology key", incoming(spread(1, "rack")), NODES, [], [M] * 4),
    (
        "nodes at 2/1/0/3: only node-x fits",
        incoming(spread(1, "node")),
        NODES,
        spread_out({"node-a": 2, "node-b": 1, "node-y": 3}),
        [U, U, None, U],
    ),
    (
        "nodes at 2/1/0/3, maxSkew 2: node-b and node-x fit",
        incoming(spread(2, "node")),
        NODES,
        spread_out({"node-a": 2, "node-b": 1, "node-y": 3}),
        [U, None, None, U],
    ),
    (
        "nodes at 2/1/0/3, the pod does not match itself",
        incoming(spread(1, "node"), labels={"bar": ""}),
        NODES,
        spread_out({"node-a": 2, "node-b": 1, "node-y": 3}),
        [U, None, None, U],
    ),
    (
        "node affinity leaves node-a and node-y as the only domains (2/~1~/~0~/3)",
        incoming(
            spread(1, "node"),
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "node", "operator": "In", "values": ["node-a", "node-y"]}
                                ]
                            }
                        ]
                    }
                }
            },
        ),
        NODES,
        spread_out({"node-a": 2, "node-b": 1, "node-y": 3}),
        [None, None, None, U],
    ),
    (
        "nodeAffinityPolicy Ignore counts every node",
        incoming(spread(1, "node", nodeAffinityPolicy="Ignore"), nodeSelector={"node": "node-a"}),
        NODES,
        spread_out({"node-a": 2, "node-b": 1, "node-y": 3}),
        [U, U, None, U],
    ),
    (
        "a tainted node still counts by default (nodeTaintsPolicy Ignore)",
        incoming(spread(1, "node")),
        [NODES[0], NODES[1], zoned("node-x", "zone2", taints=[TAINT]), NODES[3]],
        spread_out({"node-a": 1, "node-b": 1, "node-y": 1}),
        [U, U, None, U],
    ),
    (
        "nodeTaintsPolicy Honor leaves out a node whose taint the pod does not tolerate",
        incoming(spread(1, "node", nodeTaintsPolicy="Honor")),
        [NODES[0], NODES[1], zoned("node-x", "zone2", taints=[TAINT]), NODES[3]],
        spread_out({"node-a": 1, "node-b": 1, "node-y": 1}),
        [None] * 4,
    ),
    (
        "nodeTaintsPolicy Honor counts a node whose taint the pod tolerates",
        incoming(
            spread(1, "node", nodeTaintsPolicy="Honor"),
            tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}],
        ),
        [NODES[0], NODES[1], zoned("node-x", "zone2", taints=[TAINT]), NODES[3]],
        spread_out({"node-a": 1, "node-b": 1, "node-y": 1}),
        [U, U, None, U],
    ),
    (
        "fewer domains (4) than minDomains (5): the global minimum is 0",
        incoming(spread(2, "node", minDomains=5)),
        NODES,
        spread_out({"node-a": 2, "node-b": 2, "node-x": 1, "node-y": 1}),
        [U, U, None, None],
    ),
    (
        "as many domains as minDomains: the real minimum (1)",
        incoming(spread(2, "node", minDomains=4)),
        NODES,
        spread_out({"node-a": 2, "node-b": 2, "node-x": 1, "node-y": 1}),
        [None] * 4,
    ),
    (
        "matchLabelKeys: only pods of the same revision count",
        incoming(spread(1, "node", matchLabelKeys=["rev"]), labels={"foo": "", "rev": "2"}),
        NODES,
        spread_out({"node-a": 2}, {"foo": "", "rev": "1"})
        + spread_out({"node-x": 1}, {"foo": "", "rev": "2"}),
        [None, None, U, None],
    ),
    (
        "two constraints, zones at 3/3 and nodes at 2/1/0/3",
        incoming(spread(1, "zone"), spread(1, "node")),
        NODES,
        spread_out({"node-a": 2, "node-b": 1, "node-y": 3}),
        [U, U, None, U],
    ),
    (
        "ScheduleAnyway constraints are not Filter's business",
        incoming(spread(1, "zone"), spread(1, "node", "ScheduleAnyway")),
        NODES,
        spread_out({"node-a": 2, "node-b": 1, "node-y": 3}),
        [None] * 4,
    ),
    (
        "an empty labelSelector counts nothing (kube-scheduler's countPodsMatchSelector)",
        incoming(spread(1, "node", selector={})),
        NODES,
        spread_out({"node-a": 3}),
        [None] * 4,
    ),
    (
        "no labelSelector matches nothing",
        incoming(spread(1, "node", selector=None)),
        NODES,
        spread_out({"node-a": 3}),
        [None] * 4,
    ),
]


@pytest.mark.parametrize(
    ("incoming_pod", "nodes", "pods", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_filter(incoming_pod: objects_pb2.Pod, nodes: list, pods: list, want: list) -> None:
    assert run_filter(incoming_pod, nodes, pods) == want


def test_terminating_pods_do_not_count() -> None:
    going = placed("a1", "node-a")
    going.metadata.deletion_timestamp.seconds = 1
    assert run_filter(incoming(spread(1, "node")), NODES, [going]) == [None] * 4
    assert run_filter(incoming(spread(1, "node")), NODES, [placed("a1", "node-a")]) == [U, None, None, None]


def test_pre_filter_skips_a_pod_without_hard_constraints() -> None:
    snap = snapshot_of(NODES)
    plugin = podtopologyspread.new(None, fake_handle(snap))
    for p in (incoming(), incoming(spread(1, "zone", "ScheduleAnyway"))):
        assert plugin.pre_filter(CycleState(), PodInfo(p), snap.list()) == (None, Status(Code.SKIP))


def test_filter_without_node_object_or_state_is_an_error() -> None:
    snap = snapshot_of(NODES)
    plugin = podtopologyspread.new(None, fake_handle(snap))
    state, pod_info = CycleState(), PodInfo(incoming(spread(1, "zone")))
    status = plugin.filter(state, pod_info, snap.get("node-a"))
    assert status is not None and status.code is Code.ERROR
    plugin.pre_filter(state, pod_info, snap.list())
    status = plugin.filter(state, pod_info, NodeInfo())
    assert status is not None and status.code is Code.ERROR


def test_plugin_implements_its_extension_points() -> None:
    plugin = podtopologyspread.new(None, fake_handle(snapshot_of([])))
    for protocol in (PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions):
        assert isinstance(plugin, protocol), protocol
    assert plugin.name == podtopologyspread.NAME == "PodTopologySpread"
    assert plugin.pre_filter_extensions() is plugin
    assert plugin.score_extensions() is plugin


# ------------------------------------------------------------------------- AddPod / RemovePod


def prepared(
    incoming_pod: objects_pb2.Pod, pods: Sequence[objects_pb2.Pod]
) -> tuple[Any, CycleState, PodInfo, Any]:
    snap = snapshot_of(NODES, pods)
    plugin = podtopologyspread.new(None, fake_handle(snap))
    state, pod_info = CycleState(), PodInfo(incoming_pod)
    assert plugin.pre_filter(state, pod_info, snap.list()) == (None, None)
    return plugin, state, pod_info, snap


def filter_all(plugin: Any, state: CycleState, pod_info: PodInfo, snap: Any) -> list[Status | None]:
    return [plugin.filter(state, pod_info, info) for info in snap.list()]


def test_add_pod_raises_the_minimum_on_a_clone_only() -> None:
    plugin, state, pod_info, snap = prepared(
        incoming(spread(1, "node")), spread_out({"node-a": 1, "node-b": 1, "node-y": 1})
    )
    assert filter_all(plugin, state, pod_info, snap) == [U, U, None, U]
    cloned = state.clone()
    assert plugin.add_pod(cloned, pod_info, PodInfo(placed("x1", "node-x")), snap.get("node-x")) is None
    assert filter_all(plugin, cloned, pod_info, snap) == [None] * 4
    assert filter_all(plugin, state, pod_info, snap) == [U, U, None, U]


def test_remove_pod_lowers_the_minimum() -> None:
    pods = spread_out({"node-a": 1, "node-b": 1, "node-x": 1, "node-y": 1})
    plugin, state, pod_info, snap = prepared(incoming(spread(1, "node")), pods)
    assert filter_all(plugin, state, pod_info, snap) == [None] * 4
    assert plugin.remove_pod(state, pod_info, PodInfo(pods[0]), snap.get("node-a")) is None
    assert filter_all(plugin, state, pod_info, snap) == [None, U, U, U]


@pytest.mark.parametrize(
    "other",
    [placed("o", "node-x", namespace="other"), placed("o", "node-x", labels={"bar": ""})],
    ids=["another namespace", "not matching the selector"],
)
def test_add_pod_that_does_not_count(other: objects_pb2.Pod) -> None:
    plugin, state, pod_info, snap = prepared(
        incoming(spread(1, "node")), spread_out({"node-a": 1, "node-b": 1, "node-y": 1})
    )
    plugin.add_pod(state, pod_info, PodInfo(other), snap.get("node-x"))
    assert filter_all(plugin, state, pod_info, snap) == [U, U, None, U]


def test_add_pod_without_pre_filter_state_is_an_error() -> None:
    plugin = podtopologyspread.new(None, fake_handle(snapshot_of(NODES)))
    status = plugin.add_pod(
        CycleState(), PodInfo(incoming()), PodInfo(placed("o", "node-a")), NodeInfo(NODES[0])
    )
    assert status is not None and status.code is Code.ERROR


def test_add_and_remove_pods_agree_with_pre_filter_on_the_changed_cluster() -> None:
    """Random AddPod / RemovePod sequences keep counts and minimums exactly as a fresh PreFilter over the
    cluster with those pods would have them (the minimum follows a histogram, not a scan)."""
    rng = random.Random(7)
    nodes = [zoned(f"n{i}", f"z{i % 3}") for i in range(7)]
    the_pod = incoming(spread(1, "zone"), spread(2, "node", minDomains=3))
    pods = {f"p{i}": placed(f"p{i}", f"n{rng.randrange(7)}") for i in range(12)}
    snap = snapshot_of(nodes, pods.values())
    plugin = podtopologyspread.new(None, fake_handle(snap))
    state, pod_info = CycleState(), PodInfo(the_pod)
    plugin.pre_filter(state, pod_info, snap.list())
    state = state.clone()
    for step in range(60):
        if pods and rng.random() < 0.5:
            name = rng.choice(sorted(pods))
            gone = pods.pop(name)
            plugin.remove_pod(state, pod_info, PodInfo(gone), snap.get(gone.spec.node_name))
        else:
            new = placed(f"q{step}", f"n{rng.randrange(7)}")
            pods[new.metadata.name] = new
            plugin.add_pod(state, pod_info, PodInfo(new), snap.get(new.spec.node_name))
        fresh_snap = snapshot_of(nodes, pods.values())
        fresh = podtopologyspread.new(None, fake_handle(fresh_snap))
        fresh_state = CycleState()
        fresh.pre_filter(fresh_state, pod_info, fresh_snap.list())
        assert filter_all(plugin, state, pod_info, snap) == filter_all(
            fresh, fresh_state, pod_info, fresh_snap
        )


# ------------------------------------------------------------------ the snapshot changing under it


def test_counts_follow_the_cluster_across_cycles() -> None:
    """The per-workload counts are kept across cycles and recomputed only for changed nodes: after random
    pod, label and node changes they must equal a from-scratch computation."""
    rng = random.Random(11)
    cache = Cache(clock=FakeClock())
    nodes = {f"n{i}": zoned(f"n{i}", f"z{i % 3}") for i in range(8)}
    for n in nodes.values():
        cache.add_node(n)
    pods: dict[str, objects_pb2.Pod] = {}
    snap = Snapshot()
    handle = fake_handle(snap)
    plugin = podtopologyspread.new(None, handle)
    the_pod = PodInfo(incoming(spread(1, "zone"), spread(1, "node")))
    for step in range(80):
        action = rng.choice(["add pod", "add pod", "remove pod", "relabel node", "remove node", "add node"])
        if action == "add pod" and nodes:
            new = placed(f"p{step}", rng.choice(sorted(nodes)), labels=rng.choice([{"foo": ""}, {"bar": ""}]))
            pods[new.metadata.name] = new
            cache.add_pod(new)
        elif action == "remove pod" and pods:
            cache.remove_pod(pods.pop(rng.choice(sorted(pods))))
        elif action == "relabel node" and nodes:
            name = rng.choice(sorted(nodes))
            relabelled = zoned(name, rng.choice(["z0", "z1", "z2", None]))
            cache.update_node(nodes[name], relabelled)
            nodes[name] = relabelled
        elif action == "remove node" and nodes:
            name = rng.choice(sorted(nodes))
            for key in [k for k, p in pods.items() if p.spec.node_name == name]:
                cache.remove_pod(pods.pop(key))
            cache.remove_node(nodes.pop(name))
        else:
            name = f"m{step}"
            nodes[name] = zoned(name, rng.choice(["z0", "z1", "z3"]))
            cache.add_node(nodes[name])
        cache.update_snapshot(snap)
        state = CycleState()
        plugin.pre_filter(state, the_pod, snap.list())
        fresh = podtopologyspread.new(None, handle)
        fresh_state = CycleState()
        fresh.pre_filter(fresh_state, the_pod, snap.list())
        assert filter_all(plugin, state, the_pod, snap) == filter_all(fresh, fresh_state, the_pod, snap), step


# --------------------------------------------------------------------------------- the batch Filter


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(["zone1", "zone2", "zone3", None]), min_size=1, max_size=40),
    st.lists(st.tuples(st.integers(0, 39), st.booleans()), max_size=60),
    st.lists(st.tuples(st.sampled_from(["zone", "node"]), st.integers(1, 3)), min_size=1, max_size=2),
    st.integers(0, 39),
)
def test_the_batch_filter_decides_as_filter_on_every_node(
    zones: list[str | None], pods: list[tuple[int, bool]], constraints: list[tuple[str, int]], first: int
) -> None:
    """Per distinct combination of topology values (zones repeat, hostnames do not) as per node."""
    nodes = [zoned(f"n{i}", zone) for i, zone in enumerate(zones)]
    placed_pods = [placed(f"p{k}", f"n{i % len(nodes)}", None if matching else {"bar": ""})
                   for k, (i, matching) in enumerate(pods)]
    snap = snapshot_of(nodes, placed_pods)
    plugin = podtopologyspread.new(None, fake_handle(snap))
    state, pod_info = CycleState(), PodInfo(incoming(*(spread(skew, key) for key, skew in constraints)))
    plugin.pre_filter(state, pod_info, snap.list())
    expected = [plugin.filter(state, pod_info, info) for info in snap.list()]
    start = first % len(nodes)
    assert plugin.filter_nodes(state, pod_info, snap.rotated(start)) == expected[start:] + expected[:start]
    assert plugin.filter_nodes(state, pod_info, list(snap.list())) == expected  # no rows: node by node


@settings(deadline=None)
@given(st.lists(st.integers(0, 2**40) | st.integers(0, 5), max_size=50))
def test_distinct_signatures_are_found_as_numpy_unique_finds_them(values: list[int]) -> None:
    signatures = np.array(values, dtype=np.int64)
    some, inverse = _distinct(signatures)
    assert sorted(signatures[some].tolist()) == np.unique(signatures).tolist()
    assert signatures[some][inverse].tolist() == values
